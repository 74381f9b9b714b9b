"""The cross-domain overview a run shows and keeps, bounded whatever the hub holds.

A run needs its own domain's overview; the others are context. It is shown with at most
`OTHERS_SHOWN` other domains, those with the most open work (ties by name), and one row that
sums the rest and says how many they are. So the prompt and the `observed` record of a run
grow with the run's domain, not with the number of domains on the hub.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable
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


def summed(items: Iterable[DomainOverview]) -> DomainOverview:
    """One overview whose counts are the sums of `items`, and the latest event among them."""
    ws, tasks = WorkstreamCounts(), TaskCounts()
    flags = decisions = 0
    last = None
    for d in items:
        ws = _add(ws, d.workstreams)
        tasks = _add(tasks, d.tasks)
        flags, decisions = flags + d.open_flags, decisions + d.open_decisions
        if d.last_event_at is not None and (last is None or d.last_event_at > last):
            last = d.last_event_at
    return DomainOverview(
        domain="", workstreams=ws, tasks=tasks, open_flags=flags, open_decisions=decisions,
        last_event_at=last,
    )  # fmt: skip


def _add(a: Any, b: Any) -> Any:
    return type(a).model_construct(
        **{k: getattr(a, k) + getattr(b, k) for k in type(a).model_fields}
    )
