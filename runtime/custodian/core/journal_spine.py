"""The authority spine: ruling -> authorized -> dispatched -> receipt, checked over records.

An item's chain closes with `receipt` (the hub took the write), `failed`, or `stale` (the task
changed under the run, so nothing was written).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from custodian.core.approvals import edited_problem
from custodian.core.journal_records import KINDS, Problem, Record

ItemKey = tuple[str, Any]  # (run that authorized the write, plan item index)
OUTCOME_KINDS = ("receipt", "failed", "stale")


@dataclass
class ItemTrace:
    """Everything the journal says about one authorized write, in file order."""

    authorized: Record
    attempt_run: str
    dispatched: Record | None = None
    outcome: Record | None = None
    steps: list[Record] = field(default_factory=list)

    @property
    def key(self) -> Any:
        """The idempotency key the write was authorized with."""
        return self.authorized.data.get("idempotency_key")


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
    ruling: dict[str, Any] | None = None
    approval: dict[str, Any] | None = None
    # The hub the write was authorized on (core/origin.py); None in a record from before.
    hub: str | None = None


def executed_params(operation: str, params: dict[str, Any], domain: str) -> dict[str, Any]:
    """The params a ruled item is sent with: a decision is recorded in the journal's domain."""
    if operation == "record_decision":
        return {**params, "domain": domain}
    return dict(params)


class _Tracker:
    """Walks the records once, following each item's state and collecting broken rules."""

    def __init__(self) -> None:
        self.items: dict[ItemKey, ItemTrace] = {}
        self.rulings: dict[ItemKey, Record] = {}
        self.approvals: dict[str, Record] = {}
        self.problems: list[Problem] = []
        self.item_problems: dict[ItemKey, list[str]] = {}
        self._handlers: dict[str, Callable[[Record], None]] = {
            "ruling": self._ruling,
            "queued": self._queued,
            "approval_decided": self._approval,
            "authorized": self._authorized,
            "dispatched": self._dispatched,
            "reconciled": self._reconciled,
            "receipt": self._outcome,
            "failed": self._outcome,
            "stale": self._outcome,
        }

    def walk(self, records: Sequence[Record]) -> _Tracker:
        for record in records:
            handler = self._handlers.get(record.kind)
            if handler is not None:
                handler(record)
        return self

    def _flag(self, record: Record, message: str, item: ItemKey | None = None) -> None:
        self.problems.append(Problem.of(record, message))
        if item is not None:
            self.item_problems.setdefault(item, []).append(str(Problem.of(record, message)))

    def _ruling(self, r: Record) -> None:
        key = (r.run_id, r.data.get("index"))
        if key in self.rulings:
            self._flag(r, f"second ruling for item #{key[1]} (first at {self.rulings[key].ref})")
        self.rulings[key] = r
        if r.run_id in self.approvals:
            # An approval run rules on the queued item as stored: one that cannot be the item
            # that was queued (fingerprint, precondition) was edited after it was queued.
            problem = _edited(r)
            if problem is not None:
                self._flag(r, f"the approved item was edited: {problem}", key)

    def _queued(self, r: Record) -> None:
        ruling = self.rulings.get((r.run_id, r.data.get("index")))
        if ruling is None or ruling.data.get("outcome") != "queue":
            self._flag(r, f"queued item #{r.data.get('index')} has no queue ruling in this run")

    def _approval(self, r: Record) -> None:
        self.approvals[r.run_id] = r

    def _authorized(self, r: Record) -> None:
        key = (r.run_id, r.data.get("index"))
        if key in self.items:
            first = self.items[key].authorized.ref
            self._flag(r, f"second authorized record for item #{key[1]} (first at {first})")
            return
        self._check_authority(r, key)
        self.items[key] = ItemTrace(authorized=r, attempt_run=r.run_id)

    def _check_authority(self, r: Record, key: ItemKey) -> None:
        by = str(r.data.get("by"))
        if by.startswith("person:"):
            decided = self.approvals.get(r.run_id)
            if decided is None or decided.data.get("decision") != "approved":
                message = "authorized by a person without an approved approval_decided record"
                self._flag(r, message, key)
        elif by != "policy":
            message = f"unknown authority {by!r} (expected 'policy' or 'person:<name>')"
            self._flag(r, message, key)
            return
        problem = self._ruling_problem(r, key)
        if problem is not None:
            self._flag(r, problem, key)

    def _ruling_problem(self, r: Record, key: ItemKey) -> str | None:
        """Why the run's ruling for the item does not decide this authorized record."""
        ruling = self.rulings.get(key)
        if ruling is None:
            return f"authorized without an earlier ruling for item #{key[1]} in this run"
        if ruling.data.get("outcome") != "execute":
            return (
                f"authorized although the ruling at {ruling.ref} says {ruling.data.get('outcome')}"
            )
        if ruling.data.get("fingerprint") != r.data.get("fingerprint"):
            return f"fingerprint differs from the ruling at {ruling.ref}"
        if ruling.data.get("operation") != r.data.get("operation"):
            return f"operation differs from the ruling at {ruling.ref}"
        ruled = ruling.data.get("params")
        sent = executed_params(str(r.data.get("operation")), dict(ruled or {}), r.domain)
        if not isinstance(ruled, dict) or sent != r.data.get("params"):
            return f"params differ from the ruling at {ruling.ref}"
        return None

    def _lookup(self, r: Record) -> ItemTrace | None:
        origin = r.data.get("reconciles") or r.run_id
        item = self.items.get((origin, r.data.get("index")))
        if item is None:
            self._flag(r, f"{r.kind} without an authorized record for item #{r.data.get('index')}")
        elif item.outcome is not None:
            self._flag(r, f"{r.kind} after the item was closed at {item.outcome.ref}")
            return None
        return item

    def _dispatched(self, r: Record) -> None:
        item = self._lookup(r)
        if item is None:
            return
        key = _key_of(item)
        if r.data.get("idempotency_key") != item.key:
            message = f"idempotency key differs from the authorized record at {item.authorized.ref}"
            self._flag(r, message, key)
        if item.attempt_run != r.run_id:
            message = (
                f"dispatched by a run that did not reconcile the item (run {item.attempt_run} may)"
            )
            self._flag(r, message, key)
        elif item.dispatched is not None:
            self._flag(r, f"second dispatch of the item (first at {item.dispatched.ref})", key)
        item.dispatched = r
        item.steps.append(r)

    def _outcome(self, r: Record) -> None:
        item = self._lookup(r)
        if item is None:
            return
        # A reconciling run may close an item without sending it: found on the hub, or refused.
        closing = bool(r.data.get("found_on_hub") or r.data.get("closed"))
        if closing and item.attempt_run == r.run_id and item.dispatched is None:
            pass
        elif item.dispatched is None or item.dispatched.run_id != r.run_id:
            self._flag(r, f"{r.kind} without a dispatched record before it in this run")
        item.outcome = r
        item.steps.append(r)

    def _reconciled(self, r: Record) -> None:
        origin = r.data.get("run_id_of_the_interrupted_run")
        item = self.items.get((str(origin), r.data.get("index")))
        if item is None:
            self._flag(
                r, f"reconciles item #{r.data.get('index')} of run {origin}, never authorized"
            )
            return
        key = _key_of(item)
        if origin == r.run_id:
            self._flag(r, "a run cannot reconcile its own item", key)
        if item.outcome is not None:
            self._flag(r, f"reconciles an item already closed at {item.outcome.ref}", key)
        if r.data.get("idempotency_key") != item.key:
            message = f"idempotency key differs from the authorized record at {item.authorized.ref}"
            self._flag(r, message, key)
        item.attempt_run = r.run_id
        item.dispatched = None
        item.steps.append(r)


def _edited(r: Record) -> str | None:
    params, stored = r.data.get("params"), r.data.get("precondition")
    if not isinstance(params, dict) or not isinstance(stored, dict):
        return "its params or precondition are not objects"
    operation, fp = str(r.data.get("operation")), str(r.data.get("fingerprint"))
    return edited_problem(operation, params, fp, stored, r.domain)


def _key_of(item: ItemTrace) -> ItemKey:
    return (item.authorized.run_id, item.authorized.data.get("index"))


def trace_items(records: Sequence[Record]) -> dict[ItemKey, ItemTrace]:
    """Each authorized write keyed by (authorizing run, index), with its later steps."""
    return _Tracker().walk(records).items


def verify_spine(records: Sequence[Record]) -> list[Problem]:
    """Every side effect followed its chain, every run is opened and closed; each break is named."""
    tracker = _Tracker().walk(records)
    problems = [*_kind_problems(records), *run_structure_problems(records), *tracker.problems]
    for item in tracker.items.values():
        if item.outcome is None:
            problems.append(Problem.of(item.authorized, _unfinished_message(item)))
    return sorted(problems, key=lambda p: p.seq)


def _unfinished_message(item: ItemTrace) -> str:
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
    """An approval run begins with approval_decided and has no run_started/finished pair."""
    return bool(run) and run[0].kind == "approval_decided"


def run_structure_problems(records: Sequence[Record]) -> list[Problem]:
    """Each run begins with run_started and ends with finished, unless it is the last one."""
    runs = group_runs(records)
    scheduled = [rid for rid, run in runs.items() if not is_approval_run(run)]
    last = max(scheduled, key=lambda rid: runs[rid][0].seq, default=None)
    problems: list[Problem] = []
    for run_id, run in runs.items():
        if run[0].kind not in ("run_started", "approval_decided"):
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
    tracker = _Tracker().walk(records)
    pending: list[PendingWrite] = []
    for (run_id, index), item in tracker.items.items():
        if item.outcome is not None:
            continue
        data = item.authorized.data
        ruling = tracker.rulings.get((run_id, index))
        approval = tracker.approvals.get(run_id)
        pending.append(
            PendingWrite(
                run_id=run_id,
                index=index,
                operation=str(data.get("operation")),
                params=dict(data.get("params") or {}),
                idempotency_key=str(data.get("idempotency_key")),
                fingerprint=str(data.get("fingerprint")),
                authorized_seq=item.authorized.seq,
                dispatched=item.dispatched is not None,
                authorized_at=item.authorized.at,
                problems=tuple(tracker.item_problems.get((run_id, index), ())),
                ruling=dict(ruling.data) if ruling is not None else None,
                approval=dict(approval.data) if approval is not None else None,
                hub=data.get("hub") if isinstance(data.get("hub"), str) else None,
            )
        )
    return pending
