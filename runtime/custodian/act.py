"""Act: send the authorized writes, queue what needs a person, and journal every step.

Every write travels one chain: authorized (journaled before dispatch, with its idempotency key)
-> dispatched -> receipt or failed. Nothing here decides whether a write may happen.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from custodian.canon_write import current_sha256
from custodian.core import journal as J
from custodian.core.approvals import (
    approval_id_for,
    new_item,
    pending_by_fingerprint,
    rejected_by_fingerprint,
)
from custodian.core.authority import ApprovalHistory, Policy, Ruling, idempotency_key, precondition
from custodian.core.contract import DomainSummary
from custodian.dispatch import APPROVED_CALLS, SANCTIONED_CALLS, perform
from custodian.errors import HubError
from custodian.llm.base import Completion
from custodian.memory.approvals import ApprovalStore
from custodian.memory.run_journal import Journal
from custodian.runlog import ActionLine, PhaseLog, RunResult
from custodian.settings import Settings
from custodian.statehub.client import StateHubClient

ALL_CALLS = {**SANCTIONED_CALLS, **APPROVED_CALLS}


def send(
    journal: Journal,
    client: StateHubClient,
    *,
    index: int,
    operation: str,
    params: dict[str, Any],
    run_id: str,
    key: str,
    extra: dict[str, Any] | None = None,
) -> tuple[str | None, str | None]:
    """dispatched -> the hub call -> receipt or failed; returns (hub id, error message)."""
    extra = extra or {}
    journal.append("dispatched", {"index": index, "idempotency_key": key, **extra})
    try:
        write = perform(ALL_CALLS, client, operation, params, run_id=run_id, idempotency_key=key)
    except HubError as exc:
        journal.append(
            "failed",
            {"index": index, "error": exc.message, "status": exc.status, "code": exc.code, **extra},
        )
        return None, exc.message
    except (KeyError, ValueError) as exc:
        # Raised before any request left (unknown operation, bad params). Close the chain, or
        # every later run would reconcile it and fail the same way.
        message = f"{operation} cannot be sent to the hub with these params ({exc!r})"
        journal.append(
            "failed", {"index": index, "error": message, "status": None, "code": None, **extra}
        )
        return None, message
    hub_id = getattr(write.resource, "id", None)
    journal.append(
        "receipt",
        {
            "index": index,
            "status_code": write.status_code,
            "hub_id": hub_id,
            "replayed": write.replayed,
            "response_sha256": write.response_sha256,
            "attempts": write.attempts,
            **extra,
        },
    )
    return hub_id, None


def reconcile(
    history: list[J.Record], journal: Journal, client: StateHubClient, log: PhaseLog, stop: Any
) -> None:
    """Re-send, with the same key, each write a killed run authorized but never saw answered."""
    for pending in J.unfinished_items(history):
        if stop:
            return
        journal.append(
            "reconciled",
            {
                "run_id_of_the_interrupted_run": pending.run_id,
                "index": pending.index,
                "idempotency_key": pending.idempotency_key,
            },
        )
        hub_id, error = send(
            journal,
            client,
            index=pending.index,
            operation=pending.operation,
            params=dict(pending.params),
            run_id=pending.run_id,
            key=pending.idempotency_key,
            extra={"reconciles": pending.run_id},
        )
        log.line(
            "reconcile",
            "failed" if error else "ok",
            run=pending.run_id,
            index=pending.index,
            hub_id=hub_id,
            error=error,
        )
        if error:
            raise HubError(
                f"could not finish a write left by run {pending.run_id}: {error}; "
                "nothing new was attempted"
            )


def policy_and_history(
    settings: Settings, store: ApprovalStore, now: datetime
) -> tuple[Policy, ApprovalHistory]:
    """The configured caps, and what the approval queue already holds or has refused."""
    items = store.all()
    limits = settings.limits
    policy = Policy(
        max_events=limits.max_events,
        max_status_updates=limits.max_status_updates,
        max_flags=limits.max_flags,
        max_queued=limits.max_queued,
    )
    history = ApprovalHistory(
        pending=pending_by_fingerprint(items, now), rejected=rejected_by_fingerprint(items)
    )
    return policy, history


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
    """How many items each outcome got."""
    counts = {"execute": 0, "queue": 0, "deny": 0}
    for r in rulings:
        counts[r.outcome] += 1
    return counts


def execute(
    rulings: tuple[Ruling, ...],
    journal: Journal,
    client: StateHubClient,
    result: RunResult,
    stop: Any,
) -> None:
    """Send each `execute` ruling through the authority chain, in plan order."""
    for ruling in (r for r in rulings if r.outcome == "execute"):
        item = ruling.item
        line = ActionLine(item.operation, item.target, ruling.reason)
        if stop:
            # Never authorized, so not a failure: the note lists it as not sent, the next run
            # re-plans from the hub's state, and the counts match the journal's failed records.
            continue
        key = idempotency_key(result.run_id, item.fingerprint)
        journal.append(
            "authorized",
            {
                "index": item.index,
                "operation": item.operation,
                "params": dict(item.params),
                "fingerprint": item.fingerprint,
                "idempotency_key": key,
                "by": "policy",
            },
        )
        hub_id, error = send(
            journal,
            client,
            index=item.index,
            operation=item.operation,
            params=dict(item.params),
            run_id=result.run_id,
            key=key,
        )
        if error:
            result.failed.append(ActionLine(item.operation, item.target, error))
        else:
            result.executed.append(
                ActionLine(line.operation, line.target, line.reason, hub_id=hub_id)
            )


def enqueue(
    rulings: tuple[Ruling, ...],
    observed: DomainSummary,
    store: ApprovalStore,
    journal: Journal,
    result: RunResult,
    settings: Settings,
    now: datetime,
) -> None:
    """Write each `queue` ruling to the approval queue, with the state it was proposed under."""
    taken = set(store.ids())
    for ruling in (r for r in rulings if r.outcome == "queue"):
        item = ruling.item
        approval = new_item(
            approval_id=approval_id_for(item.fingerprint, taken),
            domain=result.domain,
            operation=item.operation,
            params=dict(item.params),
            rationale=item.reason,
            run_id=result.run_id,
            fingerprint=item.fingerprint,
            precondition=_precondition(item, observed, settings),
            now=now,
            ttl_days=settings.limits.approval_ttl_days,
        )
        taken.add(approval.id)
        store.save(approval)
        journal.append(
            "queued",
            {"index": item.index, "approval_id": approval.id, "fingerprint": item.fingerprint},
        )
        result.queued.append(
            ActionLine(item.operation, item.target, ruling.reason, approval_id=approval.id)
        )


def _precondition(item: Any, observed: DomainSummary, settings: Settings) -> dict[str, Any]:
    # A canon write is proposed against the file as it is now, which the hub does not hold.
    if item.operation == "write_canon" and isinstance(item.params.get("path"), str):
        return {"file_sha256": current_sha256(settings.canon_dir, item.params["path"])}
    return precondition(item, observed)


def collect_denied(rulings: tuple[Ruling, ...], result: RunResult) -> None:
    """Copy the denials into the result."""
    for r in rulings:
        if r.outcome == "deny":
            result.denied.append(ActionLine(r.item.operation, r.item.target, r.reason))


def report_dry_run(result: RunResult, rulings: tuple[Ruling, ...]) -> None:
    """Fill the result with what would happen, without doing any of it."""
    for r in rulings:
        line = ActionLine(r.item.operation, r.item.target, r.reason)
        {"execute": result.executed, "queue": result.queued, "deny": result.denied}[
            r.outcome
        ].append(line)


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
