"""The authority spine: ruling -> authorized -> dispatched -> receipt, checked over records.

An item's chain closes with `receipt` (the hub took the write), `failed`, `stale` (the task
changed under the run, so nothing was written) or `settled_by_hand` (a person closed it). An
`unknown` step (no answer came) leaves it open for the next run to settle.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from custodian_runtime.core.journal.kinds import ApprovalDecided, RulingRecord
from custodian_runtime.core.journal.records import (
    KINDS,
    PERSON_RUN_FIRST,
    RUN_FIRST_KINDS,
    Problem,
    Record,
)
from custodian_runtime.core.ruling.trace import ItemKey, ItemTrace, Tracker


@dataclass(frozen=True)
class PendingWrite:
    """An authorized write with no receipt, failed or stale record: the next run must settle it.

    `problems` are the spine rules its records break (a write that breaks any is never re-sent);
    `ruling` and `approval` are the records that decided it, when the journal holds them.
    """

    run_id: str
    index: Any
    operation: str
    params: dict[str, Any]
    idempotency_key: str
    fingerprint: str
    authorized_seq: int
    dispatched: bool
    authorized_at: str = ""
    problems: tuple[str, ...] = ()
    ruling: RulingRecord | None = None
    approval: ApprovalDecided | None = None
    # The hub the write was authorized on (core/authority/origin.py), and where it was reached; None
    # in a record from before.
    hub: str | None = None
    hub_at: str | None = None
    # A status write's task as its authorization saw it ({status, updated_at, version}).
    planned_on: dict[str, Any] | None = None
    # The grant it was authorized under (`by` is grant:<id>); its use is already counted.
    grant_id: str | None = None


def verify_spine(records: Sequence[Record]) -> list[Problem]:
    """Every side effect followed its chain, every run is opened and closed; each break is named."""
    tracker = Tracker().walk(records)
    problems = [*_kind_problems(records), *run_structure_problems(records), *tracker.problems]
    for item in tracker.items.values():
        if item.outcome is None:
            problems.append(Problem.of(item.authorized, _unfinished_message(item)))
    return sorted(problems, key=lambda p: p.seq)


def _unfinished_message(item: ItemTrace) -> str:
    if any(step.kind == "unknown" for step in item.steps):
        return (
            "no receipt, failed or stale record: its answer never came (unknown); the next run "
            f"settles it, or a person: custodian journal settle {item.authorized.ref}"
        )
    if item.attempt_run != item.authorized.run_id:
        return (
            f"reconciled by run {item.attempt_run} but still has no receipt, failed or stale record"
        )
    return "no receipt, failed or stale record and no later reconciliation (unfinished)"


def _kind_problems(records: Sequence[Record]) -> list[Problem]:
    return [
        Problem.of(r, f"unknown record kind {r.kind!r}") for r in records if r.kind not in KINDS
    ]


def group_runs(records: Sequence[Record]) -> dict[str, list[Record]]:
    """Records grouped by run id, runs in order of their first record."""
    runs: dict[str, list[Record]] = {}
    for record in records:
        runs.setdefault(record.run_id, []).append(record)
    return runs


def is_approval_run(run: Sequence[Record]) -> bool:
    """A person's run (an approval, a hand settling) has no run_started/finished pair."""
    return bool(run) and run[0].kind in PERSON_RUN_FIRST


def run_structure_problems(records: Sequence[Record]) -> list[Problem]:
    """Each run begins with run_started and ends with finished, unless it is the last one."""
    runs = group_runs(records)
    scheduled = [rid for rid, run in runs.items() if not is_approval_run(run)]
    last = max(scheduled, key=lambda rid: runs[rid][0].seq, default=None)
    problems: list[Problem] = []
    for run_id, run in runs.items():
        if run[0].kind not in RUN_FIRST_KINDS:
            problems.append(Problem.of(run[0], "run begins without a run_started record"))
        problems.extend(_inside_run_problems(run))
        finished = any(r.kind == "finished" for r in run)
        if not is_approval_run(run) and not finished and run_id != last:
            message = "run has no finished record but a later run started (close it as interrupted)"
            problems.append(Problem.of(run[0], message))
    return problems


def _inside_run_problems(run: Sequence[Record]) -> list[Problem]:
    problems: list[Problem] = []
    finished: Record | None = None
    for index, record in enumerate(run):
        if finished is not None:
            problems.append(Problem.of(record, f"record after the run finished at {finished.ref}"))
        if record.kind == "run_started" and index > 0:
            problems.append(Problem.of(record, "second run_started in the same run"))
        if record.kind == "finished" and finished is None:
            finished = record
    return problems


def unfinished_items(records: Sequence[Record]) -> list[PendingWrite]:
    """Authorized writes with no closing record, oldest first, for reconciliation.

    Each carries the spine rules its records break, its ruling and, for an approval run, the
    person's recorded decision: reconcile re-sends only what these prove.
    """
    tracker = Tracker().walk(records)
    return [
        write_of(tracker, key, item) for key, item in tracker.items.items() if item.outcome is None
    ]


def write_of(tracker: Tracker, key: ItemKey, item: ItemTrace) -> PendingWrite:
    """The write `item` (authorized as `key`) as the tracker knows it."""
    run_id, index = key
    data = item.grant
    ruling = tracker.rulings.get(key)
    return PendingWrite(
        run_id=run_id,
        index=index,
        operation=str(data.operation),
        params=dict(data.params or {}),
        idempotency_key=str(data.idempotency_key),
        fingerprint=str(data.fingerprint),
        authorized_seq=item.authorized.seq,
        dispatched=item.dispatched is not None,
        authorized_at=item.authorized.at,
        problems=tuple(tracker.item_problems.get(key, ())),
        ruling=ruling[1] if ruling is not None else None,
        approval=tracker.approvals.get(run_id),
        hub=data.hub,
        hub_at=data.hub_at,
        planned_on=dict(data.planned_on) if data.planned_on is not None else None,
        grant_id=_grant_of(str(data.by)),
    )


def _grant_of(by: str) -> str | None:
    return by.removeprefix("grant:") if by.startswith("grant:") else None
