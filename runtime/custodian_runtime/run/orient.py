"""Orient: read the canon, memory and the last note, then render the prompt the model will see."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from custodian_runtime.canon.library import read_canon_dir
from custodian_runtime.canon.retrieve import RunCanon, run_canon
from custodian_runtime.core.approvals.history import ApprovalHistory
from custodian_runtime.core.approvals.items import ApprovalItem
from custodian_runtime.core.authority.refusals import fact_nos_in, standing_nos_in
from custodian_runtime.core.canon.sections import title
from custodian_runtime.core.context.prompt import SECTIONS, ApprovalBrief, PromptInputs
from custodian_runtime.core.context.queries import state_queries
from custodian_runtime.core.contract import DomainSummary
from custodian_runtime.core.digest import canonical_json, sha256_hex
from custodian_runtime.core.fold import api as core_journal
from custodian_runtime.core.journal.continuity import (
    Continuity,
    LastAction,
    continuity,
    note_actions,
)
from custodian_runtime.core.journal.kinds import CanonCited, PromptRecord
from custodian_runtime.core.plan.answer import ObservedIds, answer_schema
from custodian_runtime.core.standing.record import standing_of
from custodian_runtime.core.standing.said_no import lifted_history
from custodian_runtime.core.view import View
from custodian_runtime.journal.snapshots import ContentStore
from custodian_runtime.llm.base import Prompt
from custodian_runtime.notes.store import note_text
from custodian_runtime.render.prompt import RenderedPrompt, render_prompt, show_prompt
from custodian_runtime.run._context import RunContext
from custodian_runtime.run.observe import Observation


@dataclass(frozen=True)
class Orientation:
    """The rendered prompt and the inputs it was rendered from."""

    inputs: PromptInputs
    rendered: RenderedPrompt
    prompt: Prompt
    canon: RunCanon

    @property
    def cited(self) -> tuple[CanonCited, ...]:
        """What of the canon the model was shown: whole files first, then the sections."""
        return cited(self.canon, self.rendered)

    @property
    def omitted(self) -> dict[str, int]:
        """Per prompt section, how many items were left out for space."""
        return {k: n for k, n in self.rendered.omitted.items() if k in SECTIONS}


def read_canon(canon_dir: Path, domain: str) -> tuple[str, str | None]:
    """The constitution (required) and the domain's guidance (optional), as shown."""
    canon = read_canon_dir(canon_dir)
    guidance = canon.guidance(domain)
    return canon.constitution.text, guidance.text if guidance is not None else None


def brief(item: ApprovalItem) -> ApprovalBrief:
    """How an approval item is shown to the model."""
    target = next(
        (
            str(item.params[k])
            for k in ("task_id", "decision_id", "flag_id", "workstream_id", "path")
            if k in item.params
        ),
        item.domain,
    )
    summary = ", ".join(f"{k}={v}" for k, v in sorted(item.params.items()) if k != "content")
    return ApprovalBrief(
        id=item.id,
        operation=item.operation,
        target=target,
        summary=summary[:300],
        status=item.status,
        reason=item.reject_reason if item.status == "rejected" else item.rationale,
    )


def held_briefs(observed: DomainSummary, history: ApprovalHistory) -> tuple[ApprovalBrief, ...]:
    """Each standing "no" in force (core/authority/refusals.py), as the rejected section shows
    it first: its class and scope, and the person's newest reasons; such a proposal is held."""
    return tuple(
        ApprovalBrief(
            id="held",
            operation=r.operation,
            target=r.scope,
            summary=(f"status={r.status} " if r.status else "")
            + (f"citing {r.cites} " if r.cites else "")
            + f"held: {len(r.rejected)} rejected, none approved; not asked again",
            status="held",
            reason="; ".join(dict.fromkeys(s.why for s in r.rejected[-2:])),
        )
        for r in (*standing_nos_in(View.of(observed), history), *fact_nos_in(history))
    )


def _last_actions(working: Path, notes: Continuity | None) -> tuple[LastAction, ...] | None:
    """What became of the last run's items, from its note's front matter (never its prose)."""
    if notes is None or notes.last is None:
        return None
    text = note_text(working, notes.last.file)
    return None if text is None else note_actions(text)


def orient(
    ctx: RunContext, observation: Observation, history: list[core_journal.Record]
) -> Orientation:
    """Render the prompt from the canon, memory and the observation; journal it."""
    with ctx.log.phase("orient") as info:
        o = _orientation(ctx, observation, history, ctx.now())
        info.update(estimated_tokens=o.rendered.estimated_tokens, omitted=sum(o.omitted.values()))
        if o.canon.sections:  # a canon with sections to retrieve: how many were shown, of how many
            info.update(canon_sections=len(o.rendered.canon), canon_of=o.canon.sections)
    ctx.journal.write(_prompt_record(ctx, o))
    if ctx.prompt_out is not None:
        show_prompt(o.rendered, ctx.prompt_out)
    return o


def _orientation(
    ctx: RunContext,
    observation: Observation,
    history: list[core_journal.Record],
    now: datetime,
) -> Orientation:
    """Build the prompt inputs from the canon, memory and the observation, and render them."""
    queue = ctx.approvals.view(ctx.domain, now)
    pending = tuple(brief(i) for i in queue.pending(now))
    # A person's lift of a standing no sets aside its rejections here too, as in the ruling.
    said = standing_of(history).said_nos
    held = lifted_history(queue.history(now), said, View.of(observation.summary))
    rejected = held_briefs(observation.summary, held) + tuple(brief(i) for i in queue.rejected(now))
    queries = state_queries(observation.summary, pending, rejected)
    memory = None if ctx.dry_run else ctx.memory_dir
    canon = run_canon(ctx.canon_dir, ctx.domain, queries, memory)
    inputs = _inputs(ctx, observation, continuity(history), now, canon, (pending, rejected))
    rendered = render_prompt(inputs)
    schema = None
    if ctx.structured:
        ids = ObservedIds.of(observation.summary)
        schema = answer_schema(ids, unavailable=tuple(ctx.unavailable), limits=ctx.limits)
    prompt = Prompt(
        system=rendered.system,
        user=rendered.user,
        max_output_tokens=ctx.max_output_tokens,
        answer_schema=schema,
    )
    return Orientation(inputs=inputs, rendered=rendered, prompt=prompt, canon=canon)


def _inputs(
    ctx: RunContext,
    observation: Observation,
    notes: Continuity | None,
    now: datetime,
    canon: RunCanon,
    queue: tuple[tuple[ApprovalBrief, ...], tuple[ApprovalBrief, ...]],
) -> PromptInputs:
    """What the prompt is rendered from."""
    limits = ctx.limits
    return PromptInputs(
        domain=ctx.domain,
        now=now,
        overview=observation.overview,
        summary=observation.summary,
        constitution=canon.constitution.text,
        domain_guidance=canon.guidance.text if canon.guidance is not None else None,
        nonce=secrets.token_hex(6),  # this run's data markers: no earlier text can hold it
        last_run=notes.last if notes is not None else None,
        last_actions=_last_actions(ctx.memory_dir / "working", notes),
        pending=queue[0],
        rejected=queue[1],
        token_budget=limits.token_budget,
        stale_after_days=limits.stale_after_days,
        caps=limits.prompt_caps(),
        unavailable=ctx.unavailable,
        answer_form="json" if ctx.structured else "fenced",
        form=ctx.prompt_form,
        canon_pinned=canon.pinned,
        canon_ranked=canon.ranked,
        canon_sections=canon.sections,
        canon_share_percent=limits.canon_share_percent,
    )


def cited(canon: RunCanon, rendered: RenderedPrompt) -> tuple[CanonCited, ...]:
    """The files shown whole and the sections retrieved, each with the digest of what was shown."""
    whole = [canon.constitution, *([canon.guidance] if canon.guidance else []), *canon.pinned]
    return (
        *(CanonCited(file=f.path, heading=title(f), sha256=sha256_hex(f.text), whole=True)
          for f in whole),
        *(CanonCited(file=s.file, heading=s.heading, sha256=s.sha256) for s in rendered.canon),
    )  # fmt: skip


def _prompt_record(ctx: RunContext, o: Orientation) -> PromptRecord:
    """The journal's `prompt` record: the text is stored compressed once, named by its digest."""
    text = canonical_json({"system": o.prompt.system, "user": o.prompt.user})
    stored = (
        sha256_hex(text)
        if ctx.dry_run
        else ContentStore(ctx.memory_dir, "prompts").put(ctx.domain, text)
    )
    return PromptRecord(
        stored=stored,
        chars={"system": len(o.prompt.system), "user": len(o.prompt.user)},
        estimated_tokens=o.rendered.estimated_tokens,
        canon=o.cited,
        canon_sections=o.canon.sections or None,
    )
