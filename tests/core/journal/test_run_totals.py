"""A domain's running totals (core/journal/totals.py), folded into the checkpoint."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from custodian_runtime.core.fold import api as core_journal
from custodian_runtime.core.fold.checkpoint import empty, fold

T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
DOMAIN = "website"
USAGE = {"input_tokens": 1000, "output_tokens": 200, "cost_usd": 0.0123456}


def _journal() -> list[core_journal.Record]:
    """Run r0 executes a flag, denies a task and queues one; r1 is killed; r2 settles r0's
    second write, which r0 left open."""
    steps: list[tuple[str, str, dict[str, Any]]] = [
        ("r0", "run_started", {}),
        ("r0", "ruling", {"index": 0, "operation": "flag_for_human", "outcome": "execute"}),
        ("r0", "ruling", {"index": 1, "operation": "create_task", "outcome": "deny"}),
        ("r0", "ruling", {"index": 2, "operation": "create_task", "outcome": "queue"}),
        ("r0", "ruling", {"index": 3, "operation": "update_task_status", "outcome": "execute"}),
        ("r0", "authorized", {"index": 0, "operation": "flag_for_human"}),
        ("r0", "receipt", {"index": 0, "status_code": 201}),
        ("r0", "queued", {"index": 2, "approval_id": "apr-1"}),
        ("r0", "authorized", {"index": 3, "operation": "update_task_status"}),
        ("r0", "unknown", {"index": 3, "error": "no answer"}),
        ("r0", "finished", {"status": "completed", "exit_code": 5, "usage": USAGE}),
        ("r1", "run_started", {}),
        ("r1", "finished", {"status": "interrupted", "exit_code": None, "closed_by": "r2"}),
        ("r2", "run_started", {}),
        ("r2", "stale", {"index": 3, "reconciles": "r0", "error": "moved"}),
        ("r2", "finished", {"status": "completed", "exit_code": 0, "usage": USAGE}),
    ]
    records: list[core_journal.Record] = []
    for n, (run, kind, data) in enumerate(steps):
        prev = records[-1] if records else None
        at = T0 + timedelta(minutes=n)
        records.append(core_journal.make_record(prev, run, DOMAIN, kind, at, data))
    return records


def test_totals_count_runs_writes_and_cost_once_each() -> None:
    totals = fold(empty(DOMAIN), _journal()).totals
    assert totals.runs == {"completed 5": 1, "interrupted none": 1, "completed 0": 1}
    assert totals.writes == {
        "flag_for_human executed": 1,
        "create_task denied": 1,
        "create_task queued": 1,
        # Settled by a later run: the operation comes from the authorization the checkpoint kept.
        "update_task_status stale": 1,
    }
    assert (totals.input_tokens, totals.output_tokens) == (2000, 400)
    assert totals.first_run_at == "2026-11-30T12:10:00.000000Z"  # r0's finished record
    assert totals.cost_micro_usd == 2 * 12346  # whole micro-dollars, so chunks add up exactly


def test_folding_record_by_record_equals_folding_at_once() -> None:
    records = _journal()
    at_once = fold(empty(DOMAIN), records)
    checkpoint = empty(DOMAIN)
    for record in records:
        checkpoint = fold(checkpoint, [record])
    assert checkpoint.totals == at_once.totals
    assert checkpoint.totals.runs  # a fold that counted nothing would pass the line above too
