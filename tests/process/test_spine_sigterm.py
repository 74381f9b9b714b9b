"""SIGTERM while a write is in flight: finish that write, send no other, close the run cleanly."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

from support.runs import hub_get
from support.spine import (
    HOLD_TIMEOUT_S,
    THREE_WRITES,
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

QUIET = {"observations": ["Nothing to do."]}


def test_sigterm_drains_the_write_in_flight_and_sends_no_other(tmp_path: Path) -> None:
    hold = WriteHold(nth=2, phase="before_commit")
    memory = tmp_path / "memory"
    llm = write_plan(tmp_path / "answer.md", THREE_WRITES)
    with held_hub(tmp_path, hold) as hub:
        proc = start_run(tmp_path, run_argv(hub.url, llm, memory))
        assert hold.reached.wait(HOLD_TIMEOUT_S), "the run never reached the held write"
        proc.send_signal(signal.SIGTERM)
        hold.release()
        code, out, err = finish(proc)
        assert code == 143, err
        summary = json.loads(out)
        assert summary["status"] == "interrupted"
        run_id = summary["run_id"]

        records = journal(memory)
        ops = [r.data["operation"] for r in of_run(records, run_id, "authorized")]
        assert ops == ["add_progress_event", "update_task_status"]
        assert len(of_run(records, run_id, "receipt")) == 2  # the write in flight got its answer
        assert of_run(records, run_id, "failed") == []
        finished = of_run(records, run_id, "finished")
        assert [f.data["status"] for f in finished] == ["interrupted"]
        assert finished[0].data["exit_code"] == 143
        assert of_run(records, run_id, "note_written")
        note = Path(summary["note"]).read_text(encoding="utf-8")
        assert 'status: "interrupted"' in note and "not yet sent were not sent" in note
        assert "Authorized but not sent (1)" in note and "but failed" not in note
        assert finished[0].data["counts"] == {
            "executed": 2,
            "queued": 0,
            "denied": 0,
            "failed": 0,
            "stale": 0,
            "not_sent": 1,
        }
        assert [i["outcome"] for i in summary["items"]] == ["executed", "executed", "not_sent"]
        assert hub_get(hub, "/tasks/web-t-4")["status"] == "done"
        assert custodian_flags(hub, "web-t-2") == []
        assert len(hold.seen) == 4  # two writes, each before and after commit; no third

        # The next run has nothing to reconcile, and the write never authorized stays unmade.
        quiet = write_plan(tmp_path / "quiet.md", QUIET)
        code, out, err = finish(start_run(tmp_path, run_argv(hub.url, quiet, memory, "--force")))
        assert code == 0, err
        records = journal(memory)
        assert of_run(records, json.loads(out)["run_id"], "reconciled") == []
        assert custodian_flags(hub, "web-t-2") == []
        assert len(custodian_events(hub)) == 1
        inspected = custodian_cli(tmp_path, "inspect", run_id, "--memory", str(memory))
        assert inspected.returncode == 0, inspected.stdout
        assert "status    interrupted (exit 143)" in inspected.stdout


def test_a_write_in_flight_outlives_the_abandon_window_and_gets_its_receipt(
    tmp_path: Path,
) -> None:
    # A read is abandoned within 2 s of a signal; a write already sent is not: held 2.5 s past
    # SIGINT, it still finishes, is recorded, and the run then exits 130.
    hold = WriteHold(nth=1, phase="before_commit")
    memory = tmp_path / "memory"
    llm = write_plan(tmp_path / "answer.md", THREE_WRITES)
    with held_hub(tmp_path, hold) as hub:
        proc = start_run(tmp_path, run_argv(hub.url, llm, memory))
        assert hold.reached.wait(HOLD_TIMEOUT_S), "the run never reached the held write"
        proc.send_signal(signal.SIGINT)
        time.sleep(2.5)
        assert proc.poll() is None, "the run gave up on a write in flight"
        hold.release()
        code, out, err = finish(proc)
        assert code == 130, err
        summary = json.loads(out)
        assert summary["status"] == "interrupted"
        records = journal(memory)
        run_id = summary["run_id"]
        [receipt] = of_run(records, run_id, "receipt")
        assert receipt.data["status_code"] == 201
        assert of_run(records, run_id, "failed") == []
        assert len(of_run(records, run_id, "dispatched")) == 1  # nothing new started
        finished = of_run(records, run_id, "finished")
        assert [(f.data["status"], f.data["exit_code"]) for f in finished] == [("interrupted", 130)]
        assert len(custodian_events(hub)) == 1
