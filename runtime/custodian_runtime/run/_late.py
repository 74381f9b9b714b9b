"""Closed writes whose value the hub shows: proven landed, or not (core/fold/late_landings.py).

A proven one (its event's run mark, or the hub replaying its key to a probe) is journaled once as
a late `receipt`, its item made executed, and reported for a person. One not proven (the probe
answered 412 without a replay, or no safe probe exists) is journaled once as `same_value`: the
person's decision stands, and the note says the hub shows the same value, set by someone else.
The probe is the write's own key re-sent through the one chain with the If-Match of the version
it carried, which is gone: it can apply nothing. Nothing else is sent to the hub.
"""

from __future__ import annotations

from typing import Any

from custodian_runtime.core.fold import api as core_journal
from custodian_runtime.core.fold.late_landings import (
    FOUND_LATE,
    SAME_VALUE,
    LateLanding,
    late_landings,
    probe_refusal,
)
from custodian_runtime.core.journal.kinds import SameValue
from custodian_runtime.core.person.settle import executed_before, found_receipt
from custodian_runtime.core.ruling.reconcile import authority_of
from custodian_runtime.core.standing.record import standing_of
from custodian_runtime.run._context import RunContext
from custodian_runtime.run.observe import Observation
from custodian_runtime.writes import Write, calls_of, probe_closed


def record_late_landings(
    ctx: RunContext, history: list[core_journal.Record], observation: Observation
) -> tuple[dict[str, Any], ...]:
    """Settle each closed write whose value the hub shows, once: found late only when proven."""
    reports = []
    modes = standing_of(history).modes
    for landing in late_landings(history, observation.summary, ctx.now()):
        write = landing.closed.write
        ruled = probe_refusal(landing.closed, modes.of(write.operation), _item_status(ctx, write))
        report = _reconcile_late(ctx, landing, ruled)
        if report is not None:
            reports.append(report)
            ctx.log.line("reconcile", report["outcome"], run=report["run"], hub_id=landing.hub_id)
    return tuple(reports)


def _item_status(ctx: RunContext, write: core_journal.PendingWrite) -> str | None:
    """The status the journal gives the approval item the write was for (None: a write of
    Custodian's own, or an item the journal no longer speaks of)."""
    approval_id = write.approval.approval_id if write.approval is not None else None
    said = ctx.ledger.status_of(approval_id) if approval_id is not None else None
    return said.status if said is not None else None


def _reconcile_late(
    ctx: RunContext, landing: LateLanding, refusal: str | None
) -> dict[str, Any] | None:
    """The report of one closed write shown on the hub; None when the probe proved nothing.

    Ruled, then probed: a write that would not be sent now (refused, or its operation off) is
    never probed, since a probe through a gateway that drops If-Match is a write."""
    closed, proof = landing.closed, landing.proof
    if proof.proof == "proven":
        ctx.journal.write(found_receipt(closed.write, landing.hub_id, late=closed.how))
        return _found(ctx, landing, proof.reason)
    if proof.proof != "probe":
        return _same(ctx, landing, by_other=proof.proof == "not_landed", why=proof.reason)
    if refusal is not None:
        why = f"not probed: {refusal}; a person should check it"
        return _same(ctx, landing, by_other=False, why=why)
    write = closed.write
    probe = Write(
        write.index, write.operation, dict(write.params), write.run_id, write.idempotency_key,
        reconciles=write.run_id, if_match=proof.if_match,
    )  # fmt: skip
    calls = calls_of(authority_of(write))
    probed = probe_closed(ctx.journal, ctx.client, calls, probe, closed.how)
    if probed.hub_id is not None and probed.replayed:
        return _found(ctx, landing, "the hub replayed its key")
    if probed.hub_id is not None:
        # A 2xx without Idempotent-Replayed: the hub ignored If-Match and applied the probe.
        return _found(ctx, landing, "the probe itself was applied: the hub did not replay its "
                      "key and ignored the If-Match it carried")  # fmt: skip
    if probed.never_landed:
        why = (
            f"the hub did not replay its key and refused it at version {proof.if_match}, the "
            "version it carried: it never landed"
        )
        return _same(ctx, landing, by_other=True, why=why)
    ctx.log.line("reconcile", "probe_unanswered", run=write.run_id, error=probed.error)
    return None


def _found(ctx: RunContext, landing: LateLanding, proven_by: str) -> dict[str, Any]:
    closed = landing.closed
    _late_item(ctx, closed.write, landing.hub_id)
    reason = (
        f"closed ({closed.how}) at {closed.closed.ref}, but the hub shows it landed as "
        f"{landing.hub_id} (proven: {proven_by}): a person should check it"
    )
    return {**landing.report(), "outcome": FOUND_LATE, "reason": reason}


def _same(ctx: RunContext, landing: LateLanding, *, by_other: bool, why: str) -> dict[str, Any]:
    """Journal once that the hub shows the write's value and nothing proves it made it."""
    closed = landing.closed
    ctx.journal.write(
        SameValue(index=closed.write.index, reconciles=closed.write.run_id,
                  hub_id=landing.hub_id, closed=closed.how, by_other=by_other, reason=why)
    )  # fmt: skip
    return {**landing.report(), "outcome": SAME_VALUE, "by_other": by_other, "reason": why}


def _late_item(ctx: RunContext, write: core_journal.PendingWrite, hub_id: str) -> None:
    """A person's write found landed after it was closed: its item says executed."""
    approval = write.approval.approval_id if write.approval is not None else None
    if approval is None or approval not in ctx.approvals:
        return
    found_by = f"after it was closed, by run {ctx.run_id}"
    ctx.approvals.save(executed_before(ctx.approvals.get(approval), found_by, hub_id, ctx.now()))
