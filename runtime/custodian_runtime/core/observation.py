"""The observation is checked before anything is decided from it: one domain, unique ids.

A hub, or a proxy in front of it, may answer `/domains/{domain}/summary` with another domain's data.
Acting on that would write to the other domain under this domain's lock and journal, so a summary
that names another domain, holds an item of another domain, or repeats an id is refused whole.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from custodian_runtime.core.contract import DomainSummary
from custodian_runtime.errors import ObservationRejected


def check_domain_summary(summary: DomainSummary, domain: str) -> None:
    """Raise ObservationRejected naming the first item that is not of `domain`, or a repeated id."""
    problem = next(_problems(summary, domain), None)
    if problem is not None:
        raise ObservationRejected(
            f"the hub's summary of domain {domain!r} cannot be trusted: {problem};"
            " nothing was decided or written (check what answers at the hub URL)",
            domain=domain,
            problem=problem,
        )


def _problems(summary: DomainSummary, domain: str) -> Iterator[str]:
    if summary.domain != domain:
        yield f"it names domain {summary.domain!r}"
        return
    yield from _repeated(summary)
    yield from _workstream_problems(summary, domain)
    yield from _decision_problems(summary, domain, {ws.id for ws in summary.workstreams})
    yield from _linked_problems(summary, domain)


def _workstream_problems(summary: DomainSummary, domain: str) -> Iterator[str]:
    for ws in summary.workstreams:
        if ws.domain != domain:
            yield f"workstream {ws.id!r} is in domain {ws.domain!r}"
        for task in ws.tasks:
            if task.workstream_id != ws.id:
                yield (
                    f"task {task.id!r} is listed under workstream {ws.id!r}"
                    f" but belongs to workstream {task.workstream_id!r}"
                )


def _linked_problems(summary: DomainSummary, domain: str) -> Iterator[str]:
    # Flags and events have no domain field: they belong where their workstream and task are.
    workstreams = {ws.id for ws in summary.workstreams}
    task_workstream = {t.id: t.workstream_id for ws in summary.workstreams for t in ws.tasks}
    linked = [("flag", f.id, f.workstream_id, f.task_id) for f in summary.open_flags]
    linked += [("event", e.id, e.workstream_id, e.task_id) for e in summary.recent_events]
    for kind, item_id, workstream_id, task_id in linked:
        if workstream_id not in workstreams:
            yield f"{kind} {item_id!r} is on workstream {workstream_id!r}, not one of {domain!r}"
        elif task_id is not None and task_id not in task_workstream:
            yield f"{kind} {item_id!r} names task {task_id!r}, which is not in {domain!r}"
        elif task_id is not None and task_workstream[task_id] != workstream_id:
            yield (
                f"{kind} {item_id!r} is on workstream {workstream_id!r} but names task"
                f" {task_id!r} of workstream {task_workstream[task_id]!r}"
            )


def _decision_problems(summary: DomainSummary, domain: str, workstreams: set[str]) -> Iterator[str]:
    for decision in summary.open_decisions:
        if decision.domain != domain:
            yield f"decision {decision.id!r} is in domain {decision.domain!r}"
        elif decision.workstream_id is not None and decision.workstream_id not in workstreams:
            yield (
                f"decision {decision.id!r} is on workstream {decision.workstream_id!r},"
                f" which is not in {domain!r}"
            )


def _repeated(summary: DomainSummary) -> Iterator[str]:
    kinds: tuple[tuple[str, Iterable[str]], ...] = (
        ("workstream", (ws.id for ws in summary.workstreams)),
        ("task", (t.id for ws in summary.workstreams for t in ws.tasks)),
        ("decision", (d.id for d in summary.open_decisions)),
        ("flag", (f.id for f in summary.open_flags)),
        ("event", (e.id for e in summary.recent_events)),
    )
    for kind, ids in kinds:
        seen: set[str] = set()
        for item_id in ids:
            if item_id in seen:
                yield f"{kind} id {item_id!r} appears more than once"
            seen.add(item_id)
