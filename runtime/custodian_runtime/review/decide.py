"""Approve or reject from the page through the very functions `custodian approvals` runs."""

from __future__ import annotations

from dataclasses import dataclass

from custodian_runtime.approvals import decide_approve, decide_reject
from custodian_runtime.clock import utc_now
from custodian_runtime.errors import CustodianError
from custodian_runtime.memory.approvals import ApprovalStore
from custodian_runtime.settings import Settings


@dataclass(frozen=True)
class Decided:
    """What a decision came to: the CLI's exit code and the line it prints (or its error)."""

    approval_id: str
    decision: str
    exit_code: int
    message: str

    @property
    def ok(self) -> bool:
        """True when the decision was carried out as asked."""
        return self.exit_code == 0


def decide(
    settings: Settings, approval_id: str, decision: str, by: str, reason: str | None
) -> Decided:
    """Approve (with `reason` as the note) or reject (with `reason`) one item, as the CLI does."""
    store = ApprovalStore(settings.memory_dir, settings.seal_key)
    now = utc_now()
    try:
        if decision == "reject":
            done = decide_reject(settings, store, approval_id, by, reason or "", now)
        else:
            done = decide_approve(settings, store, approval_id, by, reason, now)
    except CustodianError as exc:
        return Decided(approval_id, decision, exc.exit_code, exc.message)
    return Decided(approval_id, decision, done.exit_code, done.message)
