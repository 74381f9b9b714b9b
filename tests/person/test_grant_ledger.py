"""A grant's uses across a killed run, through the CLI against a real reference hub.

A run authorizes a write under a grant (`grant_used`, then `authorized by grant:<id>`) and is
SIGKILLed while the hub holds that write. The next run's reconcile finds it on the hub, re-sends
it under the same grant, or closes it with the reason; the grant's uses stay exactly the number
of `grant_used` records, and replay re-derives them from the journal.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from custodian_hub import ReferenceHub
from custodian_runtime.core.digest import canonical_json
from custodian_runtime.core.journal.records import GENESIS, record_hash
from custodian_runtime.journal.lock import RunLock
from support.runs import hub_get
from support.spine import (
    WriteHold,
    custodian_cli,
    finish,
    held_hub,
    journal,
    kill_when_held,
    of_run,
    run_argv,
    start_run,
    write_plan,
)

BLOCK = {
    "observations": ["web-t-4 waits on the vendor."],
    "proposals": [
        {
            "operation": "set_task_status",
            "params": {"task_id": "web-t-4", "status": "blocked"},
            "rationale": "the vendor has not answered",
        }
    ],
}
NOTHING: dict[str, Any] = {"observations": ["Nothing to do."], "proposals": []}


def issue(tmp_path: Path, hub_url: str, memory: Path, *extra: str, **env: str) -> str:
    """`custodian grants issue` for set_task_status; the grant's id."""
    done = custodian_cli(
        tmp_path, "grants", "issue", "--domain", "website", "--operation", "set_task_status",
        "--hub", hub_url, "--memory", str(memory), "--by", "ana", "--reason", "routine blocks",
        "--max", "1", "--expires", "7d", *extra, **env,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout.strip()


def grants(tmp_path: Path, memory: Path, **env: str) -> list[dict[str, Any]]:
    """`custodian grants list --json`."""
    done = custodian_cli(tmp_path, "grants", "list", "--json", "--memory", str(memory), **env)
    assert done.returncode == 0, done.stderr
    return list(json.loads(done.stdout))


def kill_at_write(tmp_path: Path, hub: ReferenceHub, hold: WriteHold, memory: Path) -> str:
    """Run the plan that blocks web-t-4 under a grant; SIGKILL it at the held write."""
    llm = write_plan(tmp_path / "block.md", BLOCK)
    kill_when_held(
        tmp_path,
        run_argv(hub.url, llm, memory, "--force"),
        hold,
        "the run never reached the held write",
    )
    hold.release(abort=hold.phase == "before_commit")
    [started] = [r for r in journal(memory) if r.kind == "run_started"]
    return started.run_id


def rerun(tmp_path: Path, hub_url: str, memory: Path, **env: str) -> dict[str, Any]:
    """A run whose model proposes nothing: only its reconcile acts."""
    llm = write_plan(tmp_path / "nothing.md", NOTHING)
    code, out, err = finish(start_run(tmp_path, run_argv(hub_url, llm, memory, "--force"), **env))
    assert code == 0, err
    return dict(json.loads(out))


def uses(memory: Path, grant: str) -> int:
    """How many grant_used records the journal holds for `grant`."""
    return sum(1 for r in journal(memory) if r.kind == "grant_used" and r.data["grant_id"] == grant)


def assert_clean(tmp_path: Path, memory: Path, *runs: str) -> None:
    """The journal verifies, and replay re-decides each run as recorded."""
    inspected = custodian_cli(tmp_path, "inspect", "--domain", "website", "--memory", str(memory))
    assert inspected.returncode == 0, inspected.stdout + inspected.stderr
    for run in runs:
        replay = custodian_cli(tmp_path, "replay", run, "--memory", str(memory))
        assert replay.returncode == 0, replay.stdout + replay.stderr


def test_a_killed_grant_write_found_on_the_hub_is_one_use(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    hold = WriteHold(nth=1, phase="after_commit")
    with held_hub(tmp_path, hold) as hub:
        grant = issue(tmp_path, hub.url, memory)
        killed = kill_at_write(tmp_path, hub, hold, memory)
        assert [r.data["by"] for r in of_run(journal(memory), killed, "authorized")] == [
            f"grant:{grant}"
        ]
        summary = rerun(tmp_path, hub.url, memory)
        [report] = summary["reconciled"]
        assert report["outcome"] == "found", report
        records = journal(memory)
        # Found by a probe of its key (the If-Match it carried applies nothing): the hub replayed
        # it, under the same grant and no second use.
        [probe] = of_run(records, summary["run_id"], "dispatched")
        assert probe.data["reconciles"] == killed
        [receipt] = of_run(records, summary["run_id"], "receipt")
        assert receipt.data["replayed"] is True
        assert uses(memory, grant) == 1
        [listed] = grants(tmp_path, memory)
        assert (listed["uses"], listed["left"]) == (1, 0)
        assert hub_get(hub, "/tasks/web-t-4")["status"] == "blocked"
        assert_clean(tmp_path, memory, killed, summary["run_id"])


def test_a_killed_grant_write_not_on_the_hub_is_resent_once_under_the_same_grant(
    tmp_path: Path,
) -> None:
    memory = tmp_path / "memory"
    hold = WriteHold(nth=1, phase="before_commit")
    with held_hub(tmp_path, hold) as hub:
        grant = issue(tmp_path, hub.url, memory)
        killed = kill_at_write(tmp_path, hub, hold, memory)
        assert hub_get(hub, "/tasks/web-t-4")["status"] == "in_progress"
        summary = rerun(tmp_path, hub.url, memory)
        [report] = summary["reconciled"]
        assert report["outcome"] == "resent", report
        records = journal(memory)
        [reconciled] = of_run(records, summary["run_id"], "reconciled")
        assert reconciled.data["action"] == "resend"
        assert f"executes under grant {grant}" in reconciled.data["reason"]
        resent = of_run(records, summary["run_id"], "dispatched")
        assert [r.data["reconciles"] for r in resent] == [killed]
        # The use was counted when the killed run authorized it: no second grant_used.
        assert uses(memory, grant) == 1
        assert [g["uses"] for g in grants(tmp_path, memory)] == [1]
        assert hub_get(hub, "/tasks/web-t-4")["status"] == "blocked"
        assert_clean(tmp_path, memory, killed, summary["run_id"])


def test_a_grant_revoked_meanwhile_closes_the_killed_write_with_the_reason(
    tmp_path: Path,
) -> None:
    memory = tmp_path / "memory"
    hold = WriteHold(nth=1, phase="before_commit")
    with held_hub(tmp_path, hold) as hub:
        grant = issue(tmp_path, hub.url, memory)
        killed = kill_at_write(tmp_path, hub, hold, memory)
        done = custodian_cli(
            tmp_path, "grants", "revoke", grant, "--by", "bo", "--reason", "vendor answered",
            "--memory", str(memory),
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        summary = rerun(tmp_path, hub.url, memory)
        [report] = summary["reconciled"]
        assert report["outcome"] == "refused", report
        assert f"grant {grant} is revoked" in report["reason"]
        records = journal(memory)
        assert of_run(records, summary["run_id"], "dispatched") == []
        [failed] = of_run(records, summary["run_id"], "failed")
        assert failed.data["closed"] == "refused" and "revoked" in failed.data["error"]
        assert uses(memory, grant) == 1
        assert hub_get(hub, "/tasks/web-t-4")["status"] == "in_progress"
        assert_clean(tmp_path, memory, killed, summary["run_id"])


def rewrite_journal(
    memory: Path, edit: Callable[[dict[str, Any]], None], drop: str | None = None
) -> None:
    """Edit records in the journal file (or drop those of kind `drop`) and re-chain every hash,
    as someone without the seal key could (a seal stays as it was); the checkpoint is removed."""
    segment = memory / "journal" / "website.jsonl"
    prev = GENESIS
    lines: list[str] = []
    for line in segment.read_text("utf-8").splitlines():
        record = json.loads(line)
        if record["kind"] == drop:
            continue
        edit(record)
        record["seq"] = len(lines) + 1
        record["prev"] = prev
        record["hash"] = prev = record_hash(record)
        lines.append(canonical_json(record) + "\n")
    segment.write_text("".join(lines), "utf-8")
    (memory / "journal" / "website.checkpoint.json").unlink()


def test_replay_re_derives_the_standing_and_shows_a_kept_use_the_journal_does_not_record(
    tmp_path: Path,
) -> None:
    memory = tmp_path / "memory"
    with held_hub(tmp_path, None) as hub:
        grant = issue(tmp_path, hub.url, memory, "--max", "5")
        llm = write_plan(tmp_path / "block.md", BLOCK)
        code, out, err = finish(start_run(tmp_path, run_argv(hub.url, llm, memory, "--force")))
        assert code == 0, err
        run = json.loads(out)
        assert run["items"][0]["grant"] == grant
        assert_clean(tmp_path, memory, run["run_id"])

        def more_uses(record: dict[str, Any]) -> None:
            if record["run_id"] == run["run_id"] and record["kind"] == "plan":
                record["data"]["standing"]["uses"] = {grant: 3}

        rewrite_journal(memory, more_uses)
        assert_clean(tmp_path, memory)  # the chain verifies: only replay can tell
        replay = custodian_cli(tmp_path, "replay", run["run_id"], "--json", "--memory", str(memory))
        assert replay.returncode == 1, replay.stdout + replay.stderr
        shown = json.loads(replay.stdout)["differences"]
        assert {
            "index": -1,
            "operation": "standing",
            "recorded": "kept in the plan record",
            "today": f"the plan record keeps 3 use(s) of grant {grant}, the journal records 0",
        } in shown
        # Ruled with the journal's standing, the item still executes under the grant.
        assert [d for d in shown if d["operation"] != "standing"] == []


K1, K2, K3 = ("1" * 64), ("2" * 64), ("3" * 64)


def test_with_a_seal_key_an_edited_grant_fails_verify_and_is_not_used(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    with held_hub(tmp_path, None) as hub:
        grant = issue(tmp_path, hub.url, memory, CUSTODIAN_SEAL_KEY=K1)

        def more_uses(record: dict[str, Any]) -> None:
            if record["kind"] == "grant_issued":
                record["data"]["grant"]["max_uses"] = 50

        rewrite_journal(memory, more_uses)  # the chain holds; the seal of grant_issued does not
        inspected = custodian_cli(
            tmp_path, "inspect", "--domain", "website", "--memory", str(memory),
            CUSTODIAN_SEAL_KEY=K1,
        )  # fmt: skip
        assert inspected.returncode != 0, inspected.stdout
        assert "seal" in (inspected.stdout + inspected.stderr).lower()
        llm = write_plan(tmp_path / "block.md", BLOCK)
        argv = run_argv(hub.url, llm, memory, "--force")
        code, _, err = finish(start_run(tmp_path, argv, CUSTODIAN_SEAL_KEY=K1))
        assert code == 6, err
        assert "seal" in err.lower()
        assert uses(memory, grant) == 0
        assert hub_get(hub, "/tasks/web-t-4")["status"] == "in_progress"


def _issue_while_busy(tmp_path: Path, hub_url: str, memory: Path, **env: str) -> str:
    """Issue a grant while a run has the domain's lock: kept, sealed, in the domain's inbox."""
    with RunLock(memory, "website", run_id="r-holding-the-domain"):
        grant = issue(tmp_path, hub_url, memory, **env)
    [kept] = list((memory / "inbox" / "website").glob("*.json"))
    assert (json.loads(kept.read_text("utf-8"))["seal"] is None) == (not env)
    assert not any(r.kind == "grant_issued" and r.data["grant"]["id"] == grant
                   for r in journal(memory))  # fmt: skip
    return grant


def test_a_kept_grant_survives_a_key_rotation_and_a_wrong_key_is_refused(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    with held_hub(tmp_path, None) as hub:
        # A first grant, for another task, starts the domain's journal.
        issue(tmp_path, hub.url, memory, "--where", "task_id=web-t-1", CUSTODIAN_SEAL_KEY=K1)
        grant = _issue_while_busy(tmp_path, hub.url, memory, CUSTODIAN_SEAL_KEY=K1)
        llm = write_plan(tmp_path / "block.md", BLOCK)
        argv = run_argv(hub.url, llm, memory, "--force")
        code, _, err = finish(start_run(tmp_path, argv, CUSTODIAN_SEAL_KEY=K3))
        assert code == 6, err
        assert "CUSTODIAN_SEAL_KEY_PREVIOUS" in err and "reseal" in err
        resealed = custodian_cli(
            tmp_path, "journal", "reseal", "--memory", str(memory),
            CUSTODIAN_SEAL_KEY=K2, CUSTODIAN_SEAL_KEY_PREVIOUS=K1,
        )  # fmt: skip
        assert resealed.returncode == 0, resealed.stdout + resealed.stderr
        assert "1 of 1 kept word(s) in the inbox resealed" in resealed.stdout
        code, out, err = finish(start_run(tmp_path, argv, CUSTODIAN_SEAL_KEY=K2))
        assert code == 0, err
        [item] = json.loads(out)["items"]
        assert (item["outcome"], item["grant"]) == ("executed", grant)
        assert not list((memory / "inbox" / "website").glob("*.json"))
        assert uses(memory, grant) == 1
        assert hub_get(hub, "/tasks/web-t-4")["status"] == "blocked"
        assert_clean(tmp_path, memory, json.loads(out)["run_id"])


def test_during_a_rotation_a_kept_grant_sealed_by_the_previous_key_is_accepted(
    tmp_path: Path,
) -> None:
    memory = tmp_path / "memory"
    with held_hub(tmp_path, None) as hub:
        grant = _issue_while_busy(tmp_path, hub.url, memory, CUSTODIAN_SEAL_KEY=K1)
        llm = write_plan(tmp_path / "block.md", BLOCK)
        argv = run_argv(hub.url, llm, memory, "--force")
        rotating = {"CUSTODIAN_SEAL_KEY": K2, "CUSTODIAN_SEAL_KEY_PREVIOUS": K1}
        code, out, err = finish(start_run(tmp_path, argv, **rotating))
        assert code == 0, err
        [item] = json.loads(out)["items"]
        assert (item["outcome"], item["grant"]) == ("executed", grant)


def test_a_kept_grant_is_not_used_until_the_journal_records_it(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    with held_hub(tmp_path, None) as hub:
        grant = _issue_while_busy(tmp_path, hub.url, memory)
        llm = write_plan(tmp_path / "block.md", BLOCK)
        with RunLock(memory, "website", run_id="r-holding-the-domain"):
            argv = run_argv(hub.url, llm, memory, "--force", "--dry-run")
            code, out, err = finish(start_run(tmp_path, argv))
        assert code == 0, err
        [item] = json.loads(out)["items"]
        assert item["outcome"] != "executed" and item.get("grant") is None, item
        assert grants(tmp_path, memory) == []  # not journaled yet
        # The next run journals it first (the domain is free), then runs under it.
        code, out, err = finish(start_run(tmp_path, run_argv(hub.url, llm, memory, "--force")))
        assert code == 0, err
        assert json.loads(out)["items"][0]["grant"] == grant
        assert [g["id"] for g in grants(tmp_path, memory)] == [grant]


def test_a_killed_write_under_a_grant_the_journal_does_not_record_is_flagged_and_refused(
    tmp_path: Path,
) -> None:
    memory = tmp_path / "memory"
    hold = WriteHold(nth=1, phase="before_commit")
    with held_hub(tmp_path, hold) as hub:
        grant = issue(tmp_path, hub.url, memory)
        killed = kill_at_write(tmp_path, hub, hold, memory)
        rewrite_journal(memory, lambda record: None, drop="grant_issued")
        inspected = custodian_cli(
            tmp_path, "inspect", "--domain", "website", "--memory", str(memory)
        )
        assert inspected.returncode != 0, inspected.stdout
        assert f"uses grant {grant}, which the domain's journal does not record" in (
            inspected.stdout
        )
        summary = rerun(tmp_path, hub.url, memory)
        [report] = summary["reconciled"]
        assert report["outcome"] == "refused", report
        assert "the journal does not prove it" in report["reason"]
        assert "does not record" in report["reason"]
        assert of_run(journal(memory), summary["run_id"], "dispatched") == []
        assert of_run(journal(memory), killed, "grant_used")
        assert hub_get(hub, "/tasks/web-t-4")["status"] == "in_progress"


def test_a_grant_for_another_domain_covers_nothing_here(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    with held_hub(tmp_path, None) as hub:
        done = custodian_cli(
            tmp_path, "grants", "issue", "--domain", "platform", "--operation",
            "set_task_status", "--hub", hub.url, "--memory", str(memory), "--by", "ana",
            "--reason", "routine blocks", "--max", "5", "--expires", "7d",
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        llm = write_plan(tmp_path / "block.md", BLOCK)
        code, out, err = finish(start_run(tmp_path, run_argv(hub.url, llm, memory, "--force")))
        assert code == 0, err
        [item] = json.loads(out)["items"]
        assert (item["outcome"], item.get("grant")) == ("queued", None), item
        assert hub_get(hub, "/tasks/web-t-4")["status"] == "in_progress"
