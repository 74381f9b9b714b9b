"""Writes closed without being sent that a later observation shows landed anyway.

A write closed as stale, refused or expired (by a reconcile, or by a reject's settle) or by hand
may still land: held in a proxy, say. The checkpoint keeps each such write for `LATE_WINDOW`
after it was closed (`closed_item_records`), and each run compares it with what it observed
(`late_landings`). The hub showing its value proves nothing: each one shown comes with
how it can be proven (core/ruling/proof.py). One proven is journaled once, as a `receipt`
marked `late`, and raised for a person in the note and the run's summary; one not proven is
journaled once as `same_value` (the hub shows the same value, set by someone else), and the
person's decision stands. Nothing is written to the hub.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from custodian_runtime.core.contract import DomainSummary
from custodian_runtime.core.digest import canonical_json
from custodian_runtime.core.journal.kinds import Failed, SettledByHand, Stale, decode
from custodian_runtime.core.journal.records import Record, parse_at
from custodian_runtime.core.ruling.proof import LandingProof, landing_proof
from custodian_runtime.core.ruling.reconcile import landed_on_hub
from custodian_runtime.core.ruling.spine import PendingWrite, write_of
from custodian_runtime.core.ruling.trace import ItemKey, ItemTrace, Tracker
from custodian_runtime.core.standing.modes import SILENT

# How long after it was closed a write is still compared with the hub.
LATE_WINDOW = timedelta(days=7)
# How the run's summary and note name one found (the outcome of its report).
FOUND_LATE = "found_late"
# ... and one whose value the hub shows, not proven to be this write's.
SAME_VALUE = "same_value"


@dataclass(frozen=True)
class ClosedWrite:
    """A write closed without being sent: how (`stale`, `refused`, ...) and by which record."""

    write: PendingWrite
    how: str
    closed: Record
    # Whether a `dispatched` record says it ever left: one that never did cannot have landed.
    sent: bool = False


@dataclass(frozen=True)
class LateLanding:
    """A closed write whose value the hub shows, as `proof.hub_id`, and how that is proven."""

    closed: ClosedWrite
    proof: LandingProof

    @property
    def hub_id(self) -> str:
        """Where the hub shows the write's value."""
        return self.proof.hub_id

    def report(self) -> dict[str, Any]:
        """What the summary's `late_landings` (or `same_value`) and the note say of it."""
        write = self.closed.write
        return {
            "run": write.run_id,
            "index": write.index,
            "operation": write.operation,
            "hub_id": self.hub_id,
            "closed": self.closed.how,
            "closed_at": self.closed.closed.ref,
        }


def closed_writes(records: Sequence[Record]) -> list[ClosedWrite]:
    """Writes closed without being sent and not yet found landed, oldest first."""
    tracker = Tracker().walk(records)
    found = []
    for key in _still_closed(tracker):
        item = tracker.items[key]
        how = _closed_how(item)
        if how is not None and item.outcome is not None:
            sent = any(step.kind == "dispatched" for step in item.steps)
            found.append(ClosedWrite(write_of(tracker, key, item), how, item.outcome, sent))
    return found


def _still_closed(tracker: Tracker) -> list[ItemKey]:
    """Closed items not found landed, and whose effect no later write that landed made (an
    approval approved again after its first write was closed sends the same change again)."""
    landed: dict[tuple[str, str], int] = {}
    for item in tracker.items.values():
        if item.outcome is not None and item.outcome.kind == "receipt":
            effect = _effect(item)
            landed[effect] = max(landed.get(effect, 0), item.authorized.seq)
    return [
        key
        for key, item in tracker.items.items()
        if _closed_how(item) is not None
        and item.late is None
        and item.same is None
        and landed.get(_effect(item), 0) < item.authorized.seq
    ]


def _effect(item: ItemTrace) -> tuple[str, str]:
    """What a write changes: a task's status, or its operation with its params."""
    params = item.grant.params or {}
    task, status = params.get("task_id"), params.get("status")
    if isinstance(task, str) and isinstance(status, str):
        return (f"status of {task}", status)
    return (str(item.grant.operation), canonical_json(params))


def late_landings(
    records: Sequence[Record], observed: DomainSummary, now: datetime
) -> list[LateLanding]:
    """The closed writes (within the window) whose value `observed` shows, each with how it can
    be proven landed (`now`: the run's clock, for the hub's idempotency window)."""
    newest = records[-1].at if records else None
    found = []
    for closed in closed_writes(records):
        if newest is None or not _recent(closed.closed, newest):
            continue
        hub_id = landed_on_hub(closed.write, observed, ())
        if hub_id is not None:
            proof = landing_proof(closed.write, hub_id, observed, now, sent=closed.sent)
            found.append(LateLanding(closed, proof))
    return found


def closed_item_records(records: Sequence[Record]) -> list[Record]:
    """The records of each write closed within the window and not found: what the checkpoint
    keeps so the next run can still compare it with the hub."""
    if not records:
        return []
    newest = records[-1].at
    tracker = Tracker().walk(records)
    decided: dict[str, list[Record]] = {}
    for r in records:
        if r.kind == "approval_decided":
            decided.setdefault(r.run_id, []).append(r)
    kept: list[Record] = []
    for run_id, index in _still_closed(tracker):
        item = tracker.items[(run_id, index)]
        if item.outcome is None or not _recent(item.outcome, newest):
            continue
        ruling = tracker.rulings.get((run_id, index))
        kept += [ruling[0]] if ruling is not None else []
        kept += decided.get(run_id, [])
        kept += [item.authorized, *item.steps]
    return kept


def _closed_how(item: ItemTrace) -> str | None:
    """How the item was closed without being sent, or None (sent, or found on the hub)."""
    if item.outcome is None:
        return None
    entry = decode(item.outcome)
    if isinstance(entry, SettledByHand):
        return "closed by hand"
    if isinstance(entry, Failed | Stale) and entry.closed:
        return entry.closed
    return None


def _recent(closed: Record, newest_at: str) -> bool:
    return parse_at(newest_at) - parse_at(closed.at) <= LATE_WINDOW


def probe_refusal(closed: ClosedWrite, mode: str, item_status: str | None) -> str | None:
    """Why a closed write may not be probed now (None: it may): a probe re-sends the write, so
    it is ruled first, and only a write that would be sent now is probed (`mode`: its
    operation's mode now; `item_status`: its approval item's, as the journal says it)."""
    if item_status == "rejected":
        return "a person rejected its item, so nothing of it is sent again, not even a probe"
    if mode in SILENT:  # nothing is sent: a probe would be a write of its own
        return f"{closed.write.operation} is {mode} now, so nothing of it is sent, not even a probe"
    return None
