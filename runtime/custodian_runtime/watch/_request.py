"""What `custodian watch` was asked for, and what it calls for each domain."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from custodian_runtime.settings import Settings
from custodian_runtime.watch._select import Shard

CarryOut = Callable[[Settings], None]


@dataclass(frozen=True)
class WatchRequest:
    """What `custodian watch` was asked for."""

    domains: tuple[str, ...] | None = None  # None: every domain the hub lists
    shard: Shard | None = None
    every_s: float = 60.0
    parallel: int = 4
    metrics_host: str = "127.0.0.1"
    metrics_port: int | None = None
    once: bool = False  # one pass, wait for its runs, exit
    prune_keep: timedelta | None = None  # prune each domain once a day, keeping this much
