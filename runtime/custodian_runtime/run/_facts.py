"""The structured observation the rule planner plans from, built only when it is the planner."""

from __future__ import annotations

from collections.abc import Sequence

from custodian_runtime.core.authority.budgets import recent_writes
from custodian_runtime.core.authority.deference import decided_by_person
from custodian_runtime.core.authority.own_writes import OwnWrite
from custodian_runtime.core.context.prompt import ApprovalBrief, PromptInputs
from custodian_runtime.core.contract import DomainSummary
from custodian_runtime.core.digest import workstream_digests
from custodian_runtime.core.fold import api as core_journal
from custodian_runtime.core.tooling.planning_facts import PlanningFacts
from custodian_runtime.core.view import View
from custodian_runtime.journal.snapshots import SnapshotStore
from custodian_runtime.run._context import RunContext
from custodian_runtime.run.observe import Observation


def planning_facts(
    ctx: RunContext,
    observation: Observation,
    history: list[core_journal.Record],
    inputs: PromptInputs,
    writes: Sequence[OwnWrite],
) -> PlanningFacts:
    """What the rule planner plans from: the observation, and what the journal says came before.

    `inputs` are the prompt's (its time and the rejections it shows); `writes` are Custodian's
    own writes (the checkpoint's). It may load the last snapshot; a model planner never asks.
    """
    recent = recent_writes(ctx.limits, writes, inputs.now)
    decided = decided_by_person(View.of(observation.summary), ctx.limits, recent)
    return PlanningFacts(
        domain=ctx.domain,
        now=inputs.now,
        summary=observation.summary,
        overview=observation.overview,
        previous_workstream_digests=previous_digests(history, SnapshotStore(ctx.memory_dir)),
        workstream_digests=observation.workstream_digests or None,
        stale_after_days=ctx.limits.stale_after_days,
        rejected=rejected_targets(inputs.rejected),
        decided=decided,
    )


def rejected_targets(rejected: tuple[ApprovalBrief, ...]) -> frozenset[tuple[str, str]]:
    """(operation, target) of each proposal a person rejected within the prompt's window."""
    return frozenset((b.operation, b.target) for b in rejected)


def previous_digests(
    history: list[core_journal.Record], snapshots: SnapshotStore
) -> dict[str, str] | None:
    """Per-workstream digests of the state the last completed run left behind; None if none.

    Its `observed` record names them; a journal from before it did is read from the snapshot.
    """
    last = core_journal.last_completed_observation(history)
    if last is None:
        return None
    if last.workstream_digests is not None:
        return last.workstream_digests
    summary = last.summary
    if not summary and last.snapshot is not None and history:
        summary = snapshots.load_summary(history[0].domain, last.snapshot, last.generated_at)
    return workstream_digests(DomainSummary.model_validate(summary))
