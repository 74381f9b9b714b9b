"""One outcome per plan item: what act did with each ruling, as values every report renders.

The note, `--json`, the terminal summary and the journal's counts are all rendered from these
outcomes, matched by plan item index, so a report cannot disagree with what happened.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from custodian_runtime.core.authority.authorize import ReasonCode, Ruling
from custodian_runtime.core.contract import DomainSummary, Task
from custodian_runtime.core.journal.kinds import RulingRecord
from custodian_runtime.core.operations import status_writes

OutcomeKind = Literal[
    "executed",  # the hub took the write (hub_id)
    "failed",  # the hub refused it or could not be reached (error)
    "stale",  # the task changed under the run: nothing written (error, current_status)
    "unknown",  # no answer came (deadline, lost connection, signal): open until settled (error)
    "not_sent",  # a signal stopped the run before the write was authorized
    "queued",  # waits for a person (approval_id)
    "denied",  # refused by the rules (reason)
    "would_execute",  # dry run
    "would_queue",  # dry run
]

# The lists `--json` prints and the counts the journal keeps, for a run and for a dry run.
RUN_KINDS: tuple[OutcomeKind, ...] = ("executed", "queued", "denied", "failed", "stale")
DRY_RUN_KINDS: tuple[OutcomeKind, ...] = ("would_execute", "would_queue", "denied")


@dataclass(frozen=True)
class ItemOutcome:
    """What happened to one plan item; `reason` is always the ruling's sentence."""

    index: int
    operation: str
    target: str | None
    kind: OutcomeKind
    reason: str
    hub_id: str | None = None
    approval_id: str | None = None
    error: str | None = None
    current_status: str | None = None
    # The ruling's reason code and clause (core/authority/authorize.py), for what a person reads.
    code: ReasonCode = "stated"
    clause: str | None = None
    # The grant an approvable item ran under without a card (core/standing/rule.py).
    grant: str | None = None
    # Why a queued item waits, in one line, as its approval item keeps it (core/approvals/).
    waiting: str | None = None

    @classmethod
    def of(
        cls,
        ruling: Ruling,
        kind: OutcomeKind,
        *,
        hub_id: str | None = None,
        approval_id: str | None = None,
        error: str | None = None,
        current_status: str | None = None,
    ) -> ItemOutcome:
        """The outcome of `ruling`'s item."""
        item = ruling.item
        return cls(
            index=item.index,
            operation=item.operation,
            target=item.target,
            kind=kind,
            reason=ruling.reason,
            hub_id=hub_id,
            approval_id=approval_id,
            error=error,
            current_status=current_status,
            code=ruling.code,
            clause=ruling.clause,
            grant=ruling.grant,
        )


def denied(rulings: Iterable[Ruling]) -> tuple[ItemOutcome, ...]:
    """The outcome of every `deny` ruling."""
    return tuple(ItemOutcome.of(r, "denied") for r in rulings if r.outcome == "deny")


def would(rulings: Iterable[Ruling]) -> tuple[ItemOutcome, ...]:
    """A dry run's outcomes: what would execute, queue, or be denied."""
    kinds: dict[str, OutcomeKind] = {
        "execute": "would_execute",
        "queue": "would_queue",
        "deny": "denied",
    }
    return tuple(ItemOutcome.of(r, kinds[r.outcome]) for r in rulings)


def assemble(rulings: Sequence[Ruling], *groups: Iterable[ItemOutcome]) -> tuple[ItemOutcome, ...]:
    """Exactly one outcome per ruling, in plan order; a missing or doubled item is a bug."""
    outcomes = sorted((o for g in groups for o in g), key=lambda o: o.index)
    want = sorted(r.item.index for r in rulings)
    got = [o.index for o in outcomes]
    if got != want:
        raise ValueError(f"one outcome per plan item expected: items {want}, outcomes {got}")
    return tuple(outcomes)


def of_kind(outcomes: Iterable[ItemOutcome], kind: OutcomeKind) -> tuple[ItemOutcome, ...]:
    """The outcomes of one kind, in plan order."""
    return tuple(o for o in outcomes if o.kind == kind)


def counts(outcomes: Sequence[ItemOutcome], *, dry_run: bool = False) -> dict[str, int]:
    """How many items got each outcome; `unknown` and `not_sent` only when there is one."""
    kinds = DRY_RUN_KINDS if dry_run else RUN_KINDS
    tally: dict[str, int] = {kind: len(of_kind(outcomes, kind)) for kind in kinds}
    for rare in ("unknown", "not_sent"):
        found = len(of_kind(outcomes, rare))
        if found:
            tally[rare] = found
    return tally


def task_changed(observed: Task, current: Task) -> str | None:
    """Why a status write planned on `observed` must not go out now (None: unchanged).

    Used against a hub without task versions: the task is read again just before the write, and
    any change of status or `updated_at` makes the write stale. An answer about another task
    proves nothing about this one, so it is stale too (fail closed).
    """
    if current.id != observed.id:
        return (
            f"the hub answered task {current.id} when asked for task {observed.id}; nothing was "
            "written, and the next run plans from the hub's state"
        )
    if current.status == observed.status and current.updated_at == observed.updated_at:
        return None
    return stale_message(observed.status, current.status)


def stale_message(observed_status: str, current_status: str | None) -> str:
    """The sentence a person reads for a stale write."""
    if current_status is None:
        now = "the hub did not say what it is now"
    elif current_status == observed_status:
        now = f"still {current_status} on the hub, but changed since"
    else:
        now = f"it is now {current_status} on the hub"
    return (
        f"the task changed under the run (observed {observed_status}; {now}); nothing was "
        "written, and the next run plans from the new state"
    )


def planned_on(ruling: Ruling, observed: DomainSummary) -> Task | None:
    """The observed task a status write was planned on (None for every other write)."""
    if ruling.item.operation not in status_writes():
        return None
    task_id = ruling.item.params.get("task_id")
    tasks = (t for ws in observed.workstreams for t in ws.tasks if t.id == task_id)
    return next(tasks, None)


def ruling_data(ruling: Ruling) -> RulingRecord:
    """The journal's `ruling` record for one item."""
    item = ruling.item
    record = RulingRecord(
        index=item.index,
        operation=item.operation,
        target=item.target,
        params=dict(item.params),
        fingerprint=item.fingerprint,
        outcome=ruling.outcome,
        reason=ruling.reason,
    )
    if ruling.code != "held_deference":
        return record  # the code is journaled for a hold only: `policy report` counts them
    return RulingRecord(**record.model_dump(exclude_unset=True), code=ruling.code)


def ruling_counts(rulings: Iterable[Ruling]) -> dict[str, int]:
    """How many items each ruling outcome got."""
    counts = {"execute": 0, "queue": 0, "deny": 0}
    for r in rulings:
        counts[r.outcome] += 1
    return counts
