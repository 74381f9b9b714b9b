"""The checks behind core/authority.py: the observed domain as lookups, and the run's tally."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from custodian_runtime.core._normalized import normalized_text
from custodian_runtime.core.contract import (
    Decision,
    DomainSummary,
    Flag,
    ProgressEvent,
    Task,
    WorkstreamWithTasks,
)
from custodian_runtime.core.marks import same_text
from custodian_runtime.core.plan import ProposedItem
from custodian_runtime.core.plan_schema import short

# Creates store the ids of what already bears their title (none, when proposed) under this key.
SAME_TITLE = "same_title"
CREATE_OPERATIONS = frozenset({"create_workstream", "create_task", "record_decision"})
_STATUS_OPERATIONS = frozenset({"update_task_status", "set_task_status"})
_DRIVE = re.compile(r"^[A-Za-z]:")


@dataclass(frozen=True)
class View:
    """The observed domain, indexed by id. Only open decisions and open flags are targets."""

    domain: str
    workstreams: dict[str, WorkstreamWithTasks]
    tasks: dict[str, Task]
    decisions: dict[str, Decision]
    flags: dict[str, Flag]
    flagged_tasks: frozenset[str]
    own_events: tuple[ProgressEvent, ...] = ()
    events: tuple[ProgressEvent, ...] = ()

    @classmethod
    def of(cls, observed: DomainSummary) -> View:
        """Index `observed`; decisions and flags count only while they are open."""
        tasks = {task.id: task for ws in observed.workstreams for task in ws.tasks}
        flags = {flag.id: flag for flag in observed.open_flags if flag.status == "open"}
        return cls(
            domain=observed.domain,
            workstreams={ws.id: ws for ws in observed.workstreams},
            tasks=tasks,
            decisions={d.id: d for d in observed.open_decisions if d.status == "open"},
            flags=flags,
            flagged_tasks=frozenset(f.task_id for f in flags.values() if f.task_id is not None),
            own_events=tuple(e for e in observed.recent_events if e.source == "custodian"),
            events=tuple(observed.recent_events),
        )

    def recorded_event(self, params: Mapping[str, Any]) -> str | None:
        """The id of an event Custodian already wrote that says the same thing, if any."""
        for event in self.own_events:
            if (
                event.workstream_id == params["workstream_id"]
                and event.task_id == params.get("task_id")
                and event.event_type == params["event_type"]
                and same_text(event.summary, params["summary"])
            ):
                return event.id
        return None

    def task_status(self, task_id: str) -> str:
        """The observed status of a task known to be in the domain."""
        return self.tasks[task_id].status

    def snapshot(self, kind: str, target: str, *, updated: bool = True) -> dict[str, Any] | None:
        """{id, status[, updated_at]} of a task, workstream, decision or flag; None if unseen."""
        tables: dict[str, dict[str, Any]] = {
            "task": self.tasks,
            "workstream": self.workstreams,
            "decision": self.decisions,
            "flag": self.flags,
        }
        found = tables[kind].get(target)
        if found is None:
            return None
        fields = {"id", "status", "updated_at"} if updated else {"id", "status"}
        return dict(found.model_dump(mode="json", include=fields))


@dataclass
class Tally:
    """What the run has ruled so far: fingerprints seen, tasks claimed, writes counted."""

    fingerprints: dict[str, int] = field(default_factory=dict)
    status_tasks: dict[str, int] = field(default_factory=dict)
    flag_tasks: dict[str, int] = field(default_factory=dict)
    executes: Counter[str] = field(default_factory=Counter)
    queued: int = 0

    def first_with(self, fp: str) -> int | None:
        """Index of the earlier item with this fingerprint, if any."""
        return self.fingerprints.get(fp)

    def executed(self, operation: str) -> int:
        """How many items of `operation` the run has ruled `execute` so far."""
        return self.executes[operation]

    def conflict(self, item: ProposedItem) -> str | None:
        """Why an accepted earlier item rules this one out (a second status or flag on a task)."""
        task = item.params.get("task_id")
        if item.operation in _STATUS_OPERATIONS and task in self.status_tasks:
            return f"plan item #{self.status_tasks[task]} already sets the status of task {task}"
        if item.operation == "flag_for_human" and task in self.flag_tasks:
            return f"plan item #{self.flag_tasks[task]} already flags task {task}"
        return None

    def record(self, item: ProposedItem, outcome: str) -> None:
        """Count the ruling just made for `item`."""
        self.fingerprints.setdefault(item.fingerprint, item.index)
        if outcome == "deny":
            return
        task = item.params.get("task_id")
        if item.operation in _STATUS_OPERATIONS and isinstance(task, str):
            self.status_tasks.setdefault(task, item.index)
        if item.operation == "flag_for_human" and isinstance(task, str):
            self.flag_tasks.setdefault(task, item.index)
        if outcome == "execute":
            self.executes[item.operation] += 1
        else:
            self.queued += 1


def ids_problem(operation: str, params: dict[str, Any], view: View) -> str | None:
    """Why the ids in `params` are not ids of the observed domain (None when they all are)."""
    domain = params.get("domain", view.domain)
    if domain != view.domain:
        return f"it names domain {short(domain)}, but this run observes domain {view.domain}"
    for key, table, what in (
        ("workstream_id", view.workstreams, "a workstream"),
        ("task_id", view.tasks, "a task"),
        ("decision_id", view.decisions, "an open decision"),
        ("flag_id", view.flags, "an open flag"),
    ):
        if key not in params:
            continue
        value = params[key]
        if not isinstance(value, str) or value not in table:
            return f"{key} {short(value)} is not {what} of the observed domain {view.domain}"
    task, workstream = params.get("task_id"), params.get("workstream_id")
    if isinstance(task, str) and isinstance(workstream, str):
        actual = view.tasks[task].workstream_id
        if actual != workstream:
            return f"task {task} belongs to workstream {actual}, not {workstream}"
    return None


def same_titles(operation: str, params: dict[str, Any], view: View) -> list[str]:
    """Ids of what a create would duplicate: a task in the same workstream, a workstream in the
    domain, an open decision in the domain, with the same title (normalized)."""
    title = params.get("title")
    if operation not in CREATE_OPERATIONS or not isinstance(title, str):
        return []
    wanted = normalized_text(title)
    pool: list[Any]
    if operation == "create_task":
        parent = params.get("workstream_id")
        pool = [t for t in view.tasks.values() if t.workstream_id == parent]
    elif operation == "create_workstream":
        pool = list(view.workstreams.values())
    else:
        pool = list(view.decisions.values())
    return sorted(item.id for item in pool if normalized_text(item.title) == wanted)


_CREATED = {
    "create_task": "its workstream already has a task titled",
    "create_workstream": "the domain already has a workstream titled",
    "record_decision": "the domain already has an open decision titled",
}


def queued_state_problem(operation: str, params: dict[str, Any], view: View) -> str | None:
    """Why a proposal for a person would be pointless in the observed state (None if it is not)."""
    same = same_titles(operation, params, view)
    if same:
        return f"{_CREATED[operation]} {short(params['title'])} ({', '.join(same)})"
    if operation == "set_task_status":
        current = view.task_status(params["task_id"])
        if current == params["status"]:
            return f"task {params['task_id']} is already {current}"
    return None


def canon_path_problem(path: str) -> str | None:
    """Why `path` is not a safe relative Markdown path under the canon (None when it is)."""
    if "\x00" in path or "\\" in path or any(ord(ch) < 32 for ch in path):
        return f"the canon path {short(path)} holds a backslash or a control character"
    if path.startswith("/") or _DRIVE.match(path):
        return f"the canon path {short(path)} is absolute; give a path relative to the canon"
    parts = path.split("/")
    if any(part in ("", ".", "..") for part in parts):
        return f"the canon path {short(path)} has an empty, '.' or '..' component"
    if not path.endswith(".md"):
        return f"the canon path {short(path)} does not end in .md"
    return None
