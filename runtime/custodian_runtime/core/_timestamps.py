"""Timestamps from the future: never later than now, and never a way to hide staleness.

A hub's clock, or a person, may write a time after the run's `now` (the year 9999). Such a time is
suspect: it is shown as such, and it never counts as activity. A task's age is taken from the
latest time that is not in the future: its update, its last event, or else its creation. When none
is trustworthy the age is unknown, and an unknown age counts as stale: a person should look.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

# Clocks disagree by a little; beyond this a time is from the future.
SKEW = timedelta(minutes=5)


@dataclass(frozen=True)
class Age:
    """Days since the last trustworthy activity (None: unknown); whether any time was suspect."""

    days: int | None
    suspect: bool
    since: datetime | None = None  # the time the age counts from

    def stale(self, after_days: int) -> bool:
        """Older than `after_days`, or of unknown age."""
        return self.days is None or self.days > after_days


def utc(moment: datetime) -> datetime:
    """An aware datetime in UTC; a naive one is read as UTC (the hub speaks UTC)."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def in_future(moment: datetime | None, now: datetime) -> bool:
    """Whether `moment` lies after `now` by more than the clock skew allowed."""
    return moment is not None and utc(moment) > utc(now) + SKEW


def clamp(moment: datetime, now: datetime) -> datetime:
    """`moment`, or `now` when it lies in the future."""
    return utc(now) if utc(moment) > utc(now) else utc(moment)


def activity_age(
    updated_at: datetime, created_at: datetime, last_event: datetime | None, now: datetime
) -> Age:
    """The age of a task's last trustworthy activity (see the module docstring)."""
    times = [t for t in (updated_at, last_event) if t is not None]
    suspect = any(in_future(t, now) for t in (*times, created_at))
    trusted = [t for t in times if not in_future(t, now)]
    if not trusted and not in_future(created_at, now):
        trusted = [created_at]
    if not trusted:
        return Age(None, suspect)
    latest = max(clamp(t, now) for t in trusted)
    return Age(max(0, (utc(now) - latest).days), suspect, latest)
