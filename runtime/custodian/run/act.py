"""Act: send the authorized writes, queue what needs a person, and journal every step.

Every write travels one chain: authorized (journaled before dispatch, with its idempotency key)
-> dispatched -> receipt, failed or stale. Nothing here decides whether a write may happen. Each
step returns one `ItemOutcome` per plan item it handled; the run assembles them once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from custodian.canon import current_sha256
from custodian.core import journal as J
from custodian.core import outcomes
from custodian.core.approval_history import ApprovalHistory
from custodian.core.approvals import approval_id_for, history_for, new_item
from custodian.core.authority import Ruling, idempotency_key, precondition
from custodian.core.authority_path import ReconcileStep, escalation, reconcile_step
from custodian.core.budgets import RecentWrites
from custodian.core.contract import DomainSummary, ProgressEvent, Task
from custodian.core.journal_records import parse_at
from custodian.core.outcomes import (
    STATUS_WRITES,
    ItemOutcome,
    OutcomeKind,
    planned_on,
    stale_message,
    task_changed,
)
from custodian.core.own_writes import OwnWrite
from custodian.core.policy import Policy
from custodian.errors import ConfigError, HubError, HubPreconditionFailed
from custodian.llm.base import Completion
from custodian.memory.approvals import ApprovalStore
from custodian.memory.run_journal import Journal
from custodian.phase_log import PhaseLog
from custodian.run.dispatch import APPROVED_CALLS, SANCTIONED_CALLS, perform
from custodian.run.origin import canon_identity, hub_identity
from custodian.settings import Settings
from custodian.statehub.client import StateHubClient

ALL_CALLS = {**SANCTIONED_CALLS, **APPROVED_CALLS}


@dataclass(frozen=True)
class Sent:
    """What one write came to: a hub id, an error, or stale (the task changed under the run)."""

    hub_id: str | None = None
    error: str | None = None
    stale: str | None = None
    current_status: str | None = None

    @property
    def kind(self) -> OutcomeKind:
        """executed, failed or stale."""
        return "stale" if self.stale else "failed" if self.error else "executed"


def send(
    journal: Journal,
    client: StateHubClient,
    *,
    index: Any,
    operation: str,
    params: dict[str, Any],
    run_id: str,
    key: str,
    extra: dict[str, Any] | None = None,
    observed_task: Task | None = None,
) -> Sent:
    """dispatched -> the hub call -> receipt, failed or stale.

    A status write goes out only on the state it was planned on (`observed_task`): with the
    observed version as `If-Match`, or, from a hub without versions, after reading the task again.
    """
    extra = extra or {}
    journal.append("dispatched", {"index": index, "idempotency_key": key, **extra})
    try:
        changed = _changed_since(client, observed_task)
        if changed is not None:
            return _stale(journal, index, observed_task, changed, extra)
        version = observed_task.version if observed_task is not None else None
        write = perform(
            ALL_CALLS,
            client,
            operation,
            params,
            run_id=run_id,
            idempotency_key=key,
            if_match=version,
        )
    except HubPreconditionFailed as exc:
        return _stale(journal, index, observed_task, exc.current, extra)
    except HubError as exc:
        journal.append(
            "failed",
            {"index": index, "error": exc.message, "status": exc.status, "code": exc.code, **extra},
        )
        return Sent(error=exc.message)
    except (KeyError, ValueError) as exc:
        # Raised before any request left (unknown operation, bad params). Close the chain, or
        # every later run would reconcile it and fail the same way.
        message = f"{operation} cannot be sent to the hub with these params ({exc!r})"
        journal.append(
            "failed", {"index": index, "error": message, "status": None, "code": None, **extra}
        )
        return Sent(error=message)
    hub_id = getattr(write.resource, "id", None)
    after = _task_state(write.resource) if isinstance(write.resource, Task) else None
    journal.append(
        "receipt",
        {
            "index": index,
            "status_code": write.status_code,
            "hub_id": hub_id,
            "replayed": write.replayed,
            "response_sha256": write.response_sha256,
            "attempts": write.attempts,
            # The task as the write left it: a later change by someone else shows against it.
            **({"task_after": after} if after is not None else {}),
            **extra,
        },
    )
    return Sent(hub_id=hub_id)


def _changed_since(client: StateHubClient, observed: Task | None) -> Task | None:
    """From a hub without task versions: the task as it is now, if it changed since observed."""
    if observed is None or observed.version is not None:
        return None
    current = client.get_task(observed.id)
    return current if task_changed(observed, current) else None


def _stale(
    journal: Journal,
    index: int,
    observed: Task | None,
    current: Task | None,
    extra: dict[str, Any],
) -> Sent:
    observed_status = observed.status if observed is not None else "unknown"
    current_status = current.status if current is not None else None
    message = stale_message(observed_status, current_status)
    journal.append(
        "stale",
        {
            "index": index,
            "error": message,
            "observed": _task_state(observed),
            "current": _task_state(current),
            **extra,
        },
    )
    return Sent(stale=message, current_status=current_status)


def _task_state(task: Task | None) -> dict[str, Any] | None:
    if task is None:
        return None
    return {
        "status": task.status,
        "updated_at": task.updated_at.isoformat(),
        "version": task.version,
    }


@dataclass(frozen=True)
class Reconciling:
    """What reconciling needs from the run: its id, the observation now, where to write."""

    run_id: str
    observed: DomainSummary
    journal: Journal
    client: StateHubClient
    now: datetime
    # The configured hub and canon (origin.bound); an open write of another hub is not settled.
    bound: Mapping[str, str | None] = field(default_factory=dict)


def reconcile(
    history: list[J.Record], ctx: Reconciling, log: PhaseLog, stop: Any
) -> list[dict[str, Any]]:
    """Settle each write a killed run left open: found on the hub, re-sent, or closed.

    The core decides (`reconcile_step`); a write is re-sent, with its original key, only when
    the record chain proves it and the authority allows it on the observation now. Returns one
    report per item for the summary and the note.
    """
    reports: list[dict[str, Any]] = []
    _refuse_other_hub(J.unfinished_items(history), ctx.bound.get("hub"))
    for pending in J.unfinished_items(history):
        if stop:
            break
        step = reconcile_step(pending, ctx.observed, _events_for(ctx.client, pending), ctx.now)
        ctx.journal.append(
            "reconciled",
            {
                "run_id_of_the_interrupted_run": pending.run_id,
                "index": pending.index,
                "idempotency_key": pending.idempotency_key,
                "action": step.action,
                "reason": step.reason,
            },
        )
        report = {"run": pending.run_id, "index": pending.index, "operation": pending.operation}
        report |= _settle_one(pending, step, ctx, len(reports))
        reports.append(report)
        log.line(
            "reconcile", report["outcome"], **{k: v for k, v in report.items() if k != "outcome"}
        )
        if report["outcome"] == "failed":
            raise HubError(
                f"could not finish a write left by run {pending.run_id}: {report['error']}; "
                "nothing new was attempted"
            )
    return reports


def _refuse_other_hub(pending: Sequence[J.PendingWrite], hub: str | None) -> None:
    """ConfigError (nothing sent) when a killed run left a write open on another hub."""
    for write in pending:
        if write.hub is not None and hub is not None and write.hub != hub:
            raise ConfigError(
                f"run {write.run_id} authorized {write.operation} on hub {write.hub}, which is "
                f"not settled, and this run is configured with hub {hub}: it is neither "
                f"re-sent here nor closed. Run once against {write.hub} to settle it",
                setting="STATE_HUB_URL",
            )


def _observed_task(pending: J.PendingWrite, observed: DomainSummary) -> Task | None:
    if pending.operation not in STATUS_WRITES:
        return None
    task_id = pending.params.get("task_id")
    return next((t for ws in observed.workstreams for t in ws.tasks if t.id == task_id), None)


def _events_for(client: StateHubClient, pending: J.PendingWrite) -> tuple[ProgressEvent, ...]:
    # The run's mark on an event proves it landed; the domain summary shows only recent ones.
    workstream = pending.params.get("workstream_id")
    if pending.operation != "add_progress_event" or not isinstance(workstream, str):
        return ()
    return client.list_events(workstream_id=workstream, limit=1000)


def _settle_one(
    pending: J.PendingWrite, step: ReconcileStep, ctx: Reconciling, position: int
) -> dict[str, Any]:
    marker = {"index": pending.index, "reconciles": pending.run_id}
    if step.action == "found":
        ctx.journal.append(
            "receipt",
            {**marker, "status_code": None, "hub_id": step.hub_id, "replayed": False,
             "response_sha256": None, "attempts": 0, "found_on_hub": True},
        )  # fmt: skip
        return {"outcome": "found", "hub_id": step.hub_id, "reason": step.reason}
    if step.action == "resend":
        # A status write goes out only on the task as observed now (If-Match, or a re-read).
        sent = send(
            ctx.journal,
            ctx.client,
            index=pending.index,
            operation=pending.operation,
            params=dict(pending.params),
            run_id=pending.run_id,
            key=pending.idempotency_key,
            extra={"reconciles": pending.run_id},
            observed_task=_observed_task(pending, ctx.observed),
        )
        outcome = {"executed": "resent", "failed": "failed", "stale": "stale"}[sent.kind]
        return {"outcome": outcome, "hub_id": sent.hub_id, "error": sent.error or sent.stale}
    ctx.journal.append(
        "failed",
        {**marker, "error": f"not sent: {step.reason}", "status": None, "code": None,
         "closed": step.action},
    )  # fmt: skip
    report: dict[str, Any] = {"outcome": step.action, "reason": f"not sent: {step.reason}"}
    if step.action == "expired":
        report["flag"] = _escalate(pending, step, ctx, f"reconcile-{position}")
    return report


def _escalate(pending: J.PendingWrite, step: ReconcileStep, ctx: Reconciling, index: str) -> Any:
    """Flag the write's task for a person, through the same authority and chain as any write."""
    item = escalation(pending, step.reason, ctx.observed)
    if item is None:
        return None
    ctx.journal.append(
        "ruling", {**ruling_data(Ruling(item, "execute", step.reason)), "index": index}
    )
    key = idempotency_key(ctx.run_id, f"{index}-{item.fingerprint}")
    ctx.journal.append(
        "authorized",
        {"index": index, "operation": item.operation, "params": dict(item.params),
         "fingerprint": item.fingerprint, "idempotency_key": key, "by": "policy",
         **ctx.bound},
    )  # fmt: skip
    sent = send(
        ctx.journal, ctx.client, index=index, operation=item.operation,
        params=dict(item.params), run_id=ctx.run_id, key=key,
    )  # fmt: skip
    return sent.hub_id


def policy_and_history(
    settings: Settings, store: ApprovalStore, now: datetime, domain: str
) -> tuple[Policy, ApprovalHistory]:
    """The configured caps, and what the domain's approval queue holds or has refused."""
    items = store.all(domain)
    policy = settings.limits
    return policy, history_for(items, domain, now)


EVENT = "add_progress_event"


def recent_writes(policy: Policy, writes: Sequence[OwnWrite], now: datetime) -> RecentWrites:
    """Custodian's own writes that the rolling budgets or the deference window still count."""
    budget_start = now - timedelta(hours=policy.budget_window_hours)
    defer_start = now - timedelta(days=policy.defer_days)

    def counts(w: OwnWrite) -> bool:
        # Events count only for the budget; status writes and flags also for the deference.
        at = parse_at(w.at)
        return at > budget_start or (w.operation != EVENT and at > defer_start)

    return RecentWrites(now, tuple(w for w in writes if counts(w)))


def ruling_data(ruling: Ruling) -> dict[str, Any]:
    """The journal's `ruling` record for one item."""
    item = ruling.item
    return {
        "index": item.index,
        "operation": item.operation,
        "target": item.target,
        "params": dict(item.params),
        "fingerprint": item.fingerprint,
        "outcome": ruling.outcome,
        "reason": ruling.reason,
    }


def outcome_counts(rulings: tuple[Ruling, ...]) -> dict[str, int]:
    """How many items each ruling outcome got."""
    counts = {"execute": 0, "queue": 0, "deny": 0}
    for r in rulings:
        counts[r.outcome] += 1
    return counts


def execute(
    rulings: tuple[Ruling, ...],
    observed: DomainSummary,
    journal: Journal,
    client: StateHubClient,
    run_id: str,
    stop: Any,
    bound: Mapping[str, str | None] | None = None,
) -> tuple[ItemOutcome, ...]:
    """Send each `execute` ruling through the authority chain, in plan order; one outcome each.

    `bound` (origin.bound: the hub and canon) goes into every `authorized` record.
    """
    done: list[ItemOutcome] = []
    for ruling in (r for r in rulings if r.outcome == "execute"):
        if stop:
            # Never authorized, so not a failure: the note lists it as not sent, the next run
            # re-plans from the hub's state, and the counts match the journal's failed records.
            done.append(ItemOutcome.of(ruling, "not_sent"))
            continue
        done.append(_execute_one(ruling, observed, journal, client, run_id, bound or {}))
    return tuple(done)


def _execute_one(
    ruling: Ruling,
    observed: DomainSummary,
    journal: Journal,
    client: StateHubClient,
    run_id: str,
    bound: Mapping[str, str | None],
) -> ItemOutcome:
    item = ruling.item
    key = idempotency_key(run_id, item.fingerprint)
    task = planned_on(ruling, observed)
    journal.append(
        "authorized",
        {
            "index": item.index,
            "operation": item.operation,
            "params": dict(item.params),
            "fingerprint": item.fingerprint,
            "idempotency_key": key,
            "by": "policy",
            **bound,
            **({"planned_on": _task_state(task)} if task is not None else {}),
        },
    )
    sent = send(
        journal,
        client,
        index=item.index,
        operation=item.operation,
        params=dict(item.params),
        run_id=run_id,
        key=key,
        observed_task=task,
    )
    return ItemOutcome.of(
        ruling,
        sent.kind,
        hub_id=sent.hub_id,
        error=sent.stale or sent.error,
        current_status=sent.current_status,
    )


def enqueue(
    rulings: tuple[Ruling, ...],
    observed: DomainSummary,
    store: ApprovalStore,
    journal: Journal,
    run_id: str,
    settings: Settings,
    now: datetime,
) -> tuple[ItemOutcome, ...]:
    """Write each `queue` ruling to the approval queue, with the state it was proposed under."""
    taken = set(store.ids())
    done: list[ItemOutcome] = []
    for ruling in (r for r in rulings if r.outcome == "queue"):
        item = ruling.item
        approval = new_item(
            approval_id=approval_id_for(item.fingerprint, taken),
            domain=observed.domain,
            operation=item.operation,
            params=dict(item.params),
            rationale=item.reason,
            run_id=run_id,
            fingerprint=item.fingerprint,
            precondition=_precondition(item, observed, settings),
            now=now,
            ttl_days=settings.limits.approval_ttl_days,
            hub=hub_identity(settings),
            canon=canon_identity(settings.canon_dir),
        )
        taken.add(approval.id)
        store.save(approval)
        journal.append(
            "queued",
            {"index": item.index, "approval_id": approval.id, "fingerprint": item.fingerprint},
        )
        done.append(ItemOutcome.of(ruling, "queued", approval_id=approval.id))
    return tuple(done)


def _precondition(item: Any, observed: DomainSummary, settings: Settings) -> dict[str, Any]:
    # A canon write is proposed against the file as it is now, which the hub does not hold.
    if item.operation == "write_canon" and isinstance(item.params.get("path"), str):
        return {"file_sha256": current_sha256(settings.canon_dir, item.params["path"])}
    return precondition(item, observed)


def collect_denied(rulings: tuple[Ruling, ...]) -> tuple[ItemOutcome, ...]:
    """The outcome of every denial."""
    return outcomes.denied(rulings)


def report_dry_run(rulings: tuple[Ruling, ...]) -> tuple[ItemOutcome, ...]:
    """What would happen to each item, without doing any of it."""
    return outcomes.assemble(rulings, outcomes.would(rulings))


def usage_dict(completion: Completion) -> dict[str, Any]:
    """Tokens and cost as reported."""
    u = completion.usage
    return {
        "input_tokens": u.input_tokens,
        "output_tokens": u.output_tokens,
        "cost_usd": u.cost_usd,
    }


def response_data(completion: Completion) -> dict[str, Any]:
    """The journal's `model_response` record: the raw text, kept whole."""
    return {
        "text": completion.text,
        "provider": completion.provider,
        "model": completion.model,
        "usage": usage_dict(completion),
        "request_id": completion.request_id,
    }
