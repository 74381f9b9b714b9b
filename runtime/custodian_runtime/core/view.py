"""The observed domain as the specs, the authority and reconcile read it: `View`, by id.

What makes a write Custodian's own is here too: the source it writes under and the run mark on
the text of every write it makes.

It sits below the operations registry and the authority, which both read it, so neither imports
the other for it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from custodian_runtime.core.contract import (
    Decision,
    DomainSummary,
    Flag,
    ProgressEvent,
    Task,
    WorkstreamWithTasks,
)

# The `source` (and flag `raised_by`) Custodian writes under: how its own writes are told apart.
OWN_SOURCE = "custodian"

# The mark Custodian puts on the text of every write it makes, and how to read it back.
_MARK = re.compile(r" \[custodian run [A-Za-z0-9._:-]+\]$")


def with_run_mark(text: str, run_id: str, limit: int = 2000) -> str:
    """`text [custodian run <id>]`, cut so the whole fits in `limit` characters."""
    suffix = f" [custodian run {run_id}]"
    return text[: limit - len(suffix)] + suffix


def without_run_mark(text: str) -> str:
    """The text as the model wrote it (possibly cut), without the run mark."""
    return _MARK.sub("", text)


def same_text(marked: str, proposed: str) -> bool:
    """Whether a marked text on the hub records what `proposed` says (allowing for the cut)."""
    original = without_run_mark(marked)
    if original == proposed:
        return True
    # A long text was cut to make room for the mark: compare what survived.
    return marked != original and len(marked) >= 1990 and proposed.startswith(original)


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
            own_events=tuple(e for e in observed.recent_events if e.source == OWN_SOURCE),
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
