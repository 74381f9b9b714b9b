"""The cross-domain overview a run shows and keeps, bounded whatever the hub holds.

A run needs its own domain's overview; the others are context. It is shown with at most
`OTHERS_SHOWN` other domains, those with the most open work (ties by name), and one row that
sums the rest and says how many they are. So the prompt and the `observed` record of a run
grow with the run's domain, not with the number of domains on the hub.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from custodian_runtime.core.contract import (
    DomainOverview,
    StateSummary,
    TaskCounts,
    WorkstreamCounts,
)

OTHERS_SHOWN = 10  # other domains shown by name; the rest are summed in one row
KEPT = "_overview_index"  # where an overview keeps its index (index_of)


@dataclass(frozen=True)
class BoundedOverview:
    """The run's domain and the other domains shown (by name), and the rest summed."""

    domains: tuple[DomainOverview, ...]
    left_out: int
    rest: DomainOverview | None  # the left-out domains' counts summed; None when none

    def as_record(self, overview: StateSummary) -> dict[str, Any]:
        """What the `observed` record keeps: the overview's shape, with the digest of the rest."""
        kept = overview.model_copy(update={"domains": self.domains}).model_dump(mode="json")
        if self.rest is not None:
            kept["left_out"] = self.left_out
            kept["rest"] = self.rest.model_dump(mode="json", exclude={"domain", "revision"})
        return kept


def open_work(item: DomainOverview) -> int:
    """How much waits in a domain: open tasks, open flags and open decisions."""
    t = item.tasks
    return t.todo + t.in_progress + t.blocked + item.open_flags + item.open_decisions


@dataclass(frozen=True)
class OverviewIndex:
    """One walk of the overview, enough for any domain's bounded view in O(`others`).

    The busiest `others + 1` domains hold the `others` busiest besides any one domain; the
    `others + 2` latest events hold the latest among the domains left out, since at most
    `others + 1` are shown; the left-out sums are the totals less what is shown.
    """

    domains: tuple[DomainOverview, ...]  # the overview's own tuple: the index is of it alone
    by_name: Mapping[str, DomainOverview]
    busiest: tuple[DomainOverview, ...]  # the `others + 1` with the most open work, in order
    latest: tuple[DomainOverview, ...]  # the `others + 2` with the latest events, newest first
    totals: DomainOverview
    others: int

    def bounded(self, domain: str) -> BoundedOverview:
        """`domain`'s overview and the `others` other domains with the most open work."""
        own = self.by_name.get(domain)
        top = [d for d in self.busiest if d.domain != domain][: self.others]
        mine = [own] if own is not None else []
        shown = {domain, *(d.domain for d in top)}
        left_out = len(self.by_name) - len(shown & self.by_name.keys())
        chosen = tuple(sorted([*mine, *top], key=lambda d: d.domain))
        if not left_out:
            return BoundedOverview(chosen, 0, None)
        latest = next((d.last_event_at for d in self.latest if d.domain not in shown), None)
        rest = _less(self.totals, [*mine, *top], latest)
        return BoundedOverview(chosen, left_out, rest)


def index_of(overview: StateSummary, others: int = OTHERS_SHOWN) -> OverviewIndex:
    """The overview's index, made at its first use and kept with it (every run handed the same
    overview shares it); a copy with other domains gets its own."""
    kept = overview.__dict__.get(KEPT)
    if isinstance(kept, OverviewIndex) and kept.others == others:
        return kept if kept.domains is overview.domains else _made(overview, others)
    return _made(overview, others)


def _made(overview: StateSummary, others: int) -> OverviewIndex:
    by_name = {d.domain: d for d in reversed(overview.domains)}  # the first of a name wins
    unique = list(by_name.values())
    busiest = heapq.nsmallest(others + 1, unique, key=lambda d: (-open_work(d), d.domain))
    dated = [d for d in unique if d.last_event_at is not None]
    latest = heapq.nlargest(others + 2, dated, key=lambda d: d.last_event_at)  # type: ignore[arg-type,return-value]
    made = OverviewIndex(
        overview.domains, by_name, tuple(busiest), tuple(latest), summed(unique), others
    )
    # Kept beside the fields, where equality, hashing and dumps do not look (as a
    # functools.cached_property would be): derived from the frozen domains, never a truth.
    overview.__dict__[KEPT] = made
    return made


def bounded(overview: StateSummary, domain: str, others: int = OTHERS_SHOWN) -> BoundedOverview:
    """`domain`'s overview and the `others` other domains with the most open work, by name."""
    return index_of(overview, others).bounded(domain)


def _less(
    totals: DomainOverview, shown: list[DomainOverview], last_event_at: datetime | None
) -> DomainOverview:
    """`totals` less the `shown` domains' counts: the sums of the domains left out."""

    def left(count: Callable[[DomainOverview], int]) -> int:
        return count(totals) - sum(count(d) for d in shown)

    return _counts(left, last_event_at)


def summed(items: list[DomainOverview]) -> DomainOverview:
    """One overview whose counts are the sums of `items`, and the latest event among them."""

    def total(count: Callable[[DomainOverview], int]) -> int:
        return sum(count(d) for d in items)

    events = [d.last_event_at for d in items if d.last_event_at is not None]
    return _counts(total, max(events, default=None))


def _counts(
    total: Callable[[Callable[[DomainOverview], int]], int], last_event_at: datetime | None
) -> DomainOverview:
    """A summed row: each count as `total` gives it."""
    return DomainOverview(
        domain="",
        workstreams=WorkstreamCounts(
            active=total(lambda d: d.workstreams.active),
            paused=total(lambda d: d.workstreams.paused),
            done=total(lambda d: d.workstreams.done),
        ),
        tasks=TaskCounts(
            todo=total(lambda d: d.tasks.todo),
            in_progress=total(lambda d: d.tasks.in_progress),
            blocked=total(lambda d: d.tasks.blocked),
            done=total(lambda d: d.tasks.done),
            cancelled=total(lambda d: d.tasks.cancelled),
        ),
        open_flags=total(lambda d: d.open_flags),
        open_decisions=total(lambda d: d.open_decisions),
        last_event_at=last_event_at,
    )
