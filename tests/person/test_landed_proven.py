"""Landed means proven: a person's own change is never taken for Custodian's write.

Against the real reference hub and real `custodian` processes, an approve killed mid-PATCH (the
hub's `on_write` hook). A status the task shows proves nothing, nor does a version that moved by
one: only the hub replaying the write's own key does. Each probe re-sends the key with the
If-Match of the version the write carried, which is gone, so it can apply nothing.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import httpx
from test_decision_settles_first import QUIET, _approve_killed, _queue, _reject

from custodian_runtime.core.fold import api as core_journal
from custodian_runtime.core.journal.kinds import Receipt, read_as
from custodian_runtime.journal.person.queue import ApprovalStore
from support.runs import hub_get
from support.spine import (
    HOLD_TIMEOUT_S,
    THREE_WRITES,
    WriteHold,
    custodian_cli,
    finish,
    held_hub,
    journal,
    run_argv,
    start_run,
    write_plan,
)

DONE = THREE_WRITES["tasks_to_update"]
# The whole call's budget: the held write outlives it, so no answer comes (`unknown`).
CUT_OFF = {"STATE_HUB_MAX_TOTAL_S": "1", "STATE_HUB_MAX_ATTEMPTS": "1"}


def _quiet_run(tmp_path: Path, hub_url: str) -> dict[str, Any]:
    memory = tmp_path / "memory"
    llm = write_plan(tmp_path / "quiet.md", QUIET)
    code, out, err = finish(start_run(tmp_path, run_argv(hub_url, llm, memory, "--force")))
    assert code == 0, err
    summary: dict[str, Any] = json.loads(out)
    return summary


def _by_hand(hub_url: str, status: str = "blocked") -> int:
    """A person sets web-t-4's status on the hub directly; the task's version after."""
    answer = httpx.patch(f"{hub_url}/tasks/web-t-4", json={"status": status}, timeout=5)
    answer.raise_for_status()
    return int(answer.json()["version"])


def _report(tmp_path: Path) -> dict[str, Any]:
    memory = ["--memory", str(tmp_path / "memory")]
    report = custodian_cli(tmp_path, "policy", "report", "--domain", "website", "--json", *memory)
    assert report.returncode == 0, report.stderr
    [row] = [
        r for r in json.loads(report.stdout)["operations"] if r["operation"] == "set_task_status"
    ]
    return dict(row)


def _replays(tmp_path: Path) -> None:
    """`inspect` finds nothing wrong: the spine, the approval items and the replay agree."""
    memory = str(tmp_path / "memory")
    inspected = custodian_cli(tmp_path, "inspect", "--domain", "website", "--memory", memory)
    assert inspected.returncode == 0, inspected.stdout + inspected.stderr
    assert inspected.stdout.rstrip().endswith("replay: ok"), inspected.stdout


def _receipts(memory: Path) -> list[Receipt]:
    return [read_as(r, Receipt) for r in journal(memory) if r.kind == "receipt"]


def test_a_status_a_person_set_by_hand_after_a_reject_keeps_the_item_rejected(
    tmp_path: Path,
) -> None:
    memory = tmp_path / "memory"
    hold = WriteHold(nth=1, phase="before_commit")
    with held_hub(tmp_path, hold) as hub:
        approval = _queue(tmp_path, hub.url, memory)["set_task_status"]
        _approve_killed(tmp_path, hold, approval, hub.url)
        hold.release(abort=True)  # killed mid-PATCH: the status never landed
        rejected = _reject(tmp_path, approval, hub.url)
        assert rejected.returncode == 0, rejected.stdout + rejected.stderr
        version = _by_hand(hub.url)  # later, someone sets the very status by hand

        summary = _quiet_run(tmp_path, hub.url)
        assert summary["late_landings"] == []
        [same] = summary["same_value"]
        # Ruled, then probed: the item is rejected, so its write is not probed (a probe is a
        # re-send); nothing proves who set the status, and the person's decision stands.
        assert same["hub_id"] == "web-t-4" and same["by_other"] is False
        assert "not probed: a person rejected its item" in same["reason"]
        note = Path(str(summary["note"])).read_text(encoding="utf-8")
        assert "nothing proves this write set it" in note and "stands" in note
        assert ApprovalStore(memory).get(approval).status == "rejected"
        assert [r for r in _receipts(memory) if r.reconciles] == []
        # The probe applied nothing: the task is as the person left it.
        assert hub_get(hub, "/tasks/web-t-4")["version"] == version
        row = _report(tmp_path)
        assert (row["approved"], row["rejected"]) == (0, 1)
        assert _quiet_run(tmp_path, hub.url)["same_value"] == []  # said once
        _replays(tmp_path)


def test_a_held_write_that_lands_after_the_reject_is_never_probed(tmp_path: Path) -> None:
    """Ruled, then probed: a probe re-sends the write, and a gateway that drops If-Match would
    apply it, so the write of an item a person rejected is never probed; a person is told."""
    memory = tmp_path / "memory"
    hold = WriteHold(nth=1, phase="before_commit")
    with held_hub(tmp_path, hold) as hub:
        approval = _queue(tmp_path, hub.url, memory)["set_task_status"]
        _approve_killed(tmp_path, hold, approval, hub.url)
        rejected = _reject(tmp_path, approval, hub.url)  # the hub still holds the write
        assert rejected.returncode == 0, rejected.stdout + rejected.stderr
        assert ApprovalStore(memory).get(approval).status == "rejected"
        hold.release()  # ... and then commits it, with its key
        assert hub_get(hub, "/tasks/web-t-4")["status"] == "blocked"

        summary = _quiet_run(tmp_path, hub.url)
        assert summary["late_landings"] == []
        [same] = summary["same_value"]
        assert "not probed: a person rejected its item" in same["reason"]
        assert [r for r in journal(memory) if r.kind == "landing_probe"] == []
        assert [r for r in _receipts(memory) if r.late] == []
        assert ApprovalStore(memory).get(approval).status == "rejected"
        _replays(tmp_path)


def test_an_open_write_whose_status_a_person_set_by_hand_is_not_receipted(
    tmp_path: Path,
) -> None:
    memory = tmp_path / "memory"
    hold = WriteHold(nth=1, phase="before_commit")
    with held_hub(tmp_path, hold) as hub:
        approval = _queue(tmp_path, hub.url, memory)["set_task_status"]
        _approve_killed(tmp_path, hold, approval, hub.url)
        hold.release(abort=True)
        version = _by_hand(hub.url)

        summary = _quiet_run(tmp_path, hub.url)
        [settled] = summary["reconciled"]
        assert settled["outcome"] == "stale" and settled["same_value"] is True
        assert "set by someone else" in settled["reason"]
        assert [r for r in _receipts(memory) if r.reconciles] == []
        assert ApprovalStore(memory).get(approval).status == "pending"
        assert hub_get(hub, "/tasks/web-t-4")["version"] == version
        records = journal(memory)
        [probe] = [r for r in records if r.kind == "reconciled"]
        assert probe.data["action"] == "probe"
        assert [r.kind for r in records].count("same_value") == 1
        # Closed and said once: the next run neither probes again nor reports it.
        after = _quiet_run(tmp_path, hub.url)
        assert after["reconciled"] == [] and after["same_value"] == []
        _replays(tmp_path)


def test_a_reject_after_a_person_set_the_status_by_hand_stands(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    hold = WriteHold(nth=1, phase="before_commit")
    with held_hub(tmp_path, hold) as hub:
        approval = _queue(tmp_path, hub.url, memory)["set_task_status"]
        _approve_killed(tmp_path, hold, approval, hub.url)
        hold.release(abort=True)
        _by_hand(hub.url)
        rejected = _reject(tmp_path, approval, hub.url)
        assert rejected.returncode == 0, rejected.stdout + rejected.stderr
        assert "already landed" not in rejected.stdout
        assert ApprovalStore(memory).get(approval).status == "rejected"
        assert [r for r in _receipts(memory) if r.reconciles] == []
        assert core_journal.unfinished_items(list(journal(memory))) == []
        # The reject probes nothing (a probe is a re-send); the next run says it, once.
        [same] = _quiet_run(tmp_path, hub.url)["same_value"]
        assert "not probed: a person rejected its item" in same["reason"]
        assert _quiet_run(tmp_path, hub.url)["same_value"] == []
        assert _report(tmp_path)["rejected"] == 1
        _replays(tmp_path)


def test_a_reject_sends_nothing_even_when_the_write_had_landed(tmp_path: Path) -> None:
    """A reject is ruled before any probe: nothing of the item is sent again. A write that had
    landed before it is shown to a person by the next run, never proven by a re-send."""
    memory = tmp_path / "memory"
    hold = WriteHold(nth=1, phase="after_commit")  # the hub has committed the status
    with held_hub(tmp_path, hold) as hub:
        approval = _queue(tmp_path, hub.url, memory)["set_task_status"]
        _approve_killed(tmp_path, hold, approval, hub.url)
        hold.release()
        rejected = _reject(tmp_path, approval, hub.url)
        assert rejected.returncode == 0, rejected.stdout + rejected.stderr
        assert ApprovalStore(memory).get(approval).status == "rejected"
        assert [r for r in _receipts(memory) if r.reconciles] == []
        assert [r for r in journal(memory) if r.data.get("action") == "probe"] == []
        [same] = _quiet_run(tmp_path, hub.url)["same_value"]
        assert same["hub_id"] == "web-t-4" and "a person should check it" in same["reason"]
        _replays(tmp_path)


def test_a_runs_unknown_done_a_person_set_by_hand_is_not_receipted(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    hold = WriteHold(nth=1, phase="before_commit")
    plan = {"observations": ["web-t-4 is verified"], "tasks_to_update": DONE}
    with held_hub(tmp_path, hold) as hub:
        llm = write_plan(tmp_path / "done.md", plan)
        proc = start_run(tmp_path, run_argv(hub.url, llm, memory), **CUT_OFF)
        assert hold.reached.wait(HOLD_TIMEOUT_S), "the run never reached its status write"
        threading.Timer(1.5, lambda: hold.release(abort=True)).start()
        code, out, err = finish(proc)
        assert code == 5, err  # no answer came: the write is `unknown`, left open
        [item] = json.loads(out)["items"]
        assert item["outcome"] == "unknown"
        version = _by_hand(hub.url, "done")

        summary = _quiet_run(tmp_path, hub.url)
        [settled] = summary["reconciled"]
        assert settled["outcome"] == "stale" and "set by someone else" in settled["reason"]
        assert [r for r in _receipts(memory) if r.reconciles] == []
        assert hub_get(hub, "/tasks/web-t-4")["version"] == version
        _replays(tmp_path)
