"""Skip on the hub's word: ask for the domain only if it moved since the last completed run.

Then, once the domain is read, skip when its state digest is the last completed run's
(`unchanged_state`, the rule from before revisions, which a v1.1 hub keeps).

The core decides (`core.skip.unchanged`); this module gathers what waits on this side, sends the one
conditional read (`If-None-Match` with the revision the last completed run saw) and, on a 304,
journals the observation it stands for. A v1.1 hub names no revision: the run reads as before.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from custodian_runtime.core.approvals.items import ApprovalItem
from custodian_runtime.core.contract import DomainSummary
from custodian_runtime.core.fold import api as core_journal
from custodian_runtime.core.fold.runs import CompletedObservation
from custodian_runtime.core.run_rules import skip_reason
from custodian_runtime.core.skip.unchanged import (
    LocalWork,
    expiries_due,
    not_modified_reason,
    not_modified_record,
    revision_to_ask,
    why_read,
)
from custodian_runtime.errors import CustodianError, HubRequestError
from custodian_runtime.journal.person.inbox import Inbox
from custodian_runtime.run._context import RunContext
from custodian_runtime.run._inputs import run_inputs
from custodian_runtime.run.observe import Observation
from custodian_runtime.statehub import NotModified
from custodian_runtime.writes import SUMMARY_EVENTS


@dataclass(frozen=True)
class ConditionalRead:
    """What the conditional read brought: why the run skips (a 304), or the summary it sent."""

    skipped: str | None = None
    summary: DomainSummary | None = None  # the domain moved: observe starts from this read
    revision: int | None = None  # the revision a 304 named


def ask_unchanged(ctx: RunContext, history: Sequence[core_journal.Record]) -> ConditionalRead:
    """One conditional read when the core allows it; else nothing is sent (`ConditionalRead()`)."""
    if ctx.force or ctx.dry_run:
        return ConditionalRead()
    last = core_journal.last_completed_observation(list(history))
    if last is None or last.revision is None:
        return ConditionalRead()  # no completed run yet, or a v1.1 hub: read as before
    now = ctx.now()
    window = timedelta(hours=ctx.limits.skip_window_hours)
    work = local_work(ctx, history, last, now)
    revision = revision_to_ask(last, now, window, work, force=False)
    if revision is None:
        ctx.log.line("observe", "reading", reason=why_read(last, now, window, work))
        return ConditionalRead()
    try:
        answer = ctx.client.domain_summary(
            ctx.domain, events=SUMMARY_EVENTS, if_none_match=revision
        )
    except HubRequestError as exc:
        if exc.status != 404:
            raise
        return ConditionalRead()  # observe reads again and names the domains the hub knows
    if not isinstance(answer, NotModified):
        return ConditionalRead(summary=answer)
    ctx.journal.write(not_modified_record(last, answer.revision))
    return ConditionalRead(
        skipped=not_modified_reason(last, answer.revision), revision=answer.revision
    )


def local_work(
    ctx: RunContext,
    history: Sequence[core_journal.Record],
    last: CompletedObservation,
    now: datetime,
) -> LocalWork:
    """What waits on this side of the hub, read from the journal, the queue and the canon."""
    queue = ctx.approvals.view(ctx.domain, now)
    work = work_waiting(history, queue.items, last, now, _decisions_waiting(ctx), ctx.run_id)
    return replace(work, inputs_changed=run_inputs(ctx) != last.inputs_digest)


def work_waiting(
    history: Sequence[core_journal.Record],
    items: Sequence[ApprovalItem],
    last: CompletedObservation,
    now: datetime,
    decisions: int,
    run_id: str | None = None,
) -> LocalWork:
    """What waits here besides the inputs: open writes, killed runs other than `run_id`, the
    `decisions` waiting and the approvals expired since `last` (`custodian watch` asks too)."""
    return LocalWork(
        open_writes=len(core_journal.unfinished_items(history)),
        interrupted=len([r for r in core_journal.interrupted_runs(history) if r != run_id]),
        decisions=decisions,
        expiries=expiries_due(items, last.finished_at, now),
    )


def _decisions_waiting(ctx: RunContext) -> int:
    """A person's words kept while the domain was busy (one listing: nothing is read)."""
    try:
        return Inbox(ctx.memory_dir).count(ctx.domain)
    except (CustodianError, OSError):
        return 1


def unchanged_state(
    ctx: RunContext, seen: Observation, history: Sequence[core_journal.Record]
) -> str | None:
    """Why the model call can be skipped on the state digest (the core decides), or None.

    A change to the canon, the limits or the hub since the last completed run makes it run.
    """
    last = core_journal.last_completed_observation(list(history))
    changed = last is not None and last.inputs_digest not in (None, run_inputs(ctx))
    return skip_reason(
        last,
        seen.state_digest,
        ctx.now(),
        timedelta(hours=ctx.limits.skip_window_hours),
        force=ctx.force or ctx.dry_run or changed,
    )
