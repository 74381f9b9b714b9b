"""`custodian watch`: one long-running process that looks after many domains.

Each pass reads the hub's overview once and runs the domains whose revision moved or whose
local work is due, each exactly as `custodian run` would, at most `--parallel K` at once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from custodian_runtime._lazy import lazy_attributes

if TYPE_CHECKING:
    from custodian_runtime.watch._loop import Watch, watch_command
    from custodian_runtime.watch._prune import parse_prune_keep
    from custodian_runtime.watch._request import WatchRequest
    from custodian_runtime.watch._select import (
        Shard,
        parse_domains,
        parse_shard,
        read_domains,
        shard_of,
    )

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_attributes(globals())
