"""The rule-based planner behind the `offline` model: fixed rules over PlanningFacts, no model.

Rules: flag in-progress tasks untouched for `stale_after_days` or more, and blocked tasks, unless
the task already has an open flag, a person recently rejected a flag or a status change for it
(the window the prompt shows), or a person set or approved its status within `defer_days`
(`PlanningFacts.decided`: the flag budget is not spent on what a person just decided). It
writes no summary events: a quiet domain gets an empty plan. It
marks an in-progress task done only when a person's milestone or status-change event on that task,
newer than the task's last change (the authority's own comparison), says the work is done, and it
cites that event as evidence (core/authority/evidence.py), unless a person recently rejected a flag
or a status change for that task. It stays within the default per-run caps. The same facts always
give the same bytes.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import custodian_runtime.core.operations as operations
from custodian_runtime.core._timestamps import activity_age
from custodian_runtime.core.authority.evidence import (
    Evidence,
    by_custodian,
    last_change,
    newer_than,
)
from custodian_runtime.core.contract import ProgressEvent, Task
from custodian_runtime.core.digest import workstream_digests
from custodian_runtime.core.limits import DEFAULT
from custodian_runtime.core.tooling.planning_facts import PlanningFacts

# The default per-run caps (core/limits.py), so that the plan is never cut by the authority.
MAX_FLAGS = DEFAULT.max_flags
MAX_STATUS_UPDATES = DEFAULT.max_status_updates
_DONE_WORDS = re.compile(r"\b(done|completed?|finished|shipped|merged)\b", re.IGNORECASE)


@dataclass(frozen=True)
class _Finding:
    task: Task
    kind: str  # "stale" or "blocked"
    idle_days: int | None  # None: no trustworthy time (core/_timestamps.py)
    suspect: bool = False

    @property
    def order(self) -> tuple[int, str]:
        # Oldest first (an unknown age first of all), so the cap leaves out the freshest problems.
        return (-1 if self.idle_days is None else -self.idle_days, self.task.id)


def offline_plan(facts: PlanningFacts) -> str:
    """The rule-based plan for `facts`: Markdown prose and exactly one ```json block."""
    findings = sorted(_findings(facts), key=lambda finding: finding.order)
    flags = findings[:MAX_FLAGS]
    plan = {
        "observations": _observations(facts, findings),
        "progress_events": [],
        "tasks_to_update": _done_with_evidence(facts)[:MAX_STATUS_UPDATES],
        "tasks_to_flag": [_flag(finding, facts.stale_after_days) for finding in flags],
    }
    block = json.dumps(plan, indent=2, sort_keys=True, ensure_ascii=False)
    prose = _prose(facts, len(findings) - len(flags))
    return f"{prose}\n\n```json\n{block}\n```\n"


def _findings(facts: PlanningFacts) -> list[_Finding]:
    flagged = {f.task_id for f in facts.summary.open_flags if f.status == "open" and f.task_id}
    now = _utc(facts.now)
    found = []
    for ws in facts.summary.workstreams:
        for task in ws.tasks:
            if task.id in flagged or task.id in facts.decided or _rejected_for(facts, task.id):
                continue
            age = activity_age(task.touched_at, task.created_at, None, now)
            if task.status == "blocked":
                found.append(_Finding(task, "blocked", age.days, age.suspect))
            elif task.status == "in_progress" and age.stale(facts.stale_after_days - 1):
                found.append(_Finding(task, "stale", age.days, age.suspect))
    return found


def _rejected_for(facts: PlanningFacts, task_id: str) -> bool:
    """Whether a person recently rejected a flag or a status change for this task."""
    # A rejected write that claims a task (a flag, a status change) stops all of them for it.
    claims = (s.name for s in operations.all_specs() if s.conflict is not None)
    return any((operation, task_id) in facts.rejected for operation in claims)


def _done_with_evidence(facts: PlanningFacts) -> list[dict[str, Any]]:
    """`done` for in-progress tasks that a person's newer event reports done, citing it."""
    tasks = {t.id: t for ws in facts.summary.workstreams for t in ws.tasks}
    seen = Evidence.of(facts.summary)
    cited: dict[str, str] = {}
    for e in sorted(facts.summary.recent_events, key=lambda e: (e.created_at, e.id)):
        task = tasks.get(e.task_id or "")
        if (
            task is not None
            and task.status == "in_progress"
            and e.event_type in ("milestone", "status_change")
            and _after_last_change(e, task, seen)
            and _DONE_WORDS.search(e.summary)
            and by_custodian(e, frozenset()) is None
            and not _rejected_for(facts, task.id)
        ):
            cited[task.id] = e.id  # the newest such event wins
    return [
        {
            "task_id": task_id,
            "status": "done",
            "evidence": [event_id],
            "reason": f"event {event_id}, not written by Custodian, reports the work done",
        }
        for task_id, event_id in sorted(cited.items())
    ]


def _after_last_change(event: ProgressEvent, task: Task, seen: Evidence) -> bool:
    """Whether `event` is newer than the task's last change, as the authority compares them."""
    if seen.ahead(event):
        return False  # dated ahead of the hub's own time: no evidence (core/authority/evidence.py)
    change = last_change(task, seen, leave_out=(event.id,))
    return change is None or newer_than(event, change)


def _flag(finding: _Finding, stale_after_days: int) -> dict[str, Any]:
    task = finding.task
    since = _utc(task.touched_at).date().isoformat()
    if finding.idle_days is None or finding.suspect:
        note = (
            f"Task {task.id} is {task.status.replace('_', ' ')} and its recorded times lie in the "
            f"future (last update {since}), so how long it has been idle is "
            + (
                "unknown"
                if finding.idle_days is None
                else f"about {_count(finding.idle_days, 'day')}"
            )
            + "; please check the task and its dates."
        )
        return {"task_id": task.id, "note": note, "reason": "timestamps from the future"}
    if finding.kind == "blocked":
        note = (
            f"Task {task.id} is blocked (last updated {since}, "
            f"{_count(finding.idle_days, 'day')} ago) and nobody has been asked to unblock it."
        )
        reason = "blocked task without an open flag"
    else:
        note = (
            f"Task {task.id} has been in progress without an update for "
            f"{_count(finding.idle_days, 'day')} (since {since}); please check whether it is "
            "still being worked on."
        )
        reason = f"in progress and untouched for {stale_after_days} days or more"
    return {"task_id": task.id, "note": note, "reason": reason}


def _observations(facts: PlanningFacts, findings: list[_Finding]) -> list[str]:
    tasks = sum(len(ws.tasks) for ws in facts.summary.workstreams)
    stale = sum(1 for f in findings if f.kind == "stale")
    blocked = len(findings) - stale
    summary = facts.summary
    return [
        f"Domain {facts.domain}: {_count(len(summary.workstreams), 'workstream')}, "
        f"{_count(tasks, 'task')}, {_count(len(summary.open_flags), 'open flag')}, "
        f"{_count(len(summary.open_decisions), 'open decision')}.",
        f"Needing a flag: {_count(stale, 'stale in-progress task')} and "
        f"{_count(blocked, 'blocked task')}.",
        _changed_line(facts),
        *_respected(facts),
        *_decided(facts),
    ]


def _respected(facts: PlanningFacts) -> list[str]:
    """Which tasks it left alone because a person recently rejected a proposal for them."""
    tasks = sorted(
        t.id for ws in facts.summary.workstreams for t in ws.tasks if _rejected_for(facts, t.id)
    )
    if not tasks:
        return []
    return [
        "Left alone, as a person recently rejected a flag or status change for them: "
        + ", ".join(tasks)
        + "."
    ]


def _decided(facts: PlanningFacts) -> list[str]:
    """Which tasks it left alone because a person just decided their status."""
    if not facts.decided:
        return []
    return [
        "Left alone, as a person recently set or approved their status: "
        + ", ".join(sorted(facts.decided))
        + "."
    ]


def _changed_line(facts: PlanningFacts) -> str:
    """What changed since the last completed run, or that there was no earlier run."""
    previous = facts.previous_workstream_digests
    if previous is None:
        return "No completed run of this domain came before this one: nothing to compare with."
    current = facts.workstream_digests or workstream_digests(facts.summary)
    changed = sum(1 for ws_id, digest in current.items() if previous.get(ws_id) != digest)
    return f"Changed since the last completed run: {_count(changed, 'workstream')}."


def _prose(facts: PlanningFacts, flags_left: int) -> str:
    lines = [
        f"# Rule-based review of {facts.domain}",
        "",
        "This plan comes from Custodian's rule-based offline planner; no language model was "
        "consulted. It flags in-progress tasks untouched for "
        f"{facts.stale_after_days} days or more and blocked tasks without an open flag, unless "
        "a person recently rejected a flag or a status change for the task. It writes no "
        "summary events. It marks a task done only when a person's event on it says so, and "
        "cites that event.",
    ]
    if flags_left:
        lines += [
            "",
            f"Left out: {_count(flags_left, 'more flag')}, over the cap of {MAX_FLAGS} per run.",
        ]
    return "\n".join(lines)


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def _utc(moment: datetime) -> datetime:
    # The hub speaks UTC; a naive timestamp is read as UTC so that comparisons never fail.
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment
