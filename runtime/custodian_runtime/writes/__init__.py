"""The write chain, below both the run and the approvals: one way out to the hub for either.

`send` is the one chain (dispatched -> the hub call -> receipt, failed, stale or unknown); the
dispatch table of each authority maps an authorized operation to its client call; the origin
names the configured hub and canon; preflight checks the disk before anything is read or
written; `read_summary` is the one checked read of a domain's summary.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from custodian_runtime._lazy import lazy_attributes

if TYPE_CHECKING:
    from custodian_runtime.writes._dispatch import (
        APPROVED_CALLS,
        SANCTIONED_CALLS,
        Calls,
        calls_of,
    )
    from custodian_runtime.writes._origin import bound, canon_identity, hub_location, hub_origin
    from custodian_runtime.writes._preflight import check_canon, check_memory, check_run
    from custodian_runtime.writes._send import Probed, Sent, Write, probe_closed, send, task_state
    from custodian_runtime.writes._summary import SUMMARY_EVENTS, read_summary

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_attributes(globals())
