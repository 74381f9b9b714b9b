"""Orient: read the canon and the last note, then render the prompt the model will see."""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from custodian.core.approvals import ApprovalItem
from custodian.core.context import ApprovalBrief, PromptInputs
from custodian.core.continuity import Continuity
from custodian.core.contract import DomainSummary, StateSummary
from custodian.core.planning_facts import PlanningFacts
from custodian.errors import ConfigError
from custodian.llm.base import Prompt
from custodian.memory.notes import last_note_prose, note_prose
from custodian.render.prompt import RenderedPrompt, render_prompt
from custodian.settings import Settings


@dataclass(frozen=True)
class Orientation:
    """The rendered prompt and the inputs it was rendered from."""

    inputs: PromptInputs
    rendered: RenderedPrompt
    prompt: Prompt


def read_canon(canon_dir: Path, domain: str) -> tuple[str, str | None]:
    """The constitution (required) and the domain's guidance (optional)."""
    constitution_path = canon_dir / "constitution.md"
    if not constitution_path.is_file():
        raise ConfigError(
            f"no constitution at {constitution_path}: point CUSTODIAN_CANON_DIR (or --canon) at "
            "the canon directory that holds constitution.md",
            setting="CUSTODIAN_CANON_DIR",
        )
    guidance_path = canon_dir / "domains" / f"{domain}.md"
    guidance = guidance_path.read_text("utf-8") if guidance_path.is_file() else None
    return constitution_path.read_text("utf-8"), guidance


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


def _reasoning(working: Path, domain: str, notes: Continuity | None) -> str | None:
    """The last prose a model wrote: from the note the journal names, else the newest file."""
    if notes is None or notes.last is None:
        return last_note_prose(working, domain)
    return note_prose(working, notes.reasoning.file) if notes.reasoning is not None else None


def orient(
    settings: Settings,
    domain: str,
    now: datetime,
    overview: StateSummary,
    summary: DomainSummary,
    *,
    pending: Sequence[ApprovalItem],
    rejected: Sequence[ApprovalItem],
    previous: Mapping[str, str],
    max_output_tokens: int,
    notes: Continuity | None = None,
) -> Orientation:
    """Build the prompt inputs from the canon, memory and the observation, and render them."""
    constitution, guidance = read_canon(settings.canon_dir, domain)
    limits = settings.limits
    inputs = PromptInputs(
        domain=domain,
        now=now,
        overview=overview,
        summary=summary,
        constitution=constitution,
        domain_guidance=guidance,
        last_note_prose=_reasoning(settings.memory_dir / "working", domain, notes),
        nonce=secrets.token_hex(6),  # this run's data markers: no earlier text can hold it
        last_run=notes.last if notes is not None else None,
        reasoning_run=notes.reasoning if notes is not None else None,
        pending=tuple(brief(i) for i in pending),
        rejected=tuple(brief(i) for i in rejected),
        token_budget=limits.token_budget,
        stale_after_days=limits.stale_after_days,
        caps=limits.prompt_caps(),
    )
    rendered = render_prompt(inputs)
    facts = PlanningFacts(
        domain=domain,
        now=now,
        summary=summary,
        overview=overview,
        previous_workstream_digests=dict(previous),
        stale_after_days=limits.stale_after_days,
    )
    prompt = Prompt(
        system=rendered.system,
        user=rendered.user,
        max_output_tokens=max_output_tokens,
        facts=facts,
    )
    return Orientation(inputs=inputs, rendered=rendered, prompt=prompt)
