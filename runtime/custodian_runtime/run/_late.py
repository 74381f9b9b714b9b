"""A closed write the hub shows landed anyway: journaled once, its item made executed, and
reported for a person (core/journal/late_landings.py). Nothing is sent to the hub."""

from __future__ import annotations

from typing import Any

from custodian_runtime.core.approvals.settle import executed_before, found_receipt
from custodian_runtime.core.journal import api as core_journal
from custodian_runtime.core.journal.late_landings import FOUND_LATE, late_landings
from custodian_runtime.run._context import RunContext
from custodian_runtime.run.observe import Observation


def record_late_landings(
    ctx: RunContext, history: list[core_journal.Record], observation: Observation
) -> tuple[dict[str, Any], ...]:
    """Journal each closed write the hub shows landed anyway (once: a `receipt` marked late),
    make its approval item executed, and report it for a person. Nothing is sent to the hub."""
    reports = []
    for landing in late_landings(history, observation.summary):
        closed = landing.closed
        receipt = found_receipt(closed.write, landing.hub_id, late=closed.how)
        ctx.journal.write(receipt)
        _late_item(ctx, closed.write, landing.hub_id)
        report = landing.report()
        reason = (
            f"closed ({closed.how}) at {closed.closed.ref}, but the hub shows it landed as "
            f"{landing.hub_id}: a person should check it"
        )
        reports.append({**report, "outcome": FOUND_LATE, "reason": reason})
        ctx.log.line("reconcile", FOUND_LATE, run=closed.write.run_id, hub_id=landing.hub_id)
    return tuple(reports)


def _late_item(ctx: RunContext, write: core_journal.PendingWrite, hub_id: str) -> None:
    """A person's write found landed after it was closed: its item says executed."""
    approval = write.approval.approval_id if write.approval is not None else None
    if approval is None or approval not in ctx.approvals:
        return
    found_by = f"after it was closed, by run {ctx.run_id}"
    ctx.approvals.save(executed_before(ctx.approvals.get(approval), found_by, hub_id, ctx.now()))
