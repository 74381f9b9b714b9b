"""Act: send the authorized writes, queue what needs a person, and journal every step.

Every write travels one chain: authorized (journaled before dispatch, with its idempotency key)
-> dispatched -> receipt, failed or stale. Nothing here decides whether a write may happen. Each
step returns one `ItemOutcome` per plan item it handled; the run assembles them once.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from custodian_runtime.canon import current_sha256
from custodian_runtime.core import outcomes
from custodian_runtime.core.approvals import approval_id_for, new_item
from custodian_runtime.core.authority import Ruling
from custodian_runtime.core.contract import DomainSummary, Task
from custodian_runtime.core.keys import run_key
from custodian_runtime.core.outcomes import (
    ItemOutcome,
    OutcomeKind,
    planned_on,
    stale_message,
    task_changed,
)
from custodian_runtime.core.plan import ProposedItem
from custodian_runtime.core.precondition import canon_target, proposed_under
from custodian_runtime.errors import HubError, HubPreconditionFailed
from custodian_runtime.memory.run_journal import Journal
from custodian_runtime.run._context import RunContext
from custodian_runtime.run._dispatch import SANCTIONED_CALLS, Calls, perform
from custodian_runtime.run.observe import Observation
from custodian_runtime.statehub.client import HubWrite, StateHubClient


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
    calls: Calls,
    *,
    index: int | str,
    operation: str,
    params: dict[str, Any],
    run_id: str,
    key: str,
    extra: dict[str, Any] | None = None,
    observed_task: Task | None = None,
) -> Sent:
    """dispatched -> the hub call -> receipt, failed or stale; sent through `calls` only.

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
            calls,
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
        failed = {"error": exc.message, "status": exc.status, "code": exc.code}
        journal.append("failed", {"index": index, **failed, **extra})
        return Sent(error=exc.message)
    except (KeyError, ValueError) as exc:
        # Raised before any request left (unknown operation, bad params). Close the chain, or
        # every later run would reconcile it and fail the same way.
        message = f"{operation} cannot be sent to the hub with these params ({exc!r})"
        failed = {"error": message, "status": None, "code": None}
        journal.append("failed", {"index": index, **failed, **extra})
        return Sent(error=message)
    journal.append("receipt", {"index": index, **_receipt(write), **extra})
    return Sent(hub_id=getattr(write.resource, "id", None))


def _receipt(write: HubWrite[Any]) -> dict[str, Any]:
    """What the hub answered to one write, for its `receipt` record."""
    after = _task_state(write.resource) if isinstance(write.resource, Task) else None
    return {
        "status_code": write.status_code,
        "hub_id": getattr(write.resource, "id", None),
        "replayed": write.replayed,
        "response_sha256": write.response_sha256,
        "attempts": write.attempts,
        # The task as the write left it: a later change by someone else shows against it.
        **({"task_after": after} if after is not None else {}),
    }


def _changed_since(client: StateHubClient, observed: Task | None) -> Task | None:
    """From a hub without task versions: the task as it is now, if it changed since observed."""
    if observed is None or observed.version is not None:
        return None
    current = client.get_task(observed.id)
    return current if task_changed(observed, current) else None


def _stale(
    journal: Journal,
    index: int | str,
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


def act(
    ctx: RunContext, rulings: tuple[Ruling, ...], observation: Observation
) -> tuple[ItemOutcome, ...]:
    """Execute, queue and deny; one outcome per plan item, in plan order."""
    with ctx.log.phase("act") as info:
        sent = _execute(ctx, rulings, observation.summary)
        queued = _enqueue(ctx, rulings, observation.summary)
        done = outcomes.assemble(rulings, sent, queued, outcomes.denied(rulings))
        info.update(outcomes.counts(done))
    return done


def dry_run(rulings: tuple[Ruling, ...]) -> tuple[ItemOutcome, ...]:
    """What would happen to each item, without doing any of it."""
    return outcomes.assemble(rulings, outcomes.would(rulings))


def _execute(
    ctx: RunContext, rulings: tuple[Ruling, ...], observed: DomainSummary
) -> tuple[ItemOutcome, ...]:
    """Send each `execute` ruling through the authority chain, in plan order; one outcome each."""
    done: list[ItemOutcome] = []
    for ruling in (r for r in rulings if r.outcome == "execute"):
        if ctx.stop:
            # Never authorized, so not a failure: the note lists it as not sent, the next run
            # re-plans from the hub's state, and the counts match the journal's failed records.
            done.append(ItemOutcome.of(ruling, "not_sent"))
            continue
        done.append(_execute_one(ctx, ruling, observed))
    return tuple(done)


def _execute_one(ctx: RunContext, ruling: Ruling, observed: DomainSummary) -> ItemOutcome:
    item = ruling.item
    key = run_key(ctx.run_id, item.fingerprint)
    task = planned_on(ruling, observed)
    ctx.journal.append(
        "authorized",
        {
            "index": item.index,
            "operation": item.operation,
            "params": dict(item.params),
            "fingerprint": item.fingerprint,
            "idempotency_key": key,
            "by": "policy",
            **ctx.bound,
            **({"planned_on": _task_state(task)} if task is not None else {}),
        },
    )
    sent = send(
        ctx.journal,
        ctx.client,
        SANCTIONED_CALLS,
        index=item.index,
        operation=item.operation,
        params=dict(item.params),
        run_id=ctx.run_id,
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


def _enqueue(
    ctx: RunContext, rulings: tuple[Ruling, ...], observed: DomainSummary
) -> tuple[ItemOutcome, ...]:
    """Write each `queue` ruling to the approval queue, with the state it was proposed under."""
    taken = ctx.approvals  # an id whose file exists is taken; ids are never reused
    now = ctx.now()
    done: list[ItemOutcome] = []
    for ruling in (r for r in rulings if r.outcome == "queue"):
        item = ruling.item
        approval = new_item(
            approval_id=approval_id_for(item.fingerprint, taken),
            domain=observed.domain,
            operation=item.operation,
            params=dict(item.params),
            rationale=item.reason,
            run_id=ctx.run_id,
            fingerprint=item.fingerprint,
            precondition=proposed_under(item, observed, _canon_sha256(item, ctx.canon_dir)),
            now=now,
            ttl_days=ctx.limits.approval_ttl_days,
            hub=ctx.bound["hub"],
            canon=ctx.bound["canon"],
        )
        ctx.approvals.save(approval)
        ctx.journal.append(
            "queued",
            {"index": item.index, "approval_id": approval.id, "fingerprint": item.fingerprint},
        )
        done.append(ItemOutcome.of(ruling, "queued", approval_id=approval.id))
    return tuple(done)


def _canon_sha256(item: ProposedItem, canon_dir: Path) -> str | None:
    # A canon write is proposed against its file as it is now, which the hub does not hold.
    path = canon_target(item.operation, item.params)
    return None if path is None else current_sha256(canon_dir, path)
