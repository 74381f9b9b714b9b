"""Reconcile goes through the one authority: a record is evidence to check, never a permission.

Hole 1: an `authorized` record appended to a valid chain (no ruling, or a ruling for another
domain's task) must never reach the hub. Hole 5: past the hub's 24 h idempotency window a write
left by a killed run is not re-sent; what already landed is found on the hub instead.
"""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from custodian_hub import ReferenceHub, load_seed
from custodian_runtime.core.fold import api as core_journal
from custodian_runtime.core.plan.extract import fingerprint
from custodian_runtime.journal.store import JournalStore
from custodian_runtime.run import run
from custodian_runtime.settings import load_settings
from support.runs import CANON, hub_get, small_dataset
from support.spine import (
    THREE_WRITES,
    WriteHold,
    custodian_cli,
    custodian_events,
    custodian_flags,
    finish,
    held_hub,
    journal,
    kill_when_held,
    of_run,
    run_argv,
    start_run,
    write_plan,
)

QUIET = {"observations": ["Nothing needs doing."]}
CANCEL_OTHER = {"task_id": "plat-t-1", "status": "cancelled"}


def _forge(memory: Path, *, with_ruling: bool) -> None:
    """Append, with a valid hash chain, a write no run of this domain ever decided."""
    store = JournalStore(memory)
    store.read("website")
    writer = store.writer("website", "forged-run", lambda: datetime.now(UTC))
    fp = fingerprint("set_task_status", CANCEL_OTHER)
    if with_ruling:
        writer.append("run_started", {"model_spec": "offline"})
        ruling = {"index": 0, "operation": "set_task_status", "target": "plat-t-1"}
        ruling |= {"params": CANCEL_OTHER, "fingerprint": fp, "outcome": "execute", "reason": "x"}
        writer.append("ruling", ruling)
    writer.append(
        "authorized",
        {
            "index": 0,
            "operation": "set_task_status",
            "params": CANCEL_OTHER,
            "fingerprint": fp,
            "idempotency_key": "custodian-forged-run-0",
            "by": "policy",
        },
    )
    assert core_journal.verify_chain(journal(memory)) == []


@pytest.mark.parametrize("with_ruling", [False, True], ids=["no-ruling", "ruled-elsewhere"])
def test_a_forged_authorized_record_is_never_sent_and_is_closed(
    tmp_path: Path, with_ruling: bool
) -> None:
    memory = tmp_path / "memory"
    llm = write_plan(tmp_path / "answer.md", QUIET)
    with held_hub(tmp_path, None) as hub:
        code, _, err = finish(start_run(tmp_path, run_argv(hub.url, llm, memory)))
        assert code == 0, err
        _forge(memory, with_ruling=with_ruling)

        code, out, err = finish(start_run(tmp_path, run_argv(hub.url, llm, memory)))
        assert code == 0, err
        assert hub_get(hub, "/tasks/plat-t-1")["status"] == "todo"
        summary = json.loads(out)
        [closed] = summary["reconciled"]
        assert closed["outcome"] == "refused" and closed["run"] == "forged-run"
        assert "reconcile" in err and "refused" in err
        records = journal(memory)
        rerun = summary["run_id"]
        assert not [r for r in of_run(records, rerun, "dispatched") if r.data.get("reconciles")]
        [failed] = [r for r in of_run(records, rerun, "failed") if r.data.get("reconciles")]
        assert failed.data["closed"] == "refused" and failed.data["status"] is None
        note = Path(summary["note"]).read_text(encoding="utf-8")
        assert "forged-run" in note and "not sent" in note

        # Closed for good: the next run has nothing left to reconcile.
        code, out, err = finish(start_run(tmp_path, run_argv(hub.url, llm, memory)))
        assert code == 0, err
        assert json.loads(out)["reconciled"] == []
        assert not of_run(journal(memory), json.loads(out)["run_id"], "reconciled")
        inspected = custodian_cli(tmp_path, "inspect", rerun, "--memory", str(memory))
        assert "refused" in inspected.stdout


# --- past the idempotency window ------------------------------------------------------------


class Clock:
    """A hand-moved UTC clock shared by the hub and the in-process rerun."""

    def __init__(self) -> None:
        self.offset = timedelta(0)

    def __call__(self) -> datetime:
        return datetime.now(UTC) + self.offset


def _rerun(tmp_path: Path, hub: ReferenceHub, llm: str, clock: Clock) -> dict[str, Any]:
    flags = {"domain": "website", "hub": hub.url, "llm": llm, "memory": str(tmp_path / "memory")}
    settings = load_settings({**flags, "canon": str(CANON), "force": True}, {}, tmp_path)
    result = run(settings, clock=clock, stderr=io.StringIO())
    assert result.exit_code == 0, result.message
    return result.summary()


@pytest.mark.parametrize("phase", ["after_commit", "before_commit"])
def test_past_the_window_a_killed_write_is_found_or_flagged_never_sent_twice(
    tmp_path: Path, phase: str
) -> None:
    memory = tmp_path / "memory"
    clock = Clock()
    hold = WriteHold(nth=1, phase=phase)  # the progress event on web-t-4
    db = tmp_path / "hub.sqlite3"
    load_seed(db, small_dataset())
    llm = write_plan(tmp_path / "answer.md", THREE_WRITES)
    quiet = write_plan(tmp_path / "quiet.md", QUIET)
    with ReferenceHub(db, on_write=hold, clock=clock) as hub:
        kill_when_held(
            tmp_path, run_argv(hub.url, llm, memory), hold, "the run never reached the held write"
        )
        hold.release(abort=phase == "before_commit")
        [killed] = {r.run_id for r in journal(memory)}
        clock.offset = timedelta(hours=25)  # the next daily run, past the hub's key window

        summary = _rerun(tmp_path, hub, quiet, clock)
        marked = [e for e in custodian_events(hub) if f"[custodian run {killed}]" in e["summary"]]
        assert len(marked) == (1 if phase == "after_commit" else 0)
        [item] = summary["reconciled"]
        records = journal(memory)
        rerun = summary["run_id"]
        assert not [r for r in of_run(records, rerun, "dispatched") if r.data.get("reconciles")]
        if phase == "after_commit":
            assert len(marked) == 1
            assert item["outcome"] == "found" and item["hub_id"] == marked[0]["id"]
            [receipt] = [r for r in of_run(records, rerun, "receipt") if r.data.get("reconciles")]
            assert receipt.data["found_on_hub"] is True
        else:
            assert marked == []
            assert item["outcome"] == "expired"
            flags = custodian_flags(hub, "web-t-4")
            assert len(flags) == 1 and killed in flags[0]["note"]
            note = Path(str(summary["note"])).read_text(encoding="utf-8")
            assert "24 h" in note and killed in note
        inspected = custodian_cli(
            tmp_path, "inspect", "--domain", "website", "--memory", str(memory)
        )
        assert inspected.stdout.rstrip().endswith("replay: ok"), inspected.stdout
