"""The approval queue: its disk half (`store.py`), a person's commands, an approved item executed.

`approvals_command` carries out `custodian approvals list|show|approve|reject|repair` from a
typed request; `decide_approve` and `decide_reject` are what the CLI and the review page both call.
Every verdict is the core's (`core.approvals.verdicts`); an approved write is sent through
`writes.send`, the one write chain a run shares, and the approved dispatch table
(`writes.APPROVED_CALLS`) only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from custodian_runtime._lazy import lazy_attributes

if TYPE_CHECKING:
    from custodian_runtime.approvals._commands import (
        ApprovalsRequest,
        ApproveRequest,
        ListRequest,
        RejectRequest,
        ShowRequest,
        approvals_command,
        carry_out_recorded_decisions,
        decide_approve,
        decide_reject,
    )
    from custodian_runtime.approvals._execute import (
        configured_hub,
        decision_site,
        execute,
        hub_client,
        needs_hub,
        seen_for,
    )
    from custodian_runtime.approvals._repair import (
        RepairRequest,
        disagreement_lines,
        ledger_disagreements,
        repair_command,
    )
    from custodian_runtime.approvals._report import DecisionReport
    from custodian_runtime.approvals.derived import heal_items
    from custodian_runtime.approvals.store import ApprovalStore

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_attributes(globals())
