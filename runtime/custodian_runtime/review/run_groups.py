"""The queue as a person decides it: grouped by domain, then operation (all of a domain's new
tasks together, whichever run proposed them), oldest group first; within a group the oldest run
first, each run's items in the order its plan proposed them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from custodian_runtime.review.pending import PendingView


@dataclass(frozen=True)
class Group:
    """The pending items of one domain and operation, and the card after each of them."""

    domain: str
    operation: str
    views: tuple[PendingView, ...]
    after: Mapping[str, str]  # card id -> the next card on the page ("" after the last)

    @property
    def key(self) -> str:
        """The group's name in the page's form (`all-<key>` is its choice)."""
        return f"{self.domain}.{self.operation}"

    @property
    def runs(self) -> tuple[str, ...]:
        """The runs that proposed its items, oldest first."""
        return tuple(dict.fromkeys(v.item.run_id for v in self.views))


def by_decision(views: Sequence[PendingView], order: Mapping[str, int]) -> list[Group]:
    """The views (oldest first) grouped by domain and operation; the group whose first item
    comes first (oldest run, then plan index) first, and so within each group."""
    runs = {run: n for n, run in enumerate(dict.fromkeys(v.item.run_id for v in views))}
    found: dict[tuple[str, str], list[PendingView]] = {}
    for view in views:
        found.setdefault((view.item.domain, view.item.operation), []).append(view)

    def place(view: PendingView) -> tuple[int, int, str]:
        item = view.item
        return (runs[item.run_id], order.get(item.id, 1 << 30), item.id)

    sorted_ = [(key, tuple(sorted(group, key=place))) for key, group in found.items()]
    ranked = sorted(sorted_, key=lambda pair: place(pair[1][0]))
    flat = [v.item.id for _, group in ranked for v in group]
    after = dict(zip(flat, [*flat[1:], ""], strict=False))
    return [Group(domain, op, group, after) for (domain, op), group in ranked]
