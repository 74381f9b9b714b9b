"""Modes per operation, set by a person through the CLI, narrowing what a run does on a real hub."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from test_grants import _block, _issue, _items_of_run

from custodian_runtime.journal.lock import RunLock
from custodian_runtime.journal.person.queue import ApprovalStore
from custodian_runtime.journal.person.standing_store import StandingStore
from support.runs import hub_get
from support.spine import custodian_cli, custodian_events, held_hub, journal

EVENT = {
    "operation": "add_progress_event",
    "params": {
        "workstream_id": "web-ws-2",
        "event_type": "note",
        "rests_on": ["web-t-5"],
        "summary": "Blog migration is waiting on the image links fix.",
    },
    "rationale": "keeps the log current",
}


def _set(tmp_path: Path, memory: Path, op: str, mode: str) -> Any:
    return custodian_cli(
        tmp_path, "policy", "set", "--domain", "website", "--operation", op, "--mode", mode,
        "--by", "ana", "--reason", "onboarding", "--memory", str(memory),
    )  # fmt: skip


def _modes(tmp_path: Path, memory: Path) -> dict[str, str]:
    done = custodian_cli(
        tmp_path, "policy", "show", "--domain", "website", "--json", "--memory", str(memory)
    )
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout)["modes"])


def test_defaults_and_auto_on_an_approvable_operation_is_refused_with_exit_2(
    tmp_path: Path,
) -> None:
    memory = tmp_path / "memory"
    modes = _modes(tmp_path, memory)
    assert modes["add_progress_event"] == "auto" and modes["set_task_status"] == "ask"
    refused = _set(tmp_path, memory, "set_task_status", "auto")
    assert refused.returncode == 2 and "cannot be set to auto" in refused.stderr
    unknown = _set(tmp_path, memory, "drop_database", "off")
    assert unknown.returncode == 2 and "unknown operation" in unknown.stderr
    assert _modes(tmp_path, memory)["set_task_status"] == "ask"


def test_ask_queues_a_sanctioned_write(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    with held_hub(tmp_path, None) as hub:
        assert _set(tmp_path, memory, "add_progress_event", "ask").returncode == 0
        assert _modes(tmp_path, memory)["add_progress_event"] == "ask"
        [item] = _items_of_run(tmp_path, hub.url, memory, EVENT)
        assert item["outcome"] == "queued", item
        assert "set add_progress_event to ask (ana: onboarding)" in item["reason"]
        assert custodian_events(hub) == []
        approved = custodian_cli(
            tmp_path, "approvals", "approve", item["approval_id"], "--by", "ana",
            "--hub", hub.url, "--memory", str(memory),
        )  # fmt: skip
        assert approved.returncode == 0, approved.stdout + approved.stderr
        assert len(custodian_events(hub)) == 1


def test_shadow_records_what_would_have_happened_and_writes_nothing(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    with held_hub(tmp_path, None) as hub:
        _set(tmp_path, memory, "add_progress_event", "shadow")
        _set(tmp_path, memory, "set_task_status", "shadow")
        event, block = _items_of_run(tmp_path, hub.url, memory, EVENT, _block("web-t-4"))
        assert "would have executed" in event["reason"] and event["outcome"] == "denied"
        assert "would have queued" in block["reason"] and block["outcome"] == "denied"
        assert custodian_events(hub) == []
        assert ApprovalStore(memory).all("website", verify=False) == []


def test_off_denies_with_the_reason_and_a_grant_does_not_lift_it(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    with held_hub(tmp_path, None) as hub:
        _issue(tmp_path, hub.url, memory, "--max", "3", "--expires", "7d")
        assert _set(tmp_path, memory, "set_task_status", "off").returncode == 0
        [item] = _items_of_run(tmp_path, hub.url, memory, _block("web-t-4"))
        assert item["outcome"] == "denied"
        assert "set set_task_status to off (ana: onboarding)" in item["reason"]
        assert hub_get(hub, "/tasks/web-t-4")["status"] == "in_progress"


def test_decisions_made_while_a_run_holds_the_domain_are_recorded_then_journaled(
    tmp_path: Path,
) -> None:
    memory = tmp_path / "memory"
    with held_hub(tmp_path, None) as hub:
        grant = _issue(tmp_path, hub.url, memory, "--max", "3", "--expires", "7d")
        with RunLock(memory, "website", run_id="r-busy"):
            setting = _set(tmp_path, memory, "add_progress_event", "shadow")
            assert setting.returncode == 0 and "busy" in setting.stdout
            revoke = custodian_cli(
                tmp_path, "grants", "revoke", grant, "--by", "bo", "--reason", "stop",
                "--memory", str(memory),
            )  # fmt: skip
            assert revoke.returncode == 0 and "r-busy" in revoke.stdout
            assert len(StandingStore(memory).waiting("website")) == 2
            assert "policy_set" not in {r.kind for r in journal(memory)}
        # The next run journals both before it starts; the revoke and the mode bind it.
        event, block = _items_of_run(tmp_path, hub.url, memory, EVENT, _block("web-t-4"))
        assert event["outcome"] == "denied" and block["outcome"] == "queued"
        assert StandingStore(memory).waiting() == []
        kinds = [r.kind for r in journal(memory)]
        assert kinds.count("policy_set") == 1 and kinds.count("grant_revoked") == 1


def test_a_plan_item_that_would_change_a_mode_or_a_grant_is_denied(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    with held_hub(tmp_path, None) as hub:
        tries = [
            {"operation": "set_policy", "params": {"operation": "set_task_status", "mode": "auto"}},
            {"operation": "issue_grant", "params": {"operation": "create_task", "max": 99}},
        ]
        for item in _items_of_run(tmp_path, hub.url, memory, *tries):
            assert item["outcome"] == "denied", item
            assert "a person's decisions" in item["reason"]
        assert ApprovalStore(memory).all("website", verify=False) == []
        assert _modes(tmp_path, memory)["set_task_status"] == "ask"


def test_the_agreement_report_counts_decisions_and_grants_issue_shows_it(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    with held_hub(tmp_path, None) as hub:
        _items_of_run(tmp_path, hub.url, memory, _block("web-t-4"), _block("web-t-1"))
        pending = ApprovalStore(memory).all("website", verify=False)
        first, second = sorted(pending, key=lambda i: str(i.params["task_id"]))
        mem = ["--memory", str(memory)]
        approve = custodian_cli(
            tmp_path, "approvals", "approve", second.id, "--by", "ana", "--hub", hub.url, *mem
        )
        assert approve.returncode == 0, approve.stdout + approve.stderr
        reject = custodian_cli(
            tmp_path, "approvals", "reject", first.id, "--by", "ana", "--reason", "no", *mem
        )
        assert reject.returncode == 0, reject.stdout + reject.stderr
        report = custodian_cli(tmp_path, "policy", "report", "--domain", "website", "--json", *mem)
        assert report.returncode == 0, report.stderr
        [row] = json.loads(report.stdout)["operations"]
        assert (row["operation"], row["proposals"], row["approved"], row["rejected"]) == (
            "set_task_status", 2, 1, 1,
        )  # fmt: skip
        assert row["agreement"] == 0.5 and row["suggest"] is None
        issued = custodian_cli(
            tmp_path, "grants", "issue", "--domain", "website", "--operation", "set_task_status",
            "--max", "2", "--expires", "1d", "--hub", hub.url, "--by", "ana", "--reason", "x",
            "--json", *mem,
        )  # fmt: skip
        assert issued.returncode == 0, issued.stderr
        assert "set_task_status: 2 proposals, 1 approved, 1 rejected" in issued.stderr
        assert json.loads(issued.stdout)["id"].startswith("grant-")


def test_with_a_seal_key_a_kept_decision_that_was_edited_is_refused(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    key = {"CUSTODIAN_SEAL_KEY": "s" * 40}
    with RunLock(memory, "website", run_id="r-busy"):
        setting = custodian_cli(
            tmp_path, "policy", "set", "--domain", "website", "--operation", "flag_for_human",
            "--mode", "off", "--by", "ana", "--reason", "noisy", "--memory", str(memory), **key,
        )  # fmt: skip
        assert setting.returncode == 0, setting.stderr
    [kept] = list((memory / "inbox" / "website").glob("*.json"))
    assert json.loads(kept.read_text("utf-8"))["seal"]
    kept.write_text(kept.read_text("utf-8").replace('"off"', '"auto"'), "utf-8")
    show = custodian_cli(
        tmp_path, "policy", "set", "--domain", "website", "--operation", "create_task",
        "--mode", "shadow", "--by", "ana", "--reason", "x", "--memory", str(memory), **key,
    )  # fmt: skip
    assert show.returncode == 6 and "not sealed with the seal key" in show.stderr


def test_all_sets_every_operation_at_once_and_queues_everything(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    refused = _set(tmp_path, memory, "all", "auto")
    assert refused.returncode == 2 and "cannot be set to auto" in refused.stderr
    assert _modes(tmp_path, memory)["add_progress_event"] == "auto"  # nothing was set
    with held_hub(tmp_path, None) as hub:
        done = _set(tmp_path, memory, "all", "ask")
        assert done.returncode == 0 and "every operation set to ask by ana" in done.stdout
        assert set(_modes(tmp_path, memory).values()) == {"ask"}
        [event] = _items_of_run(tmp_path, hub.url, memory, EVENT)
        assert event["outcome"] == "queued", event
        assert custodian_events(hub) == []
    person_runs = {r.run_id for r in journal(memory) if r.kind == "policy_set"}
    assert len(person_runs) == 1  # one person's decision, one run of its own in the journal
