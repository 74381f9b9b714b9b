"""Shadow items a person later did the same way on the hub: the agreement shadow mode earns.

Each item shadow mode kept from being written or queued is journaled as `shadowed`, with the
state its target was observed in. At each later observation within `SHADOW_WINDOW`, an item
whose operation's spec says it `landed` on the hub (core/operations/) is journaled once as
`shadow_matched`, unless Custodian made that change itself. The checkpoint keeps the items
still waiting (`shadow_records`), so no run reads the journal again to find them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import custodian_runtime.core.operations as operations
from custodian_runtime.core.authority.authorize import Ruling
from custodian_runtime.core.authority.checks import SAME_TITLE
from custodian_runtime.core.authority.own_writes import OwnWrite
from custodian_runtime.core.authority.precondition import precondition
from custodian_runtime.core.contract import DomainSummary
from custodian_runtime.core.journal.kinds import (
    Authorized,
    Shadowed,
    ShadowMatched,
    of_kind,
    read_as,
)
from custodian_runtime.core.journal.records import Record, parse_at
from custodian_runtime.core.view import View

# How long after it was shadowed an item is still compared with the hub.
SHADOW_WINDOW = timedelta(days=7)
SHADOW_KINDS = frozenset({Shadowed.KIND, ShadowMatched.KIND})


def shadowed(ruling: Ruling, observed: DomainSummary, hub: str | None) -> Shadowed | None:
    """The `shadowed` record of a ruling shadow mode denied (None for any other ruling)."""
    if ruling.shadow is None:
        return None
    item = ruling.item
    return Shadowed(
        index=item.index,
        operation=item.operation,
        params=dict(item.params),
        fingerprint=item.fingerprint,
        would=ruling.shadow,
        observed=precondition(item, observed),
        hub=hub,
    )


@dataclass(frozen=True)
class ShadowItem:
    """One `shadowed` record not matched yet."""

    record: Record
    entry: Shadowed

    @property
    def params(self) -> Mapping[str, Any]:
        """The item's params as journaled."""
        return self.entry.params or {}


@dataclass(frozen=True)
class ShadowMatch:
    """A shadow item the hub shows a person made, as `hub_id`."""

    item: ShadowItem
    hub_id: str

    def entry(self) -> ShadowMatched:
        """The `shadow_matched` record the run journals for it."""
        e = self.item.entry
        return ShadowMatched(
            shadow=self.item.record.ref,
            run=self.item.record.run_id,
            index=e.index,
            operation=e.operation,
            hub_id=self.hub_id,
        )

    def report(self) -> dict[str, Any]:
        """What the run's `--json` (`shadow_matched`) and its note say of it."""
        e = self.item.entry
        return {
            "run": self.item.record.run_id,
            "index": e.index,
            "operation": e.operation,
            "would": e.would,
            "shadowed_at": self.item.record.ref,
            "hub_id": self.hub_id,
        }


@dataclass(frozen=True)
class OwnChange:
    """A change Custodian itself made or sent, which no person gets credit for."""

    at: datetime
    operation: str
    params: Mapping[str, Any]
    hub_id: str | None = None


def waiting(records: Sequence[Record], now: datetime) -> list[ShadowItem]:
    """The shadow items not matched yet that are at most `SHADOW_WINDOW` old at `now`."""
    matched = {str(m.shadow) for _, m in of_kind(records, ShadowMatched)}
    return [
        ShadowItem(r, e)
        for r, e in of_kind(records, Shadowed)
        if r.ref not in matched and now - parse_at(r.at) <= SHADOW_WINDOW
    ]


def shadow_records(records: Sequence[Record]) -> list[Record]:
    """What the checkpoint keeps, within the window of the newest record: the `shadowed` records
    not matched, and the `shadow_matched` ones (so a shadowed record kept for another reason,
    such as a run left whole, is never matched twice)."""
    if not records:
        return []
    newest = parse_at(records[-1].at)
    matched = [
        r
        for r in records
        if r.kind == ShadowMatched.KIND and newest - parse_at(r.at) <= SHADOW_WINDOW
    ]
    return [*(item.record for item in waiting(records, newest)), *matched]


def own_changes(records: Iterable[Record], writes: Iterable[OwnWrite]) -> list[OwnChange]:
    """Custodian's writes: those the hub took (`writes`), and those authorized in `records`."""
    found = [
        OwnChange(parse_at(r.at), str(a.operation), dict(a.params or {}))
        for r, a in of_kind(records, Authorized)
    ]
    for w in writes:
        params = {k: v for k, v in (("task_id", w.task_id), ("status", w.status)) if v is not None}
        found.append(OwnChange(parse_at(w.at), w.operation, params, w.hub_id))
    return found


def matches(
    items: Sequence[ShadowItem],
    observed: DomainSummary,
    mine: Sequence[OwnChange],
    hub: str | None,
) -> list[ShadowMatch]:
    """The items `observed` shows made by a person: landed, on their hub, not by Custodian."""
    view = View.of(observed)
    found = []
    for item in items:
        spec = operations.find(item.entry.operation)
        if spec is None or spec.writes != "hub" or item.entry.hub != hub:
            continue
        before = tuple((item.entry.observed or {}).get(SAME_TITLE) or ())
        landing = operations.Landing(view, (), item.record.run_id, before)
        hub_id = spec.landed(item.params, landing)
        if hub_id is not None and not _by_custodian(item, hub_id, mine):
            found.append(ShadowMatch(item, hub_id))
    return found


def _by_custodian(item: ShadowItem, hub_id: str, mine: Sequence[OwnChange]) -> bool:
    """Whether Custodian made the change itself after the item was shadowed."""
    since = parse_at(item.record.at)
    return any(c.at >= since and _same_change(item, hub_id, c) for c in mine)


def _same_change(item: ShadowItem, hub_id: str, change: OwnChange) -> bool:
    params, op = item.params, str(item.entry.operation)
    if op in operations.status_writes():
        same_task = change.params.get("task_id") == params.get("task_id")
        return same_task and change.params.get("status") == params.get("status")
    if change.hub_id is not None and change.hub_id == hub_id:
        return True
    spec = operations.spec(op)
    keys = [k for k in (*spec.targets, "title") if k in params]
    return change.operation == op and all(change.params.get(k) == params[k] for k in keys)


@dataclass(frozen=True)
class ShadowCount:
    """One operation's shadow items in a window, and how many a person matched."""

    operation: str
    shadow: int = 0
    matched: int = 0


def shadow_counts(records: Iterable[Record], since: datetime) -> dict[str, ShadowCount]:
    """Per operation, the shadow items journaled since `since` and how many were matched."""
    items: dict[str, str] = {}
    matched: set[str] = set()
    for r in records:
        if r.kind == Shadowed.KIND and parse_at(r.at) >= since:
            items[r.ref] = str(read_as(r, Shadowed).operation)
        elif r.kind == ShadowMatched.KIND:
            matched.add(str(read_as(r, ShadowMatched).shadow))
    counts: dict[str, ShadowCount] = {}
    for ref, op in items.items():
        was = counts.get(op, ShadowCount(op))
        hit = 1 if ref in matched else 0
        counts[op] = ShadowCount(op, was.shadow + 1, was.matched + hit)
    return counts
