"""Small observed domains and plan builders shared by the plan and authority tests."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

from custodian_runtime.core.contract import (
    Decision,
    DomainSummary,
    Flag,
    ProgressEvent,
    Task,
    WorkstreamWithTasks,
)
from custodian_runtime.core.plan.extract import Plan, extract_plan

NOW = datetime(2026, 11, 30, 8, 0, tzinfo=UTC)


def task(task_id: str, ws: str, status: str, *, idle_days: float = 1.0) -> Task:
    """A task last touched `idle_days` before NOW."""
    touched = NOW - timedelta(days=idle_days)
    return Task(
        id=task_id,
        workstream_id=ws,
        title=f"Task {task_id}",
        status=status,  # type: ignore[arg-type]
        created_at=touched - timedelta(days=30),
        updated_at=touched,
    )


def workstream(
    ws_id: str, domain: str, tasks: list[Task], status: str = "active"
) -> WorkstreamWithTasks:
    """A workstream holding `tasks`."""
    return WorkstreamWithTasks(
        id=ws_id,
        domain=domain,
        title=f"Workstream {ws_id}",
        status=status,  # type: ignore[arg-type]
        created_at=NOW - timedelta(days=90),
        updated_at=NOW - timedelta(days=2),
        tasks=tuple(tasks),
    )


def flag(flag_id: str, ws: str, task_id: str | None, status: str = "open") -> Flag:
    """A flag raised a day before NOW."""
    return Flag(
        id=flag_id,
        workstream_id=ws,
        task_id=task_id,
        note="please look",
        status=status,  # type: ignore[arg-type]
        raised_by="someone",
        created_at=NOW - timedelta(days=1),
    )


def decision(decision_id: str, domain: str, status: str = "open") -> Decision:
    """A decision recorded a week before NOW."""
    return Decision(
        id=decision_id,
        domain=domain,
        title="Pick a host",
        status=status,  # type: ignore[arg-type]
        created_at=NOW - timedelta(days=7),
    )


def website() -> DomainSummary:
    """The observed domain of most tests: two workstreams, one open flag, one open decision."""
    web = workstream(
        "ws-web",
        "website",
        [
            task("t-todo", "ws-web", "todo"),
            task("t-prog", "ws-web", "in_progress"),
            task("t-block", "ws-web", "blocked"),
            task("t-done", "ws-web", "done"),
        ],
    )
    docs = workstream("ws-docs", "website", [task("t-docs", "ws-docs", "todo")])
    return DomainSummary(
        domain="website",
        generated_at=NOW,
        workstreams=(web, docs),
        open_decisions=(decision("d-1", "website"),),
        open_flags=(flag("f-1", "ws-web", "t-block"),),
        recent_events=tuple(
            person_event(f"ev-{t}", ws, t)
            for ws, t in [("ws-web", "t-todo"), ("ws-web", "t-prog"), ("ws-web", "t-done")]
        ),
    )


def person_event(event_id: str, ws: str, task_id: str) -> ProgressEvent:
    """A milestone a person wrote on a task an hour before NOW: evidence for a status change."""
    return ProgressEvent(
        id=event_id,
        workstream_id=ws,
        task_id=task_id,
        event_type="milestone",
        summary=f"Work on {task_id} moved on.",
        source="ana",
        created_at=NOW - timedelta(hours=1),
    )


def platform() -> DomainSummary:
    """Another domain: its ids must never pass for ids of `website`."""
    plat = workstream("ws-plat", "platform", [task("t-plat", "ws-plat", "in_progress")])
    return DomainSummary(
        domain="platform",
        generated_at=NOW,
        workstreams=(plat,),
        open_decisions=(decision("d-plat", "platform"),),
        open_flags=(flag("f-plat", "ws-plat", "t-plat"),),
    )


def markdown(document: Any, prose: str = "Reasoning first.") -> str:
    """A model answer: prose, then the plan as the one ```json block."""
    return f"{prose}\n\n```json\n{json.dumps(document, indent=2)}\n```\n\nThat is all.\n"


def plan_of(**sections: Any) -> Plan:
    """The Plan that extract_plan makes of a JSON object with these sections."""
    return extract_plan(markdown(sections))


def proposal(operation: str, **params: Any) -> dict[str, Any]:
    """One entry of the `proposals` section."""
    return {"operation": operation, "params": params}
