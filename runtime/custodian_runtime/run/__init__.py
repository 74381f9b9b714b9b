"""One run of Custodian: observe -> orient -> decide -> act -> record.

`run(settings)` is the whole pass; it returns a frozen `RunResult`. The step modules
(`observe`, `orient`, `decide`, `act`, `record`) each take the run's `RunContext` and what the
earlier steps returned, and return a value. The other names here are what the approvals, the
review page, the evals and the CLI share with the run: the one write chain (`send`), the
dispatch table of each authority, the summary read, the hub and canon identities, and the disk
checks made before anything is read or written.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from custodian_runtime._lazy import lazy_attributes

if TYPE_CHECKING:
    from custodian_runtime.run._context import RunContext
    from custodian_runtime.run._dispatch import APPROVED_CALLS, SANCTIONED_CALLS, Calls
    from custodian_runtime.run._origin import bound, canon_identity, hub_location, hub_origin
    from custodian_runtime.run._preflight import check_canon, check_memory, check_run
    from custodian_runtime.run._result import Known, RunResult
    from custodian_runtime.run._runner import run
    from custodian_runtime.run._send import Sent, send
    from custodian_runtime.run.observe import Observation, read_summary

__all__ = [
    "APPROVED_CALLS",
    "SANCTIONED_CALLS",
    "Calls",
    "Known",
    "Observation",
    "RunContext",
    "RunResult",
    "Sent",
    "bound",
    "canon_identity",
    "check_canon",
    "check_memory",
    "check_run",
    "hub_location",
    "hub_origin",
    "read_summary",
    "run",
    "send",
]

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_attributes(
        __name__,
        globals(),
        {
            **dict.fromkeys(("APPROVED_CALLS", "SANCTIONED_CALLS", "Calls"), "_dispatch"),
            **dict.fromkeys(("Known", "RunResult"), "_result"),
            **dict.fromkeys(("Observation", "read_summary"), "observe"),
            **dict.fromkeys(("RunContext",), "_context"),
            **dict.fromkeys(("Sent", "send"), "_send"),
            **dict.fromkeys(("bound", "canon_identity", "hub_location", "hub_origin"), "_origin"),
            **dict.fromkeys(("check_canon", "check_memory", "check_run"), "_preflight"),
            **dict.fromkeys(("run",), "_runner"),
        },
    )
