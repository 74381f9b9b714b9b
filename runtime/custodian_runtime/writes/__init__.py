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

__all__ = [
    "APPROVED_CALLS",
    "SANCTIONED_CALLS",
    "SUMMARY_EVENTS",
    "Calls",
    "Probed",
    "Sent",
    "Write",
    "bound",
    "calls_of",
    "canon_identity",
    "check_canon",
    "check_memory",
    "check_run",
    "hub_location",
    "hub_origin",
    "probe_closed",
    "read_summary",
    "send",
    "task_state",
]

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_attributes(
        __name__,
        globals(),
        {
            **dict.fromkeys(
                ("APPROVED_CALLS", "SANCTIONED_CALLS", "Calls", "calls_of"), "_dispatch"
            ),
            **dict.fromkeys(
                ("Probed", "Sent", "Write", "probe_closed", "send", "task_state"), "_send"
            ),
            **dict.fromkeys(("bound", "canon_identity", "hub_location", "hub_origin"), "_origin"),
            **dict.fromkeys(("check_canon", "check_memory", "check_run"), "_preflight"),
            **dict.fromkeys(("SUMMARY_EVENTS", "read_summary"), "_summary"),
        },
    )
