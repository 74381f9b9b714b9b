"""Orient and decide: render the prompt, make the one model call, extract and authorize the plan.

Each step journals what it produced. The decisions themselves are made in the core
(`core.plan.extract_plan`, `core.authority.authorize`); these functions only wire them.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from custodian.core import journal as J
from custodian.core.approvals import pending_for, recently_rejected
from custodian.core.authority import Ruling, authorize
from custodian.core.context import SECTIONS
from custodian.core.continuity import continuity
from custodian.core.contract import DomainSummary, ProgressEvent
from custodian.core.digest import canonical_json, sha256_hex, workstream_digests
from custodian.core.evidence import Evidence
from custodian.core.own_writes import OwnWrite
from custodian.core.plan import Plan, extract_plan
from custodian.errors import ModelError, PlanRejected
from custodian.llm.base import Completion, Model
from custodian.memory.approvals import ApprovalStore
from custodian.memory.run_journal import Journal
from custodian.memory.snapshots import ContentStore, SnapshotStore
from custodian.phase_log import PhaseLog
from custodian.run import act, record
from custodian.run.observe import Observation
from custodian.run.orient import Orientation, orient
from custodian.run.result import RunResult
from custodian.settings import Settings


@dataclass
class Scope:
    """What every step of one run shares."""

    settings: Settings
    domain: str
    result: RunResult
    log: PhaseLog
    clock: Callable[[], datetime]
    journal: Journal
    approvals: ApprovalStore
    raw_response: str | None = None


def orient_step(scope: Scope, observation: Observation, history: list[J.Record]) -> Orientation:
    """Render the prompt from the canon, memory and the observation; journal it."""
    s = scope.settings
    with scope.log.phase("orient") as info:
        items = scope.approvals.all(scope.domain)
        now = scope.clock()
        o = orient(
            s,
            scope.domain,
            now,
            observation.overview,
            observation.summary,
            pending=pending_for(items, scope.domain, now),
            rejected=recently_rejected(items, scope.domain, now),
            previous=previous_digests(history, SnapshotStore(s.memory_dir)),
            max_output_tokens=s.model.max_output_tokens,
            notes=continuity(history),
        )
        omitted = {k: n for k, n in o.rendered.omitted.items() if k in SECTIONS}
        scope.result.omitted = omitted
        info.update(estimated_tokens=o.rendered.estimated_tokens, omitted=sum(omitted.values()))
    scope.journal.append("prompt", prompt_record(scope, o))
    if s.show_prompt:
        record.show_prompt(o, sys.stderr if s.json_output else sys.stdout)
    return o


def decide_step(scope: Scope, model: Model, orientation: Orientation) -> Completion:
    """The one model call; its failure or its raw answer is journaled."""
    with scope.log.phase("decide") as info:
        try:
            completion = model.complete(orientation.prompt)
        except ModelError as exc:
            scope.journal.append(
                "model_failed",
                {
                    "error": exc.message,
                    "provider": exc.provider,
                    "status": exc.status,
                    "code": exc.code,
                },
            )
            raise
        info.update(model=completion.model, output_tokens=completion.usage.output_tokens)
    scope.result.model = completion.model
    scope.result.usage = act.usage_dict(completion)
    scope.journal.append("model_response", act.response_data(completion))
    return completion


def plan_step(scope: Scope, completion: Completion) -> Plan:
    """Extract the plan; a rejection is journaled and the raw answer kept for the note."""
    try:
        plan = extract_plan(completion.text)
    except PlanRejected as exc:
        scope.journal.append(
            "plan",
            {"status": "rejected", "reason": exc.message, "observations": [], "items": 0},
        )
        scope.raw_response = completion.text
        raise
    scope.result.observations = list(plan.observations)
    return plan


def authorize_step(
    scope: Scope,
    plan: Plan,
    observation: Observation,
    evidence: Evidence | None = None,
    fetched: Sequence[ProgressEvent] = (),
    writes: Sequence[OwnWrite] = (),
) -> tuple[Ruling, ...]:
    """One ruling per item, journaled with the policy, approval history, evidence and own writes.

    `fetched` are the cited tasks' events read beyond the summary; they are journaled for replay.
    `writes` are Custodian's own writes in the domain, as the journal's checkpoint keeps them.
    """
    with scope.log.phase("authorize") as info:
        now = scope.clock()
        policy, history = act.policy_and_history(scope.settings, scope.approvals, now, scope.domain)
        recent = act.recent_writes(policy, writes, now)
        rulings = authorize(
            plan, observation.summary, policy, history, evidence=evidence, recent=recent
        )
        scope.journal.append(
            "plan",
            {
                "status": "accepted",
                "reason": None,
                "observations": list(plan.observations),
                "items": len(plan.items),
                "policy": dict(policy.__dict__),
                "history": history.as_record(),
                "evidence": {
                    "fetched": [e.model_dump(mode="json") for e in fetched],
                    "own_ids": sorted(evidence.own_ids) if evidence is not None else [],
                },
                "recent_writes": [w.model_dump(mode="json") for w in recent.writes],
                "ruled_at": J.format_at(now),
            },
        )
        for ruling in rulings:
            scope.journal.append("ruling", act.ruling_data(ruling))
        info.update(**act.outcome_counts(rulings))
    return rulings


def prompt_record(scope: Scope, o: Orientation) -> dict[str, Any]:
    """The journal's `prompt` record: the text is stored compressed once, named by its digest."""
    text = canonical_json({"system": o.prompt.system, "user": o.prompt.user})
    stored = (
        sha256_hex(text)
        if scope.settings.dry_run
        else ContentStore(scope.settings.memory_dir, "prompts").put(scope.domain, text)
    )
    return {
        "stored": stored,
        "chars": {"system": len(o.prompt.system), "user": len(o.prompt.user)},
        "estimated_tokens": o.rendered.estimated_tokens,
    }


def previous_digests(history: list[J.Record], snapshots: SnapshotStore) -> dict[str, str]:
    """Per-workstream digests of the state the last completed run left behind."""
    last = J.last_completed_observation(history)
    if last is None:
        return {}
    summary = last.summary
    if not summary and last.snapshot is not None and history:
        summary = snapshots.load_summary(history[0].domain, last.snapshot, last.generated_at)
    return workstream_digests(DomainSummary.model_validate(summary))
