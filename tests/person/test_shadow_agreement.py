"""Shadow items a person later did the same way on the hub, through the CLI on a real hub.

An operation set to shadow is proposed and nothing is written; a person makes the same change on
the hub (HTTP, as any client would); the next run journals one match, the runs after it none; a
change made past 7 days, or another change, is not matched; and `policy report` gives the rate
(approved + shadow matched) / (approved + rejected + shadow items) on a known mix.
"""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
from test_grants import _block, _summary

from custodian_hub import ReferenceHub
from custodian_runtime.core.journal.kinds import Shadowed, ShadowMatched, read_as
from custodian_runtime.journal.person.queue import ApprovalStore
from custodian_runtime.run import run
from custodian_runtime.settings import load_settings
from support.runs import CANON, hub_get
from support.spine import custodian_cli, held_hub, journal, of_run, write_plan

QUIET = {"observations": ["Nothing needs doing."]}


def _set_shadow(tmp_path: Path, memory: Path, op: str = "set_task_status") -> None:
    done = custodian_cli(
        tmp_path, "policy", "set", "--domain", "website", "--operation", op, "--mode", "shadow",
        "--by", "ana", "--reason", "see first", "--memory", str(memory),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


def _person_sets(hub: ReferenceHub, task: str, status: str) -> None:
    httpx.patch(f"{hub.url}/tasks/{task}", json={"status": status}, timeout=5).raise_for_status()


def _report(tmp_path: Path, memory: Path, *extra: str) -> Any:
    done = custodian_cli(
        tmp_path, "policy", "report", "--domain", "website", "--memory", str(memory), *extra
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout) if "--json" in extra else done.stdout


def _in_process(tmp_path: Path, hub: ReferenceHub, plan: dict[str, Any], at: datetime) -> Any:
    """One run on a clock set to `at` (the hub keeps the wall clock)."""
    llm = write_plan(tmp_path / f"plan-{at.timestamp():.0f}.md", plan)
    flags = {"domain": "website", "hub": hub.url, "llm": llm, "memory": str(tmp_path / "memory")}
    settings = load_settings({**flags, "canon": str(CANON), "force": True}, {}, tmp_path)
    result = run(settings, clock=lambda: at, stderr=io.StringIO())
    assert result.exit_code == 0, result.message
    return result.summary()


def test_a_shadow_item_a_person_made_is_matched_once_and_another_change_never(
    tmp_path: Path,
) -> None:
    memory = tmp_path / "memory"
    with held_hub(tmp_path, None) as hub:
        _set_shadow(tmp_path, memory)
        shadowing = _summary(tmp_path, hub.url, memory, _block("web-t-3"), _block("web-t-5"))
        for item in shadowing["items"]:
            assert item["outcome"] == "denied" and "would have queued" in item["reason"], item
        assert hub_get(hub, "/tasks/web-t-3")["status"] == "todo"
        assert ApprovalStore(memory).all("website", verify=False) == []
        kept = [read_as(r, Shadowed) for r in of_run(journal(memory), shadowing["run_id"])
                if r.kind == "shadowed"]  # fmt: skip
        assert [(s.index, s.would, (s.observed or {})["task"]["status"]) for s in kept] == [
            (0, "queue", "todo"), (1, "queue", "todo"),
        ]  # fmt: skip

        _person_sets(hub, "web-t-3", "blocked")  # the same change
        _person_sets(hub, "web-t-5", "in_progress")  # another one
        matching = _summary(tmp_path, hub.url, memory)
        [found] = matching["shadow_matched"]
        assert (found["run"], found["index"], found["hub_id"]) == (
            shadowing["run_id"], 0, "web-t-3",
        )  # fmt: skip
        note = Path(matching["note"]).read_text("utf-8")
        assert "Shadow items a person did the same way" in note
        assert shadowing["run_id"] in note and "`web-t-3`" in note
        [record] = [r for r in journal(memory) if r.kind == "shadow_matched"]
        assert read_as(record, ShadowMatched).run == shadowing["run_id"]

        # Matched once: later runs do not count it again, whatever the hub still shows.
        assert _summary(tmp_path, hub.url, memory)["shadow_matched"] == []
        assert [r.kind for r in journal(memory)].count("shadow_matched") == 1
        [row] = _report(tmp_path, memory, "--json")["operations"]
        assert (row["shadow"], row["shadow_matched"], row["agreement"]) == (2, 1, 0.5)
        for run_id, says in ((shadowing["run_id"], "shadowed: it would queue"),
                             (matching["run_id"], "a person made set_task_status")):  # fmt: skip
            inspected = custodian_cli(tmp_path, "inspect", run_id, "--memory", str(memory))
            assert inspected.returncode == 0, inspected.stdout + inspected.stderr
            assert says in inspected.stdout and "replay: ok" in inspected.stdout
        replay = custodian_cli(tmp_path, "replay", shadowing["run_id"], "--memory", str(memory))
        assert replay.returncode == 0, replay.stdout + replay.stderr


def test_a_change_made_past_seven_days_is_not_matched(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    now = datetime.now(UTC)
    with held_hub(tmp_path, None) as hub:
        _set_shadow(tmp_path, memory)
        for days, item in ((8, _block("web-t-3")), (6, _block("web-t-5", "cancelled"))):
            plan = {"observations": ["Waits."], "proposals": [item]}
            shadowed = _in_process(tmp_path, hub, plan, now - timedelta(days=days))
            assert "would have queued" in shadowed["items"][0]["reason"]
        # Both made now: eight and six days after they were shadowed.
        _person_sets(hub, "web-t-3", "blocked")
        _person_sets(hub, "web-t-5", "cancelled")
        [found] = _in_process(tmp_path, hub, QUIET, now)["shadow_matched"]
        assert found["hub_id"] == "web-t-5"
        assert [r.kind for r in journal(memory)].count("shadow_matched") == 1
        [row] = _report(tmp_path, memory, "--json")["operations"]
        assert (row["shadow"], row["shadow_matched"], row["agreement"]) == (2, 1, 0.5)


def test_the_report_rate_on_a_known_mix_and_the_suggestion_is_only_a_command(
    tmp_path: Path,
) -> None:
    memory = tmp_path / "memory"
    mem = ["--memory", str(memory)]
    now = datetime.now(UTC)
    with held_hub(tmp_path, None) as hub:
        # Expired: queued 20 days ago, past its 14 days, never decided.
        old = {"observations": ["Waits."], "proposals": [_block("web-t-1")]}
        assert _in_process(tmp_path, hub, old, now - timedelta(days=20))["counts"]["queued"] == 1
        queued = _summary(tmp_path, hub.url, memory, _block("web-t-2", "cancelled"),
                          _block("web-t-4"))["queued"]  # fmt: skip
        approve, reject = (q["approval_id"] for q in queued)
        done = custodian_cli(tmp_path, "approvals", "approve", approve, "--by", "ana",
                             "--hub", hub.url, *mem)  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        done = custodian_cli(tmp_path, "approvals", "reject", reject, "--by", "ana",
                             "--reason", "not yet", *mem)  # fmt: skip
        assert done.returncode == 0, done.stderr
        _set_shadow(tmp_path, memory)
        _summary(tmp_path, hub.url, memory, _block("web-t-3"), _block("web-t-5", "cancelled"),
                 _block("web-t-6", "todo"))  # fmt: skip
        _person_sets(hub, "web-t-3", "blocked")
        _person_sets(hub, "web-t-5", "cancelled")
        _person_sets(hub, "web-t-6", "done")  # not what the shadow item would have done
        assert len(_summary(tmp_path, hub.url, memory)["shadow_matched"]) == 2

        [row] = _report(tmp_path, memory, "--json")["operations"]
        mix = {k: row[k] for k in ("proposals", "approved", "rejected", "expired", "shadow")}
        assert mix == {"proposals": 3, "approved": 1, "rejected": 1, "expired": 1, "shadow": 3}
        assert row["shadow_matched"] == 2 and row["decided"] == 5
        assert row["agreement"] == (1 + 2) / (1 + 1 + 3)  # expired counts in neither
        assert row["suggest"] is None  # 5 decided: under the threshold of 10
        text = _report(tmp_path, memory)
        assert "3 shadow (2 done the same by a person); agreement 60%" in text
        # Only the last 30 days by default; a shorter window leaves the old item out.
        [short] = _report(tmp_path, memory, "--json", "--days", "10")["operations"]
        assert (short["proposals"], short["expired"], short["shadow"]) == (2, 0, 3)


def test_shadow_items_a_person_matched_suggest_the_mode_back_to_ask_and_set_nothing(
    tmp_path: Path,
) -> None:
    memory = tmp_path / "memory"
    titles = [f"Check redirect batch {n}" for n in range(10)]
    creates = [
        {"operation": "create_task", "params": {"workstream_id": "web-ws-2", "title": t},
         "rationale": "the migration needs it"}
        for t in titles
    ]  # fmt: skip
    with held_hub(tmp_path, None) as hub:
        _set_shadow(tmp_path, memory, "create_task")
        shadowing = _summary(tmp_path, hub.url, memory, *creates)
        assert {i["outcome"] for i in shadowing["items"]} == {"denied"}
        for title in titles:  # a person creates each, as any client of the hub would
            body = {"workstream_id": "web-ws-2", "title": title}
            httpx.post(f"{hub.url}/tasks", json=body, timeout=5).raise_for_status()
        assert len(_summary(tmp_path, hub.url, memory)["shadow_matched"]) == 10
        [row] = _report(tmp_path, memory, "--json")["operations"]
        assert (row["shadow"], row["shadow_matched"], row["agreement"]) == (10, 10, 1.0)
        command = (
            "custodian policy set --domain website --operation create_task --mode ask "
            f"--memory {memory} --reason='policy report: 10 of 10 shadow items done "
            "the same by a person, lower bound 0.72'"
        )
        assert row["suggest"] == command
        assert f"\n{command}\n" in _report(tmp_path, memory)
        shown = custodian_cli(
            tmp_path, "policy", "show", "--domain", "website", "--json", "--memory", str(memory)
        )
        assert json.loads(shown.stdout)["modes"]["create_task"] == "shadow"  # nothing was set
