"""A person's side: the queue's commands, an approved item executed, and a person's standing.

`approvals_command` carries out `custodian approvals list|show|approve|reject|repair` from a
typed request; `decide_approve` and `decide_reject` are what the CLI and the review page both call.
Every verdict is the core's (`core.person.verdicts`); an approved write is sent through
`writes.send`, the one write chain a run shares, and the approved dispatch table
(`writes.APPROVED_CALLS`) only. A person's modes and grants are words in the journal, read
again at each write; `standing.py` is `custodian policy` and `custodian grants`. What a person
decided or said is kept on disk by `journal/person/`: the queue's item files, the inbox of words
kept while a run has the domain's lock, and the standing kept as words.
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
    from custodian_runtime.person._recorded import recorded_decisions
    from custodian_runtime.person._repair import (
        RepairRequest,
        disagreement_lines,
        ledger_disagreements,
        repair_command,
    )
    from custodian_runtime.person._report import DecisionReport
    from custodian_runtime.person.derived import heal_items
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

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_attributes(globals())
