"""Read the events a plan's status changes cite, when the summary's recent events lack them.

This module reads; it never decides. `core.authority.evidence` says whether what was read is
evidence.
"""

from __future__ import annotations

from collections.abc import Iterable

from custodian_runtime.core import operations
from custodian_runtime.core.authority.evidence import Evidence, missing_events, own_write_ids
from custodian_runtime.core.authority.own_writes import OwnWrite
from custodian_runtime.core.contract import DomainSummary, ProgressEvent
from custodian_runtime.core.fold import api as core_journal
from custodian_runtime.core.plan.extract import Plan
from custodian_runtime.statehub.client import StateHubClient

EVENTS_PER_TASK = 1000  # the contract's largest page of GET /events


def tasks_to_read(plan: Plan, summary: DomainSummary) -> tuple[str, ...]:
    """Tasks whose status change cites an event the summary does not hold, once each.

    Also a status write's task that the hub sent without `updated_at`: its own events tell its
    last change, which the core compares the evidence with.
    """
    unstamped = {t.id for ws in summary.workstreams for t in ws.tasks if t.updated_at is None}
    tasks = {
        str(item.params["task_id"])
        for item in plan.items
        if _cites_evidence(item.operation)
        and item.error is None
        and isinstance(item.params.get("task_id"), str)
        and (missing_events(item.params, summary) or item.params["task_id"] in unstamped)
    }
    return tuple(sorted(tasks))


def read_evidence(
    client: StateHubClient,
    plan: Plan,
    summary: DomainSummary,
    history: Iterable[core_journal.Record],
    kept: Iterable[OwnWrite] = (),
) -> tuple[Evidence, tuple[ProgressEvent, ...]]:
    """The run's evidence: the summary's events, each cited task's events, Custodian's receipts.

    Receipts come from the records the run read and from the own writes the checkpoint keeps
    (31 days), so an event Custodian wrote weeks ago still cannot be cited as a person's word.
    """
    fetched: list[ProgressEvent] = []
    whole: list[str] = []  # tasks whose every event came back: a cited id absent is invented
    for task in tasks_to_read(plan, summary):
        events = client.list_events(task_id=task, limit=EVENTS_PER_TASK)
        fetched.extend(events)
        if len(events) < EVENTS_PER_TASK:
            whole.append(task)
    evidence = Evidence.of(summary, fetched, own_write_ids(history, kept), whole)
    return evidence, tuple(fetched)


def _cites_evidence(operation: str) -> bool:
    """Whether `operation` cites events its ruling weighs: a sanctioned status write's evidence,
    or any status write's person's newer word (deference, a grant on evidence)."""
    spec = operations.find(operation)
    return spec is not None and (spec.evidence or spec.status_write)
