"""The rolling budgets per domain, and Custodian's own recent writes they and deference count.

Counted from Custodian's own writes as the journal's checkpoint keeps them
(core/authority/own_writes.py): the journal is the source of what Custodian did, the observed hub
the source of what is true now. Deference to a person's change reads the same writes
(core/authority/deference.py). Pure: `now` comes in with the writes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from custodian_runtime.core.authority.own_writes import RETAIN, OwnWrite
from custodian_runtime.core.journal.records import parse_at
from custodian_runtime.core.limits import Limits
from custodian_runtime.core.operations import OWN_SOURCE, find, status_writes

if TYPE_CHECKING:  # only for annotations: authority imports this module
    from custodian_runtime.core.plan.extract import ProposedItem

# The hub's summary shows at most this many recent events when asked (contract v1.1).
MAX_SUMMARY_EVENTS = 500
__all__ = ["OWN_SOURCE"]


@dataclass(frozen=True)
class RecentWrites:
    """Custodian's own writes in this domain (oldest first), and the time the run rules at."""

    now: datetime
    writes: tuple[OwnWrite, ...] = ()

    def since(self, span: timedelta) -> list[OwnWrite]:
        """The writes made in the last `span` before now (Custodian's own and approved ones)."""
        start = self.now - span
        return [w for w in self.writes if parse_at(w.at) > start]

    def own_since(self, span: timedelta) -> list[OwnWrite]:
        """Custodian's own writes (by policy, not a person's approval) in the last `span`."""
        return [w for w in self.since(span) if not w.by_person]


def budget_problem(
    item: ProposedItem, limits: Limits, recent: RecentWrites, executed: int
) -> str | None:
    """Why `item` would overspend a rolling budget; `executed` counts this run's of its kind."""
    hours = limits.budget_window_hours
    mine = recent.own_since(timedelta(hours=hours))
    limit = limits.budget(item.operation)
    if limit is not None:
        used = sum(1 for w in mine if w.operation == item.operation) + executed
        if used >= limit:
            return (
                f"the rolling budget of {limit} {item.operation} per {hours} h for this domain "
                f"is spent ({used} in the last {hours} h, this run's included)"
            )
    statuses = status_writes()
    if item.operation not in statuses:
        return None
    task = item.params["task_id"]
    same = [w for w in mine if w.operation in statuses and w.task_id == task]
    if len(same) < limits.budget_status_per_task:
        return None
    last = same[-1]
    return (
        f"the rolling budget of {limits.budget_status_per_task} status change(s) of one task "
        f"per {hours} h is spent: Custodian set task {task} to {last.status} at {last.at} "
        f"(run {last.run_id})"
    )


def claim_of(operation: str) -> str | None:
    """What a write claims of its task (core/operations/: `conflict`): status, flag or nothing."""
    spec = find(operation)
    return None if spec is None else spec.conflict


def wider_window(sources: Sequence[str], asked: int) -> int | None:
    """How many events to ask for again when Custodian's own fill the summary's window.

    A full window that holds any of Custodian's events may hide people's events behind them:
    ask for twice as many (at most the hub's 500). None when the window is not crowded.
    """
    own = sum(1 for source in sources if source == OWN_SOURCE)
    if len(sources) < asked or own == 0 or asked >= MAX_SUMMARY_EVENTS:
        return None
    return min(MAX_SUMMARY_EVENTS, max(2 * asked, asked + own))


def recent_writes(limits: Limits, writes: Sequence[OwnWrite], now: datetime) -> RecentWrites:
    """Custodian's own writes that the rolling budgets or the deference window still count."""
    budget_start = now - timedelta(hours=limits.budget_window_hours)
    defer_start = now - timedelta(days=limits.defer_days)
    # A status write is kept past the window too: a person setting it back within the window
    # is deferred to however old the write (`_set_back_lately`).
    status_start = now - max(RETAIN, timedelta(days=limits.defer_days))

    def counts(w: OwnWrite) -> bool:
        # Events count only for the budget; status writes and flags (writes that claim a
        # task) also for the deference.
        at, claim = parse_at(w.at), claim_of(w.operation)
        kept = at > status_start if claim == "status" else at > defer_start
        return at > budget_start or (claim is not None and kept)

    return RecentWrites(now, tuple(w for w in writes if counts(w)))
