"""`custodian watch --prune-keep 90d`: the fleet's own prune, each domain once a day.

A fleet replica's volume is mounted by that replica alone (ReadWriteOnce), so no prune CronJob
can reach it; the watch prunes its own domains, as `custodian journal prune` does, under each
domain's run lock and never while the watch runs it. A domain's turn is a minute of the day
that its name gives (the same SHA-256 as its shard), so 10,000 domains are spread over the day
and a restart keeps each one's turn.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from custodian_runtime.core.fold.prune import keep_problem, parse_keep
from custodian_runtime.errors import ConfigError
from custodian_runtime.watch._select import shard_of

DAY_MINUTES = 24 * 60


def parse_prune_keep(text: str) -> timedelta:
    """`--prune-keep`: `90d`, `12w`, at least 31 days; a ConfigError that says the fix."""
    try:
        keep = parse_keep(text)
    except ValueError as exc:
        raise ConfigError(
            str(exc).replace("--keep", "--prune-keep"), setting="--prune-keep"
        ) from None
    problem = keep_problem(keep)
    if problem is not None:
        raise ConfigError(f"--prune-keep {text}: {problem}", setting="--prune-keep")
    return keep


def turn_of(domain: str) -> int:
    """The minute of the day (UTC) at which `domain` is pruned."""
    return shard_of(domain, DAY_MINUTES)


def minute_of(now: datetime) -> int:
    """`now`'s minute of the day."""
    return now.hour * 60 + now.minute


def turns_between(last: int, now: int, turn: int) -> bool:
    """Whether `turn` falls in the minutes after `last` up to `now` (around midnight too)."""
    if last == now:
        return False
    if last < now:
        return last < turn <= now
    return turn > last or turn <= now
