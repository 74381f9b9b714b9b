"""Decide: the planner's answer (`ask`), the plan in it (`extract`), a ruling per item.

`ask` chooses by the configured planner: a model gets the rendered prompt's text, the rule
planner the structured observation (run/_planner.py). Each step journals what it produced.
The decisions themselves are made in the core (`core.plan.extract.extract_plan`,
`core.ruling.path.rule_plan`: the authority with the person's standing); these functions
only wire them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from custodian_runtime.core.approvals.history import ApprovalHistory
from custodian_runtime.core.authority.authorize import Ruling
from custodian_runtime.core.authority.budgets import RecentWrites, recent_writes
from custodian_runtime.core.authority.evidence import Evidence
from custodian_runtime.core.authority.own_writes import OwnWrite
from custodian_runtime.core.contract import ProgressEvent
from custodian_runtime.core.fold import api as core_journal
from custodian_runtime.core.journal.kinds import (
    ModelFailed,
    ModelResponse,
    PlanRecord,
    kept_answer,
)
from custodian_runtime.core.limits import Limits
from custodian_runtime.core.outcomes import ruling_counts, ruling_data
from custodian_runtime.core.plan.extract import Plan, extract_plan
from custodian_runtime.core.ruling.path import Grounds, rule_plan
from custodian_runtime.core.standing.narrowed import narrowed_line, reversals
from custodian_runtime.core.standing.record import Standing, standing_of
from custodian_runtime.core.standing.rule import in_flight
from custodian_runtime.core.standing.shadow import shadowed
from custodian_runtime.core.view import View
from custodian_runtime.errors import ModelError, PlanRejected
from custodian_runtime.journal.person.standing_store import StandingStore
from custodian_runtime.llm.base import Completion
from custodian_runtime.run._context import RunContext
from custodian_runtime.run._evidence import read_evidence
from custodian_runtime.run._facts import planning_facts
from custodian_runtime.run._planner import RulePlanner
from custodian_runtime.run.observe import Observation
from custodian_runtime.run.orient import Orientation


def ask(
    ctx: RunContext,
    orientation: Orientation,
    observation: Observation,
    history: list[core_journal.Record],
    writes: Sequence[OwnWrite],
) -> Completion:
    """The planner's one answer; its failure or its raw answer is journaled.

    `writes` are Custodian's own writes (the checkpoint's), for the rule planner's facts.
    """
    with ctx.log.phase("decide") as info:
        try:
            if isinstance(ctx.planner, RulePlanner):
                facts = planning_facts(ctx, observation, history, orientation.inputs, writes)
                completion = ctx.planner.plan(facts)
            else:
                completion = ctx.planner.complete(orientation.prompt)
        except ModelError as exc:
            answer, whole = kept_answer(exc.answer)
            failed = ModelFailed(
                error=exc.message, provider=exc.provider, status=exc.status, code=exc.code,
                answer=answer, answer_chars=whole,
            )  # fmt: skip
            ctx.journal.write(failed)
            raise
        info.update(model=completion.model, output_tokens=completion.usage.output_tokens)
    completion = storable(completion)
    ctx.journal.write(response_data(completion))
    return completion


def storable(completion: Completion) -> Completion:
    """The answer with any lone surrogate written as its `\\udXXX` escape, so it can be journaled.

    In the plan's JSON such an escape is a lone surrogate again, which extract_plan rejects.
    """
    try:
        completion.text.encode("utf-8")
    except UnicodeEncodeError:
        text = completion.text.encode("utf-8", "backslashreplace").decode("utf-8")
        return replace(completion, text=text)
    return completion


def extract(ctx: RunContext, completion: Completion) -> Plan:
    """The plan in the model's answer; a rejection is journaled, and raised."""
    try:
        return extract_plan(completion.text, ctx.limits.max_plan_items, bare=completion.structured)
    except PlanRejected as exc:
        ctx.journal.write(
            PlanRecord(status="rejected", reason=exc.message, observations=[], items=0)
        )
        raise


@dataclass(frozen=True)
class Ruled:
    """A plan's rulings, and what they were ruled from: act rules each write again on these
    grounds with the standing read again (`journaled`: the journal's standing at ruling)."""

    rulings: tuple[Ruling, ...]
    grounds: Grounds
    journaled: Standing
    # What a person's reversal took away at this run (core/standing/narrowed.py): the reasons.
    narrowed: tuple[str, ...] = ()


def rule(
    ctx: RunContext,
    plan: Plan,
    observation: Observation,
    history: list[core_journal.Record],
    writes: Sequence[OwnWrite],
) -> Ruled:
    """Read the events the plan cites, then rule on every item (one ruling each, journaled).

    `writes` are Custodian's own writes in the domain, as the journal's checkpoint keeps them.
    """
    evidence, fetched = read_evidence(ctx.client, plan, observation.summary, history, writes)
    journaled, found = narrowed_by_people(ctx, observation, history, writes)
    ruled = _authorize(ctx, plan, observation, evidence, fetched, writes, journaled)
    return replace(ruled, narrowed=found)


def narrowed_by_people(
    ctx: RunContext,
    observation: Observation,
    history: list[core_journal.Record],
    writes: Sequence[OwnWrite],
) -> tuple[Standing, tuple[str, ...]]:
    """The journal's standing, after journaling each write of Custodian's a person has set
    back since (a grant suspended, a class held: core/standing/narrowed.py), and what each
    took away, for the note."""
    journaled = standing_of(history)
    view = View.of(observation.summary)
    found = reversals(writes, view, journaled.narrowed, ctx.now())
    if not found:
        return journaled, ()
    written = [ctx.journal.write(entry) for entry in found]
    return standing_of([*history, *written]), tuple(narrowed_line(e) for e in found)


def standing_now(ctx: RunContext, journaled: Standing) -> Standing:
    """The standing a write is ruled with now: the journal's, and every decision a person made
    while this run had the domain's lock (kept in memory/standing/); a grant only once journaled."""
    store = StandingStore(ctx.memory_dir, ctx.seal_key)
    return in_flight(store.kept_standing(ctx.domain, journaled), journaled)


def _authorize(
    ctx: RunContext,
    plan: Plan,
    observation: Observation,
    evidence: Evidence,
    fetched: Sequence[ProgressEvent],
    writes: Sequence[OwnWrite],
    journaled: Standing,
) -> Ruled:
    """One ruling per item, journaled with the limits, approval history, evidence and own writes.

    `fetched` are the cited tasks' events read beyond the summary; they are journaled for replay.
    """
    with ctx.log.phase("authorize") as info:
        now = ctx.now()
        limits, history = limits_and_history(ctx, now)
        recent = recent_writes(limits, writes, now)
        standing = standing_now(ctx, journaled)
        # The hub's identity is asked for only when a grant may need it.
        hub_id = ctx.bound()["hub"] if standing.grants else None
        grounds = Grounds(limits, history, evidence, recent, standing, hub_id, now,
                          ctx.unavailable)  # fmt: skip
        rulings = rule_plan(plan, observation.summary, grounds)
        planned = _plan_data(plan, limits, history, evidence, fetched, recent)
        kept = {**standing.as_record(), "hub_id": hub_id}
        update: dict[str, Any] = {"standing": kept}
        if ctx.unavailable:  # for replay: what this run could not perform, and why
            update["unavailable"] = dict(ctx.unavailable)
        ctx.journal.write(planned.model_copy(update=update))
        for ruling in rulings:
            ctx.journal.write(ruling_data(ruling))
        _journal_shadowed(ctx, rulings, observation)
        info.update(**ruling_counts(rulings))
    return Ruled(rulings, grounds, journaled)


def _journal_shadowed(ctx: RunContext, rulings: Sequence[Ruling], seen: Observation) -> None:
    """Each item shadow mode kept back, with its target as observed (core/standing/shadow.py)."""
    kept_back = [r for r in rulings if r.shadow is not None]
    hub = ctx.bound()["hub"] if kept_back else None  # asked for only when an item needs it
    for ruling in kept_back:
        entry = shadowed(ruling, seen.summary, hub)
        if entry is not None:
            ctx.journal.write(entry)


def _plan_data(
    plan: Plan,
    limits: Limits,
    history: ApprovalHistory,
    evidence: Evidence,
    fetched: Sequence[ProgressEvent],
    recent: RecentWrites,
) -> PlanRecord:
    """The journal's `plan` record of an accepted plan: what the authority ruled from."""
    return PlanRecord(
        status="accepted",
        reason=None,
        observations=list(plan.observations),
        items=len(plan.items),
        policy=dict(limits.__dict__),  # the plan record's field keeps its name
        history=history.for_items(plan.items).as_record(),
        evidence={
            "fetched": [e.model_dump(mode="json") for e in fetched],
            "own_ids": sorted(evidence.own_ids),
            "read_tasks": sorted(evidence.read_tasks),
        },
        recent_writes=[w.model_dump(mode="json") for w in recent.writes],
        ruled_at=core_journal.format_at(recent.now),
    )


def limits_and_history(ctx: RunContext, now: datetime) -> tuple[Limits, ApprovalHistory]:
    """The configured caps, and what the domain's approval queue holds or has refused."""
    return ctx.limits, ctx.approvals.view(ctx.domain, now).history(now)


def usage_dict(completion: Completion) -> dict[str, Any]:
    """Tokens and cost as reported."""
    u = completion.usage
    return {
        "input_tokens": u.input_tokens,
        "output_tokens": u.output_tokens,
        "cost_usd": u.cost_usd,
    }


def response_data(completion: Completion) -> ModelResponse:
    """The journal's `model_response` record: the raw text, kept whole."""
    return ModelResponse(
        text=completion.text,
        provider=completion.provider,
        model=completion.model,
        usage=usage_dict(completion),
        request_id=completion.request_id,
        structured=completion.structured or None,
    )
