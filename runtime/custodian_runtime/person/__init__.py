"""A person's side: the queue's commands, an approved item executed, and a person's standing.

`approvals_command` carries out `custodian approvals list|show|approve|reject|repair` from a
typed request; `decide_approve` and `decide_reject` are what the CLI and the review page both call.
Every verdict is the core's (`core.person.verdicts`); an approved write is sent through
`writes.send`, the one write chain a run shares, and the approved dispatch table
(`writes.APPROVED_CALLS`) only. A person's modes and grants are words in the journal
(`standing_store.py`), read again at each write; `standing.py` is `custodian policy` and
`custodian grants`. The queue's files are `approvals/`, below the journal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from custodian_runtime._lazy import lazy_attributes

if TYPE_CHECKING:
    from custodian_runtime.person._approvals import (
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
    from custodian_runtime.person._execute import (
        configured_hub,
        decision_site,
        execute,
        hub_client,
        needs_hub,
        seen_for,
    )
    from custodian_runtime.person._repair import (
        RepairRequest,
        disagreement_lines,
        ledger_disagreements,
        repair_command,
    )
    from custodian_runtime.person._report import DecisionReport
    from custodian_runtime.person.derived import heal_items
    from custodian_runtime.person.shadow_log import shadow_log
    from custodian_runtime.person.standing import (
        ALL,
        Issue,
        Issued,
        Revoked,
        agreement_rows,
        expiry,
        hub_now,
        issue,
        issue_grant,
        list_grants,
        report,
        revoke,
        revoke_grant,
        set_mode,
        show,
        suggested,
        write_json,
    )
    from custodian_runtime.person.standing_store import StandingStore

__all__ = [
    "ALL",
    "ApprovalsRequest",
    "ApproveRequest",
    "DecisionReport",
    "Issue",
    "Issued",
    "ListRequest",
    "RejectRequest",
    "RepairRequest",
    "Revoked",
    "ShowRequest",
    "StandingStore",
    "agreement_rows",
    "approvals_command",
    "carry_out_recorded_decisions",
    "configured_hub",
    "decide_approve",
    "decide_reject",
    "decision_site",
    "disagreement_lines",
    "execute",
    "expiry",
    "heal_items",
    "hub_client",
    "hub_now",
    "issue",
    "issue_grant",
    "ledger_disagreements",
    "list_grants",
    "needs_hub",
    "repair_command",
    "report",
    "revoke",
    "revoke_grant",
    "seen_for",
    "set_mode",
    "shadow_log",
    "show",
    "suggested",
    "write_json",
]

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_attributes(
        __name__,
        globals(),
        {
            **dict.fromkeys(
                (
                    "ApprovalsRequest",
                    "ApproveRequest",
                    "ListRequest",
                    "RejectRequest",
                    "ShowRequest",
                    "approvals_command",
                    "carry_out_recorded_decisions",
                    "decide_approve",
                    "decide_reject",
                ),
                "_approvals",
            ),
            **dict.fromkeys(
                (
                    "execute",
                    "decision_site",
                    "hub_client",
                    "configured_hub",
                    "needs_hub",
                    "seen_for",
                ),
                "_execute",
            ),
            **dict.fromkeys(
                ("RepairRequest", "disagreement_lines", "ledger_disagreements", "repair_command"),
                "_repair",
            ),
            **dict.fromkeys(
                (
                    "ALL",
                    "Issue",
                    "Issued",
                    "Revoked",
                    "agreement_rows",
                    "expiry",
                    "hub_now",
                    "issue",
                    "issue_grant",
                    "list_grants",
                    "report",
                    "revoke",
                    "revoke_grant",
                    "set_mode",
                    "show",
                    "suggested",
                    "write_json",
                ),
                "standing",
            ),
            "DecisionReport": "_report",
            "heal_items": "derived",
            "shadow_log": "shadow_log",
            "StandingStore": "standing_store",
        },
    )
