"""SIGKILL at every write boundary, then a rerun: no authorized write is lost or made twice.

A real `custodian run` child process writes to a reference hub in this process. The hub holds
write N at one phase; the test SIGKILLs the child there. Before commit the held write is then
rolled back (the hub never made it: the rerun's reconciliation must send it once); after commit
it was made but the answer was lost (the rerun's reconciliation must find it on the hub and
close it without sending it again).
"""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from custodian_hub import ReferenceHub
from custodian_runtime.core.fold.api import Record
from support.runs import hub_get
from support.spine import (
    HOLD_TIMEOUT_S,
    THREE_WRITES,
    WRITE_OPERATIONS,
    WriteHold,
    custodian_cli,
    custodian_events,
    custodian_flags,
    finish,
    held_hub,
    journal,
    of_run,
    run_argv,
    start_run,
    write_plan,
)

BOUNDARIES = [(n, phase) for n in (1, 2, 3) for phase in ("before_commit", "after_commit")]


def _kill_at(tmp_path: Path, hub: ReferenceHub, hold: WriteHold, llm: str) -> str:
    """Start a run, SIGKILL it while the hub holds the chosen write; return its run id."""
    memory = tmp_path / "memory"
    proc = start_run(tmp_path, run_argv(hub.url, llm, memory))
    try:
        assert hold.reached.wait(HOLD_TIMEOUT_S), "the run never reached the held write"
    finally:
        proc.send_signal(signal.SIGKILL)
        code, _, _ = finish(proc)
    assert code == -signal.SIGKILL
    # Before commit the held write is rolled back, as if the hub had died with it.
    hold.release(abort=hold.phase == "before_commit")
    started = [r for r in journal(memory) if r.kind == "run_started"]
    assert len(started) == 1
    return started[0].run_id


@pytest.mark.parametrize(("nth", "phase"), BOUNDARIES, ids=[f"w{n}-{p}" for n, p in BOUNDARIES])
def test_a_killed_run_loses_and_duplicates_no_write(tmp_path: Path, nth: int, phase: str) -> None:
    hold = WriteHold(nth=nth, phase=phase)
    memory = tmp_path / "memory"
    llm = write_plan(tmp_path / "answer.md", THREE_WRITES)
    with held_hub(tmp_path, hold) as hub:
        killed = _kill_at(tmp_path, hub, hold, llm)
        records = journal(memory)
        authorized = of_run(records, killed, "authorized")
        assert [r.data["operation"] for r in authorized] == list(WRITE_OPERATIONS[:nth])
        assert len(of_run(records, killed, "receipt")) == nth - 1
        assert not of_run(records, killed, "finished")

        code, out, err = finish(start_run(tmp_path, run_argv(hub.url, llm, memory, "--force")))
        assert code == 0, err
        rerun = json.loads(out)["run_id"]
        records = journal(memory)

        # The rerun finished exactly the held write, with the killed run's key, before observing.
        reconciled = of_run(records, rerun, "reconciled")
        assert [r.data["index"] for r in reconciled] == [authorized[-1].data["index"]]
        assert reconciled[0].data["idempotency_key"] == authorized[-1].data["idempotency_key"]
        receipts = [r for r in of_run(records, rerun, "receipt") if r.data.get("reconciles")]
        assert len(receipts) == 1 and receipts[0].data["reconciles"] == killed
        resent = [r for r in of_run(records, rerun, "dispatched") if r.data.get("reconciles")]
        if phase == "after_commit" and authorized[-1].data["operation"] == "update_task_status":
            # The task shows its status, which proves nothing: the hub replays its key to a
            # probe (its If-Match is the version it carried, gone now, so it applies nothing).
            assert receipts[0].data["replayed"] is True and len(resent) == 1
        elif phase == "after_commit":
            # The hub already shows the write: closed with a receipt, never sent again.
            assert receipts[0].data["found_on_hub"] is True and resent == []
        else:
            assert receipts[0].data["replayed"] is False and len(resent) == 1
        closed = of_run(records, killed, "finished")
        assert [c.data["status"] for c in closed] == ["interrupted"]
        assert closed[0].data["closed_by"] == rerun

        _assert_exactly_once(hub, records, killed)

        inspect_all = custodian_cli(
            tmp_path, "inspect", "--domain", "website", "--memory", str(memory)
        )
        assert inspect_all.returncode == 0, inspect_all.stdout
        assert inspect_all.stdout.rstrip().endswith("replay: ok")
        inspect_killed = custodian_cli(tmp_path, "inspect", killed, "--memory", str(memory))
        assert inspect_killed.returncode == 0, inspect_killed.stdout
        assert "status    interrupted" in inspect_killed.stdout
        assert f"reconciled at website:{reconciled[0].seq} by run {rerun}" in inspect_killed.stdout
        assert "INCOMPLETE" not in inspect_killed.stdout


def _assert_exactly_once(hub: ReferenceHub, records: tuple[Record, ...], killed: str) -> None:
    """Every authorized write is in the hub once; the hub holds no custodian write unauthorized."""
    authorized = [r for r in records if r.kind == "authorized"]
    ops = [r.data["operation"] for r in authorized]
    events = custodian_events(hub)
    assert len(events) == ops.count("add_progress_event")
    assert sum(f"[custodian run {killed}]" in e["summary"] for e in events) == 1
    flags = custodian_flags(hub, "web-t-2")
    assert len(flags) == ops.count("flag_for_human") == 1
    assert hub_get(hub, "/tasks/web-t-4")["status"] == "done"
    assert ops.count("update_task_status") == 1
    keys = [r.data["idempotency_key"] for r in authorized]
    assert len(keys) == len(set(keys))
    # Every authorized write has exactly one receipt: one answer, one effect.
    receipted = [r.data.get("reconciles") or r.run_id for r in records if r.kind == "receipt"]
    assert len(receipted) == len(authorized)
