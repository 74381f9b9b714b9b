"""Each authorized write's trace through the journal: one walk over the records, rules checked.

The walk follows every item from `authorized` to its closing record and collects the spine rules
its records break; `journal_spine.py` turns what it found into problems and pending writes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import custodian_runtime.core.operations as operations
from custodian_runtime.core.authority.precondition import edited_problem
from custodian_runtime.core.journal.kinds import (
    ApprovalDecided,
    Authorized,
    Dispatched,
    Entry,
    GrantIssued,
    GrantUsed,
    LandingProbe,
    Queued,
    Receipt,
    Reconciled,
    RecordDataError,
    RulingRecord,
    SameValue,
    SettledByHand,
    Shadowed,
    ShadowMatched,
    WriteStep,
    decode,
)
from custodian_runtime.core.journal.records import Problem, Record
from custodian_runtime.core.standing.record import grant_of

ItemKey = tuple[str, Any]  # (run that authorized the write, plan item index)
OUTCOME_KINDS = ("receipt", "failed", "stale", "settled_by_hand")


def executed_params(operation: str, params: dict[str, Any], domain: str) -> dict[str, Any]:
    """The params a ruled item is sent with: a decision is recorded in the journal's domain."""
    spec = operations.find(operation)
    if spec is not None and spec.in_domain:
        return {**params, "domain": domain}
    return dict(params)


@dataclass
class ItemTrace:
    """Everything the journal says about one authorized write, in file order."""

    authorized: Record
    grant: Authorized
    attempt_run: str
    dispatched: Record | None = None
    outcome: Record | None = None
    steps: list[Record] = field(default_factory=list)
    # A write closed without being sent that a later observation found landed anyway.
    late: Record | None = None
    # A closed write whose value the hub shows, not proven to be this write's (same_value).
    same: Record | None = None

    @property
    def key(self) -> Any:
        """The idempotency key the write was authorized with."""
        return self.grant.idempotency_key


class Tracker:
    """Walks the records once, following each item's state and collecting broken rules."""

    def __init__(self) -> None:
        self.items: dict[ItemKey, ItemTrace] = {}
        self.rulings: dict[ItemKey, tuple[Record, RulingRecord]] = {}
        self.approvals: dict[str, ApprovalDecided] = {}
        self.granted: dict[ItemKey, str] = {}
        # The grants the domain's journal records (grant_issued), by id.
        self.issued: set[str] = set()
        # Shadow items (`shadowed`, by ref) and those a `shadow_matched` record matched.
        self.shadowed: set[str] = set()
        self.matched: dict[str, str] = {}
        self._seen: set[int] = set()  # the seqs walked: a ref outside them cannot be judged
        self.problems: list[Problem] = []
        self.item_problems: dict[ItemKey, list[str]] = {}
        self._handlers: dict[str, Callable[[Record, Any], None]] = {
            "ruling": self._ruling,
            "queued": self._queued,
            "approval_decided": self._approval,
            "authorized": self._authorized,
            "dispatched": self._dispatched,
            "reconciled": self._reconciled,
            "receipt": self._outcome,
            "failed": self._outcome,
            "stale": self._outcome,
            "unknown": self._unknown,
            "settled_by_hand": self._by_hand,
            "grant_issued": self._grant_issued,
            "grant_used": self._grant_used,
            "shadowed": self._shadowed,
            "shadow_matched": self._shadow_matched,
            "landing_probe": self._probe,
            "same_value": self._same,
        }

    def walk(self, records: Sequence[Record]) -> Tracker:
        for record in records:
            self._seen.add(record.seq)
            handler = self._handlers.get(record.kind)
            if handler is None:
                continue
            try:
                data: Entry = decode(record)
            except RecordDataError as exc:
                self._flag(record, str(exc))
                continue
            handler(record, data)
        return self

    def _flag(self, record: Record, message: str, item: ItemKey | None = None) -> None:
        self.problems.append(Problem.of(record, message))
        if item is not None:
            self.item_problems.setdefault(item, []).append(str(Problem.of(record, message)))

    def _ruling(self, r: Record, d: RulingRecord) -> None:
        key = (r.run_id, d.index)
        if key in self.rulings:
            first = self.rulings[key][0].ref
            self._flag(r, f"second ruling for item #{key[1]} (first at {first})")
        self.rulings[key] = (r, d)
        if r.run_id in self.approvals:
            # An approval run rules on the queued item as stored: one that cannot be the item
            # that was queued (fingerprint, precondition) was edited after it was queued.
            problem = _edited(r, d)
            if problem is not None:
                self._flag(r, f"the approved item was edited: {problem}", key)

    def _queued(self, r: Record, d: Queued) -> None:
        ruling = self.rulings.get((r.run_id, d.index))
        if ruling is None or ruling[1].outcome != "queue":
            self._flag(r, f"queued item #{d.index} has no queue ruling in this run")

    def _approval(self, r: Record, d: ApprovalDecided) -> None:
        self.approvals[r.run_id] = d

    def _grant_issued(self, r: Record, d: GrantIssued) -> None:
        try:
            grant = grant_of(r, d)
        except RecordDataError as exc:  # a grant that does not decode is damage
            self._flag(r, str(exc))
            return
        if grant.domain == r.domain:
            self.issued.add(grant.id)

    def _grant_used(self, r: Record, d: GrantUsed) -> None:
        key = (r.run_id, d.index)
        self.granted[key] = str(d.grant_id)
        if d.grant_id not in self.issued:
            message = (
                f"uses grant {d.grant_id}, which the domain's journal does not record (no "
                "grant_issued before it): a grant the journal does not record is refused"
            )
            self._flag(r, message, key)

    def _shadowed(self, r: Record, d: Shadowed) -> None:
        ruling = self.rulings.get((r.run_id, d.index))
        if ruling is None or ruling[1].outcome != "deny":
            self._flag(r, f"shadowed item #{d.index} has no denial ruling in this run")
        self.shadowed.add(r.ref)

    def _shadow_matched(self, r: Record, d: ShadowMatched) -> None:
        ref = str(d.shadow)
        first = self.matched.get(ref)
        if first is not None:
            self._flag(r, f"second match of the shadow item {ref} (first at {first})")
        elif ref not in self.shadowed and self._walked(ref):
            self._flag(r, f"matches {ref}, which is no shadowed record of this journal")
        self.matched.setdefault(ref, r.ref)

    def _walked(self, ref: str) -> bool:
        """Whether `ref` names a record walked (one a prune or checkpoint dropped is not judged)."""
        _, _, seq = ref.rpartition(":")
        return not seq.isdigit() or int(seq) in self._seen

    def _authorized(self, r: Record, d: Authorized) -> None:
        key = (r.run_id, d.index)
        if key in self.items:
            first = self.items[key].authorized.ref
            self._flag(r, f"second authorized record for item #{key[1]} (first at {first})")
            return
        self._check_authority(r, d, key)
        self.items[key] = ItemTrace(authorized=r, grant=d, attempt_run=r.run_id)

    def _check_authority(self, r: Record, d: Authorized, key: ItemKey) -> None:
        by = str(d.by)
        if by.startswith("person:"):
            decided = self.approvals.get(r.run_id)
            if decided is None or decided.decision != "approved":
                message = "authorized by a person without an approved approval_decided record"
                self._flag(r, message, key)
        elif by.startswith("grant:"):
            if self.granted.get(key) != by.removeprefix("grant:"):
                self._flag(r, f"authorized by {by} without a grant_used record for it", key)
        elif by != "policy":
            message = (
                f"unknown authority {by!r} (expected 'policy', 'person:<name>' or 'grant:<id>')"
            )
            self._flag(r, message, key)
            return
        problem = self._ruling_problem(r, d, key)
        if problem is not None:
            self._flag(r, problem, key)

    def _ruling_problem(self, r: Record, d: Authorized, key: ItemKey) -> str | None:
        """Why the run's ruling for the item does not decide this authorized record."""
        found = self.rulings.get(key)
        if found is None:
            return f"authorized without an earlier ruling for item #{key[1]} in this run"
        ruling, ruled = found
        if ruled.outcome != "execute":
            return f"authorized although the ruling at {ruling.ref} says {ruled.outcome}"
        if ruled.fingerprint != d.fingerprint:
            return f"fingerprint differs from the ruling at {ruling.ref}"
        if ruled.operation != d.operation:
            return f"operation differs from the ruling at {ruling.ref}"
        sent = executed_params(str(d.operation), dict(ruled.params or {}), r.domain)
        if ruled.params is None or sent != d.params:
            return f"params differ from the ruling at {ruling.ref}"
        return None

    def _lookup(self, r: Record, d: WriteStep) -> ItemTrace | None:
        origin = d.reconciles or r.run_id
        item = self.items.get((origin, d.index))
        if item is None:
            self._flag(r, f"{r.kind} without an authorized record for item #{d.index}")
        elif item.outcome is not None:
            self._flag(r, f"{r.kind} after the item was closed at {item.outcome.ref}")
            return None
        return item

    def _dispatched(self, r: Record, d: Dispatched) -> None:
        item = self._lookup(r, d)
        if item is None:
            return
        key = _key_of(item)
        if d.idempotency_key != item.key:
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

    def _outcome(self, r: Record, d: WriteStep) -> None:
        if isinstance(d, Receipt) and d.late:
            self._late(r, d)
            return
        item = self._lookup(r, d)
        if item is None:
            return
        # A reconciling run may close an item without sending it: found on the hub, or refused.
        closing = d.closes_unsent()
        if closing and item.attempt_run == r.run_id and item.dispatched is None:
            pass
        elif item.dispatched is None or item.dispatched.run_id != r.run_id:
            self._flag(r, f"{r.kind} without a dispatched record before it in this run")
        item.outcome = r
        item.steps.append(r)

    def _late(self, r: Record, d: Receipt) -> None:
        """A closed write found landed later: once, after the record that closed it."""
        key = d.item(r.run_id)
        item = self.items.get(key) if key is not None else None
        if item is None or item.outcome is None:
            self._flag(r, f"found late, but item #{d.index} was never closed")
            return
        settled = item.late or item.same
        if settled is not None:
            self._flag(r, f"found late after it was settled at {settled.ref}", _key_of(item))
            return
        item.late = r
        item.steps.append(r)

    def _closed_item(self, r: Record, d: WriteStep) -> ItemTrace | None:
        """The closed write a probe or a same-value record speaks of, or None (flagged)."""
        key = d.item(r.run_id)
        item = self.items.get(key) if key is not None else None
        if item is None or item.outcome is None:
            self._flag(r, f"{r.kind} of item #{d.index}, which was never closed")
            return None
        return item

    def _probe(self, r: Record, d: LandingProbe) -> None:
        """A closed write's key re-sent to ask whether it landed: with the write's own key."""
        item = self._closed_item(r, d)
        if item is None:
            return
        if d.idempotency_key != item.key:
            message = f"idempotency key differs from the authorized record at {item.authorized.ref}"
            self._flag(r, message, _key_of(item))
        item.steps.append(r)

    def _same(self, r: Record, d: SameValue) -> None:
        """A closed write the hub shows the value of, not proven: once, and never found late."""
        item = self._closed_item(r, d)
        if item is None:
            return
        settled = item.late or item.same
        if settled is not None:
            self._flag(r, f"same value after it was settled at {settled.ref}", _key_of(item))
            return
        item.same = r
        item.steps.append(r)

    def _unknown(self, r: Record, d: WriteStep) -> None:
        """No answer came: a step after the dispatch in the same run that leaves the item open."""
        item = self._lookup(r, d)
        if item is None:
            return
        if item.dispatched is None or item.dispatched.run_id != r.run_id:
            self._flag(r, "unknown without a dispatched record before it in this run")
        item.steps.append(r)

    def _by_hand(self, r: Record, d: SettledByHand) -> None:
        """A person closed an open write by hand: its own run, with the write's key."""
        origin = (str(d.run_id_of_the_open_write), d.index)
        item = self.items.get(origin)
        if item is None:
            self._flag(r, f"settles item #{origin[1]} of run {origin[0]}, never authorized")
            return
        if item.outcome is not None:
            self._flag(r, f"settles an item already closed at {item.outcome.ref}", origin)
            return
        if d.idempotency_key != item.key:
            message = f"idempotency key differs from the authorized record at {item.authorized.ref}"
            self._flag(r, message, origin)
        item.outcome = r
        item.steps.append(r)

    def _reconciled(self, r: Record, d: Reconciled) -> None:
        origin = d.run_id_of_the_interrupted_run
        item = self.items.get((str(origin), d.index))
        if item is None:
            self._flag(r, f"reconciles item #{d.index} of run {origin}, never authorized")
            return
        key = _key_of(item)
        if origin == r.run_id:
            self._flag(r, "a run cannot reconcile its own item", key)
        if item.outcome is not None:
            self._flag(r, f"reconciles an item already closed at {item.outcome.ref}", key)
        if d.idempotency_key != item.key:
            message = f"idempotency key differs from the authorized record at {item.authorized.ref}"
            self._flag(r, message, key)
        item.attempt_run = r.run_id
        item.dispatched = None
        item.steps.append(r)


def _edited(r: Record, d: RulingRecord) -> str | None:
    if d.params is None or d.precondition is None:
        return "its params or precondition are not objects"
    operation, fp = str(d.operation), str(d.fingerprint)
    return edited_problem(operation, d.params, fp, d.precondition, r.domain)


def _key_of(item: ItemTrace) -> ItemKey:
    return (item.authorized.run_id, item.grant.index)


def trace_items(records: Sequence[Record]) -> dict[ItemKey, ItemTrace]:
    """Each authorized write keyed by (authorizing run, index), with its later steps."""
    return Tracker().walk(records).items
