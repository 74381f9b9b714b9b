"""Act: send the authorized writes, queue what needs a person, and journal every step.

Every write travels one chain: authorized (journaled before dispatch, with its idempotency key
and the authorization's nonce) -> dispatched -> receipt, failed, stale or unknown (writes/_send.py).
Nothing here decides whether a write may happen: each write is ruled again by the one authority
(`core.ruling.path.rule_write`) just before it is authorized, with the person's standing
read again. Each step returns one `ItemOutcome` per plan item it handled; the run assembles
them once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from custodian_runtime.canon import current_sha256
from custodian_runtime.clock import new_nonce
from custodian_runtime.core import outcomes
from custodian_runtime.core.approvals.items import approval_id_for, new_item
from custodian_runtime.core.authority.authorize import Ruling
from custodian_runtime.core.authority.precondition import canon_target, proposed_under
from custodian_runtime.core.contract import DomainSummary
from custodian_runtime.core.journal.keys import run_key
from custodian_runtime.core.journal.kinds import Authorized, GrantUsed, Queued
from custodian_runtime.core.outcomes import ItemOutcome, planned_on
from custodian_runtime.core.person.waiting import waiting_because
from custodian_runtime.core.plan.extract import ProposedItem
from custodian_runtime.core.ruling.path import UnderGrant, WriteRuling, rule_write
from custodian_runtime.core.ruling.trace import executed_params
from custodian_runtime.core.standing.record import with_words
from custodian_runtime.core.standing.rule import observed_facts
from custodian_runtime.run._context import RunContext
from custodian_runtime.run.decide import Ruled, standing_now
from custodian_runtime.run.observe import Observation
from custodian_runtime.writes import APPROVED_CALLS, SANCTIONED_CALLS, Sent, send, task_state

__all__ = ["Sent", "act", "dry_run", "send"]


def act(ctx: RunContext, ruled: Ruled, observation: Observation) -> tuple[ItemOutcome, ...]:
    """Execute, queue and deny; one outcome per plan item, in plan order."""
    rulings = ruled.rulings
    with ctx.log.phase("act") as info:
        sent = _execute(ctx, ruled, observation.summary)
        queued = _enqueue(ctx, ruled, observation.summary)
        done = outcomes.assemble(rulings, sent, queued, outcomes.denied(rulings))
        info.update(outcomes.counts(done))
    return done


def dry_run(rulings: tuple[Ruling, ...]) -> tuple[ItemOutcome, ...]:
    """What would happen to each item, without doing any of it."""
    return outcomes.assemble(rulings, outcomes.would(rulings))


def _execute(ctx: RunContext, ruled: Ruled, observed: DomainSummary) -> tuple[ItemOutcome, ...]:
    """Send each `execute` ruling through the authority chain, in plan order; one outcome each.

    Each is ruled again just before it is sent, with the standing read again: a mode or a
    revoke a person kept while this run has the domain's lock binds its next write.
    """
    done: list[ItemOutcome] = []
    used: list[GrantUsed] = []  # this run's uses so far: the journal's count does not hold them
    for ruling in (r for r in ruled.rulings if r.outcome == "execute"):
        if ctx.stop:
            # Never authorized, so not a failure: the note lists it as not sent, the next run
            # re-plans from the hub's state, and the counts match the journal's failed records.
            done.append(ItemOutcome.of(ruling, "not_sent"))
            continue
        now = ruled_now(ctx, ruled, ruling, observed, used)
        if not now.allowed:
            done.append(ItemOutcome.of(ruling, "not_sent", error=_withheld(now)))
            continue
        if ruling.grant is not None:
            used.append(_grant_used(ruling))
            ctx.journal.write(used[-1])
        done.append(_execute_one(ctx, ruling, observed))
    return tuple(done)


def ruled_now(
    ctx: RunContext,
    ruled: Ruled,
    ruling: Ruling,
    observed: DomainSummary,
    used: Sequence[GrantUsed],
) -> WriteRuling:
    """The one ruling on a write about to be sent, with the standing as it is now."""
    now = ctx.now()
    journaled = with_words(ruled.journaled, ((u, now) for u in used))
    grounds = replace(ruled.grounds, standing=standing_now(ctx, journaled), now=now)
    use = None if ruling.grant is None else UnderGrant(ruling.grant)
    return rule_write(ruling.item, observed, grounds=grounds, use=use)


def _withheld(now: WriteRuling) -> str:
    return f"not sent: ruled again just before it was sent: {now.ruling.reason}"


def _grant_used(ruling: Ruling) -> GrantUsed:
    item = ruling.item
    return GrantUsed(grant_id=ruling.grant, index=item.index, operation=item.operation,
                     fingerprint=item.fingerprint)  # fmt: skip


def _execute_one(ctx: RunContext, ruling: Ruling, observed: DomainSummary) -> ItemOutcome:
    item = ruling.item
    nonce = new_nonce()
    key = run_key(ctx.run_id, item.fingerprint, nonce)
    task = planned_on(ruling, observed)
    # A decision is recorded in the run's domain, whichever authority sends it (a grant's too).
    params = executed_params(item.operation, dict(item.params), ctx.domain)
    ctx.journal.write(
        Authorized(
            index=item.index,
            operation=item.operation,
            params=params,
            fingerprint=item.fingerprint,
            idempotency_key=key,
            nonce=nonce,
            by="policy" if ruling.grant is None else f"grant:{ruling.grant}",
            **ctx.bound(),
            **({"planned_on": task_state(task)} if task is not None else {}),
        )
    )
    sent = send(
        ctx.journal,
        ctx.client,
        SANCTIONED_CALLS if ruling.grant is None else APPROVED_CALLS,
        index=item.index,
        operation=item.operation,
        params=params,
        run_id=ctx.run_id,
        key=key,
        observed_task=task,
    )
    return ItemOutcome.of(
        ruling,
        sent.kind,
        hub_id=sent.hub_id,
        error=sent.stale or sent.error or sent.unknown,
        current_status=sent.current_status,
    )


def _enqueue(ctx: RunContext, ruled: Ruled, observed: DomainSummary) -> tuple[ItemOutcome, ...]:
    """Write each `queue` ruling to the approval queue, with the state it was proposed under
    and why it waits (from the ruling, and the standing and evidence it was ruled on)."""
    taken = ctx.approvals  # an id whose file exists is taken; ids are never reused
    now = ctx.now()
    ground = ruled.grounds.ground(observed)
    done: list[ItemOutcome] = []
    for ruling in (r for r in ruled.rulings if r.outcome == "queue"):
        item = ruling.item
        bound = ctx.bound()
        approval = new_item(
            approval_id=approval_id_for(item.fingerprint, new_nonce(), taken),
            domain=observed.domain,
            operation=item.operation,
            params=dict(item.params),
            rationale=item.reason,
            run_id=ctx.run_id,
            fingerprint=item.fingerprint,
            precondition=proposed_under(item, observed, _canon_sha256(item, ctx.canon_dir)),
            now=now,
            ttl_days=ctx.limits.approval_ttl_days,
            hub=bound["hub"],
            hub_at=bound["hub_at"],
            canon=bound["canon"],
            waiting=waiting_because(ruling, ground),
            facts=observed_facts(item, ground),
        )
        ctx.approvals.save(approval)
        ctx.journal.write(
            Queued(index=item.index, approval_id=approval.id, fingerprint=item.fingerprint)
        )
        waits = approval.waiting_because.text if approval.waiting_because else None
        done.append(
            replace(ItemOutcome.of(ruling, "queued", approval_id=approval.id), waiting=waits)
        )
    return tuple(done)


def _canon_sha256(item: ProposedItem, canon_dir: Path) -> str | None:
    # A canon write is proposed against its file as it is now, which the hub does not hold.
    path = canon_target(item.operation, item.params)
    return None if path is None else current_sha256(canon_dir, path)
