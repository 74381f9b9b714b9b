"""Reconcile: settle the writes a killed run left open, before this run plans anything.

The core decides (`core.ruling.reconcile.reconcile_step`); this module reads the hub, re-sends
through the same chain as any write, and journals what it did.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from custodian_runtime.canon import current_sha256
from custodian_runtime.clock import new_nonce
from custodian_runtime.core.approvals.ledger import reconciled_status
from custodian_runtime.core.authority.authorize import Ruling
from custodian_runtime.core.authority.budgets import recent_writes
from custodian_runtime.core.authority.own_writes import OwnWrite
from custodian_runtime.core.authority.precondition import canon_target
from custodian_runtime.core.contract import DomainSummary, ProgressEvent, Task
from custodian_runtime.core.fold import api as core_journal
from custodian_runtime.core.fold.settle import write_ref
from custodian_runtime.core.journal import kinds
from custodian_runtime.core.journal.keys import escalation_key
from custodian_runtime.core.journal.kinds import Authorized, Failed, Stale
from custodian_runtime.core.operations import add_progress_event, status_writes
from custodian_runtime.core.outcomes import ruling_data
from custodian_runtime.core.person.settle import executed_before, found_receipt
from custodian_runtime.core.plan.extract import Plan
from custodian_runtime.core.ruling.path import Grounds, as_item
from custodian_runtime.core.ruling.proof import SET_BY_OTHER
from custodian_runtime.core.ruling.reconcile import (
    ReconcileStep,
    escalation,
    landed_on_hub,
    reconcile_step,
)
from custodian_runtime.core.standing.record import Standing, standing_of
from custodian_runtime.errors import ConfigError, HubError
from custodian_runtime.journal.person.queue import ApprovalStore
from custodian_runtime.journal.run_journal import Journal
from custodian_runtime.process.phase_log import PhaseLog
from custodian_runtime.process.stopping import StopFlag
from custodian_runtime.run._context import RunContext
from custodian_runtime.run._evidence import read_evidence
from custodian_runtime.run._late import record_late_landings
from custodian_runtime.run.decide import limits_and_history, standing_now
from custodian_runtime.run.observe import Observation, observe
from custodian_runtime.statehub.client import StateHubClient
from custodian_runtime.writes import SANCTIONED_CALLS, calls_of, send

# A re-send's outcome as reconcile reports it; `unknown` and `failed` stop the run.
_RESENT = {"executed": "resent", "failed": "failed", "stale": "stale", "unknown": "unknown"}
# The journal record each re-send outcome closes (or leaves open) the write with.
_SENT_KIND = {"executed": "receipt", "failed": "failed", "stale": "stale", "unknown": "unknown"}


@dataclass(frozen=True)
class Reconciled:
    """One report per write a killed run left open, and the domain as observed after them."""

    reports: tuple[dict[str, Any], ...]
    observation: Observation


def reconcile_open_writes(
    ctx: RunContext,
    history: list[core_journal.Record],
    observation: Observation,
    writes: Sequence[OwnWrite] = (),
) -> Reconciled:
    """Settle what a killed run left open; observe again if that wrote to the hub.

    Each write is ruled from the same grounds a fresh plan is: the caps, the approval queue's
    history, Custodian's own recent writes (`writes`, from the checkpoint) and the evidence.
    """
    late = record_late_landings(ctx, history, observation)
    if not core_journal.unfinished_items(history):
        return Reconciled(late, observation)
    now = ctx.now()
    limits, queue = limits_and_history(ctx, now)
    granted = any(p.grant_id for p in core_journal.unfinished_items(history))
    journaled = standing_of(history)
    hub_id = ctx.bound()["hub"] if granted else None
    recent = recent_writes(limits, writes, now)
    grounds = Grounds(limits, queue, None, recent, standing_now(ctx, journaled), hub_id, now)
    rc = Reconciling(
        ctx.run_id,
        observation.summary,
        ctx.journal,
        ctx.client,
        now,
        ctx.bound,
        grounds,
        ctx.canon_dir,
        ctx.approvals,
        lambda: standing_now(ctx, journaled),
    )
    reports = tuple(reconcile(history, rc, ctx.log, ctx.stop, writes))
    wrote = any(r["outcome"] == "resent" or r.get("flag") for r in reports)
    return Reconciled((*late, *reports), observe(ctx) if wrote else observation)


@dataclass(frozen=True)
class Reconciling:
    """What reconciling needs from the run: its id, the observation now, where to write."""

    run_id: str
    observed: DomainSummary
    journal: Journal
    client: StateHubClient
    now: datetime
    # The configured hub and canon (origin.bound), read when first called; an open write of
    # another hub is not settled.
    bound: Callable[[], Mapping[str, str | None]] = dict
    # What a fresh plan is ruled from besides the observation (evidence is read per write).
    grounds: Grounds = field(default_factory=Grounds)
    # The canon, whose file hash settles an approved canon write (None: not configured).
    canon_dir: Path | None = None
    # The approval queue: an approved write found on the hub makes its item executed.
    approvals: ApprovalStore | None = None
    # A person's standing, read again before each write (None: the grounds' standing).
    standing: Callable[[], Standing] | None = None


def reconcile(
    history: list[core_journal.Record],
    ctx: Reconciling,
    log: PhaseLog,
    stop: StopFlag,
    writes: Sequence[OwnWrite] = (),
) -> list[dict[str, Any]]:
    """Settle each write a killed run left open: found on the hub, re-sent, or closed.

    The core decides (`reconcile_step`); a write is re-sent, with its original key, only when
    the record chain proves it and the authority allows it on the observation now. Returns one
    report per item for the summary and the note.
    """
    reports: list[dict[str, Any]] = []
    _refuse_other_hub(core_journal.unfinished_items(history), ctx.bound, ctx.observed.domain)
    for pending in core_journal.unfinished_items(history):
        if stop:
            break
        grounds = _with_evidence(ctx, pending, history, writes)
        if ctx.standing is not None:  # a mode or revoke kept meanwhile binds this write
            grounds = replace(grounds, standing=ctx.standing())
        events = _events_for(ctx.client, pending)
        canon = _canon_sha256(ctx.canon_dir, pending)
        step = reconcile_step(pending, ctx.observed, events, ctx.now, grounds, canon_sha256=canon)
        ctx.journal.write(
            kinds.Reconciled(
                run_id_of_the_interrupted_run=pending.run_id,
                index=pending.index,
                idempotency_key=pending.idempotency_key,
                action=step.action,
                reason=step.reason,
            )
        )
        report = {"run": pending.run_id, "index": pending.index, "operation": pending.operation}
        report |= _reconcile_one(pending, step, replace(ctx, grounds=grounds), len(reports))
        reports.append(report)
        log.line(
            "reconcile", report["outcome"], **{k: v for k, v in report.items() if k != "outcome"}
        )
        if report["outcome"] in ("failed", "unknown"):
            raise HubError(
                f"could not finish a write left by run {pending.run_id}: {report['error']}; "
                "nothing new was attempted"
            )
    return reports


def _refuse_other_hub(
    pending: Sequence[core_journal.PendingWrite],
    bound: Callable[[], Mapping[str, str | None]],
    domain: str,
) -> None:
    """ConfigError (nothing sent) when a killed run left a write open on another hub: one
    bound to another hub_id, or, bound by URL, to another URL (core/authority/origin.same_hub)."""
    if not any(write.hub is not None for write in pending):
        return  # nothing to compare: the hub's identity is not asked for
    here = bound()
    hub = here.get("hub")
    for write in pending:
        if write.hub is None or hub is None or write.hub in (hub, here.get("hub_at")):
            continue
        raise ConfigError(
            f"run {write.run_id} authorized {write.operation} on hub {write.hub}, which is "
            f"not settled, and this run is configured with hub {hub}: it is neither "
            f"re-sent here nor closed. Run once against {write.hub_at or write.hub} to settle "
            "it; if that hub is gone, a person closes it by hand: custodian journal settle "
            f"{write_ref(domain, write)} --reason TEXT",
            setting="STATE_HUB_URL",
        )


def _observed_task(pending: core_journal.PendingWrite, observed: DomainSummary) -> Task | None:
    if pending.operation not in status_writes():
        return None
    task_id = pending.params.get("task_id")
    return next((t for ws in observed.workstreams for t in ws.tasks if t.id == task_id), None)


def _canon_sha256(canon_dir: Path | None, pending: core_journal.PendingWrite) -> str | None:
    path = canon_target(pending.operation, pending.params)
    return None if path is None or canon_dir is None else current_sha256(canon_dir, path)


def _with_evidence(
    ctx: Reconciling,
    pending: core_journal.PendingWrite,
    history: list[core_journal.Record],
    writes: Sequence[OwnWrite],
) -> Grounds:
    """The grounds, with the events the write cites read as a fresh plan reads them."""
    item = as_item(pending.operation, pending.params, pending.fingerprint)
    plan = Plan(prose="", observations=(), items=(item,), raw_json="")
    evidence, _ = read_evidence(ctx.client, plan, ctx.observed, history, writes)
    return replace(ctx.grounds, evidence=evidence)


def _events_for(
    client: StateHubClient, pending: core_journal.PendingWrite
) -> tuple[ProgressEvent, ...]:
    # The run's mark on an event proves it landed; the domain summary shows only recent ones.
    workstream = pending.params.get("workstream_id")
    if pending.operation != add_progress_event.SPEC.name or not isinstance(workstream, str):
        return ()
    return client.list_events(workstream_id=workstream, limit=1000)


def _reconcile_one(
    pending: core_journal.PendingWrite, step: ReconcileStep, ctx: Reconciling, position: int
) -> dict[str, Any]:
    marker = {"index": pending.index, "reconciles": pending.run_id}
    if step.action == "found":
        ctx.journal.write(found_receipt(pending, step.hub_id))
        _item_follows(ctx, pending, "receipt", landed=step.hub_id)
        return {"outcome": "found", "hub_id": step.hub_id, "reason": step.reason}
    if step.action == "probe":
        return _probe(pending, step, ctx)
    if step.action == "resend":
        # A status write goes out only on the task as observed now (If-Match, or a re-read).
        sent = send(
            ctx.journal,
            ctx.client,
            calls_of(step.authority),
            index=pending.index,
            operation=pending.operation,
            params=dict(pending.params),
            run_id=pending.run_id,
            key=pending.idempotency_key,
            reconciles=pending.run_id,
            observed_task=_observed_task(pending, ctx.observed),
            sent_before=pending.dispatched,
        )
        error = sent.error or sent.stale or sent.unknown
        _item_follows(ctx, pending, _SENT_KIND[sent.kind], landed=sent.hub_id)
        return {"outcome": _RESENT[sent.kind], "hub_id": sent.hub_id, "error": error}
    if step.action == "stale":
        ctx.journal.write(
            Stale(**marker, error=f"not sent: {step.reason}", observed=pending.planned_on,
                  current=None, closed="stale")
        )  # fmt: skip
        _item_follows(ctx, pending, "stale", closed=True)
        return {"outcome": "stale", "reason": f"not sent: {step.reason}"}
    ctx.journal.write(
        Failed(**marker, error=f"not sent: {step.reason}", status=None, code=None,
               closed=step.action)
    )  # fmt: skip
    _item_follows(ctx, pending, "failed", closed=True)
    report: dict[str, Any] = {"outcome": step.action, "reason": f"not sent: {step.reason}"}
    if step.action == "expired":
        report["flag"], withheld = _escalate(pending, step, ctx, f"reconcile-{position}")
        if withheld is not None:
            report["flag_withheld"] = withheld
    return report


def _probe(
    pending: core_journal.PendingWrite, step: ReconcileStep, ctx: Reconciling
) -> dict[str, Any]:
    """Ask the hub whether a status write landed: its key, body and carried If-Match again.

    That version is gone, so the re-send applies nothing: a replay proves the write landed
    (found), a 412 without one that it never did (closed stale). The status alone proves nothing.
    """
    sent = send(
        ctx.journal, ctx.client, calls_of(step.authority), index=pending.index,
        operation=pending.operation, params=dict(pending.params), run_id=pending.run_id,
        key=pending.idempotency_key, reconciles=pending.run_id, sent_before=pending.dispatched,
        if_match=step.if_match, planned_on=pending.planned_on,
    )  # fmt: skip
    if sent.kind == "executed":
        _item_follows(ctx, pending, "receipt", landed=sent.hub_id)
        reason = "the hub replayed its key: it landed"
        return {"outcome": "found", "hub_id": sent.hub_id, "reason": reason}
    if sent.kind != "stale":
        _item_follows(ctx, pending, _SENT_KIND[sent.kind])
        return {"outcome": _RESENT[sent.kind], "error": sent.error or sent.unknown}
    _item_follows(ctx, pending, "stale", closed=True)
    reason = f"the task moved since the write was authorized, and it never landed: {sent.stale}"
    shown = landed_on_hub(pending, ctx.observed, ())
    if shown is not None:
        reason += f"; {SET_BY_OTHER}"
        ctx.journal.write(
            kinds.SameValue(index=pending.index, reconciles=pending.run_id, hub_id=shown,
                            closed="stale", by_other=True, reason=reason)
        )  # fmt: skip
    return {"outcome": "stale", "reason": reason, "same_value": shown is not None}


def _item_follows(
    ctx: Reconciling,
    pending: core_journal.PendingWrite,
    kind: str,
    *,
    landed: str | None = None,
    closed: bool = False,
) -> None:
    """The approval item of a person's write says what the journal now says of it
    (core/approvals/ledger.py): executed when found or re-sent, as its closing record says."""
    approval = pending.approval.approval_id if pending.approval is not None else None
    if ctx.approvals is None or not isinstance(approval, str) or approval not in ctx.approvals:
        return
    item = ctx.approvals.get(approval)
    status = reconciled_status(item.status, kind, closed)
    if status is None or status == item.status:
        return
    if kind == "receipt" and landed is not None:
        found_by = f"by the reconcile of run {ctx.run_id}"
        ctx.approvals.save(executed_before(item, found_by, landed, ctx.now))
    else:
        note = f"its write was settled by the reconcile of run {ctx.run_id}"
        update = {"status": status, "decided_at": ctx.now, "decision_note": note}
        ctx.approvals.save(item.model_copy(update=update))


def _escalate(
    pending: core_journal.PendingWrite, step: ReconcileStep, ctx: Reconciling, index: str
) -> tuple[str | None, str | None]:
    """Flag the write's task for a person, through the same authority and chain as any write:
    the flag's hub id, or why the authority withholds it (a person set flag_for_human off)."""
    verdict = escalation(pending, step.reason, ctx.observed, ctx.grounds)
    if verdict is None:
        return None, None
    if not verdict.allowed:
        return None, f"no flag raised: {verdict.ruling.reason}"
    item = verdict.ruling.item
    ruled = ruling_data(Ruling(item, "execute", step.reason))
    ctx.journal.write(ruled.model_copy(update={"index": index}))
    nonce = new_nonce()
    key = escalation_key(ctx.run_id, index, item.fingerprint, nonce)
    ctx.journal.write(
        Authorized(index=index, operation=item.operation, params=dict(item.params),
                   fingerprint=item.fingerprint, idempotency_key=key, nonce=nonce,
                   by="policy", **ctx.bound())
    )  # fmt: skip
    sent = send(
        ctx.journal, ctx.client, SANCTIONED_CALLS, index=index, operation=item.operation,
        params=dict(item.params), run_id=ctx.run_id, key=key,
    )  # fmt: skip
    return sent.hub_id, None
