"""The cross-domain overview a run shows and keeps, bounded whatever the hub holds.

A run needs its own domain's overview; the others are context. It is shown with at most
`OTHERS_SHOWN` other domains, those with the most open work (ties by name), and one row that
sums the rest and says how many they are. So the prompt and the `observed` record of a run
grow with the run's domain, not with the number of domains on the hub.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from custodian_runtime.core.contract import (
    DomainOverview,
    StateSummary,
    TaskCounts,
    WorkstreamCounts,
)

OTHERS_SHOWN = 10  # other domains shown by name; the rest are summed in one row


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


def bounded(overview: StateSummary, domain: str, others: int = OTHERS_SHOWN) -> BoundedOverview:
    """`domain`'s overview and the `others` other domains with the most open work, by name."""
    own = [d for d in overview.domains if d.domain == domain]
    rest = [d for d in overview.domains if d.domain != domain]
    top = heapq.nsmallest(others, rest, key=lambda d: (-open_work(d), d.domain))
    shown = {d.domain for d in top}
    left = [d for d in rest if d.domain not in shown]
    chosen = tuple(sorted([*own[:1], *top], key=lambda d: d.domain))
    return BoundedOverview(chosen, len(left), summed(left) if left else None)


def summed(items: list[DomainOverview]) -> DomainOverview:
    """One overview whose counts are the sums of `items`, and the latest event among them."""

    def total(count: Callable[[DomainOverview], int]) -> int:
        return sum(count(d) for d in items)

    events = [d.last_event_at for d in items if d.last_event_at is not None]
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
        last_event_at=max(events, default=None),
    )
