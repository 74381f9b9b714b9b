"""Pydantic models of the state-hub contract v1.2 (v1, task versions, hub ids, domain revisions).

Responses tolerate unknown fields (the hub may grow); request bodies are strict and forbid them.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator
from pydantic.config import JsonDict

# Their home is core/names.py (light: a lock or a skip checks a name without pydantic).
from custodian_runtime.core.names import DOMAIN_PATTERN as DOMAIN_PATTERN
from custodian_runtime.core.names import DOMAIN_RULE as DOMAIN_RULE
from custodian_runtime.core.names import ID_PATTERN as ID_PATTERN
from custodian_runtime.core.names import is_domain as is_domain

Id = Annotated[str, StringConstraints(pattern=ID_PATTERN)]
DomainName = Annotated[str, StringConstraints(pattern=DOMAIN_PATTERN)]
Title = Annotated[str, StringConstraints(min_length=1, max_length=200)]
ShortText = Annotated[str, StringConstraints(min_length=1, max_length=2000)]


LongText = Annotated[str, StringConstraints(max_length=10000)]

WorkstreamStatus = Literal["active", "paused", "done"]
TaskStatus = Literal["todo", "in_progress", "blocked", "done", "cancelled"]
DecisionStatus = Literal["open", "resolved"]
FlagStatus = Literal["open", "resolved"]
EventType = Literal["note", "observation", "milestone", "blocker", "status_change"]

WORKSTREAM_STATUSES: tuple[str, ...] = ("active", "paused", "done")
TASK_STATUSES: tuple[str, ...] = ("todo", "in_progress", "blocked", "done", "cancelled")
EVENT_TYPES: tuple[str, ...] = ("note", "observation", "milestone", "blocker", "status_change")

TEXT_LIMITS: dict[str, int] = {
    "title": 200,
    "summary": 2000,
    "note": 2000,
    "resolution": 2000,
    "description": 10000,
    "context": 10000,
}


class Response(BaseModel):
    """Base of everything the hub sends: unknown fields are ignored."""

    model_config = ConfigDict(extra="ignore", frozen=True)


class Request(BaseModel):
    """Base of every request body: unknown fields are an error."""

    model_config = ConfigDict(extra="forbid", frozen=True)


# --- resources -------------------------------------------------------------------------------


class Workstream(Response):
    id: str
    domain: str
    title: str
    status: WorkstreamStatus
    owner: str | None = None
    created_at: datetime
    updated_at: datetime


class Task(Response):
    id: str
    workstream_id: str
    title: str
    description: str = ""
    status: TaskStatus
    assignee: str | None = None
    due: date | None = None
    created_at: datetime
    # None from a hub that does not send it: the task's own events tell its last change then.
    updated_at: datetime | None = None
    version: int | None = None  # v1.1: grows by one on every change; None from a v1 hub

    @property
    def touched_at(self) -> datetime:
        """The task's last update as the hub tells it: `updated_at`, else `created_at`."""
        return self.updated_at or self.created_at


class Decision(Response):
    id: str
    domain: str
    workstream_id: str | None = None
    title: str
    context: str = ""
    options: tuple[str, ...] = ()
    status: DecisionStatus
    resolution: str | None = None
    created_at: datetime
    resolved_at: datetime | None = None


class ProgressEvent(Response):
    id: str
    workstream_id: str
    task_id: str | None = None
    event_type: EventType
    summary: str
    source: str
    created_at: datetime


class Flag(Response):
    id: str
    workstream_id: str
    task_id: str | None = None
    note: str
    status: FlagStatus
    raised_by: str
    created_at: datetime
    resolved_at: datetime | None = None


# --- reads -----------------------------------------------------------------------------------


class Health(Response):
    status: str
    version: str
    hub_id: Id | None = None  # v1.2: the hub's store, whatever URL reaches it; None from v1.1


class WorkstreamCounts(Response):
    active: int = 0
    paused: int = 0
    done: int = 0


class TaskCounts(Response):
    todo: int = 0
    in_progress: int = 0
    blocked: int = 0
    done: int = 0
    cancelled: int = 0


class DomainOverview(Response):
    domain: str
    revision: int | None = None  # v1.2: grows on every change in the domain; None from v1.1
    workstreams: WorkstreamCounts
    tasks: TaskCounts
    open_flags: int
    open_decisions: int
    last_event_at: datetime | None = None


class DomainRevision(Response):
    """A domain of `GET /state/summary` as a pass of `custodian watch` first reads it."""

    domain: str
    revision: int | None = None


class SummaryRevisions(Response):
    """`GET /state/summary` read for its names and revisions alone: what decides which domains
    are due, at a fraction of the whole's parse (the counts are read when a run needs them)."""

    domains: tuple[DomainRevision, ...]


class StateSummary(Response):
    generated_at: datetime
    hub_id: Id | None = None  # v1.2
    domains: tuple[DomainOverview, ...]


class WorkstreamWithTasks(Workstream):
    tasks: tuple[Task, ...] = ()


class DomainSummary(Response):
    domain: str
    revision: int | None = None  # v1.2: what `If-None-Match` names; None from v1.1
    generated_at: datetime
    workstreams: tuple[WorkstreamWithTasks, ...]
    open_decisions: tuple[Decision, ...] = ()
    open_flags: tuple[Flag, ...] = ()
    recent_events: tuple[ProgressEvent, ...] = ()


class EventList(Response):
    events: tuple[ProgressEvent, ...]


class FlagList(Response):
    flags: tuple[Flag, ...]


class DecisionList(Response):
    decisions: tuple[Decision, ...]


class WorkstreamList(Response):
    workstreams: tuple[Workstream, ...]


class ErrorBody(Response):
    detail: str
    code: str


class PreconditionFailedBody(ErrorBody):
    current: Task | None = None  # v1.1: the task as it is now, on a 412


# --- writes ----------------------------------------------------------------------------------


class NewEvent(Request):
    workstream_id: Id
    task_id: Id | None = None
    event_type: EventType
    summary: ShortText
    source: Annotated[str, StringConstraints(min_length=1, max_length=200)]


class TaskStatusUpdate(Request):
    status: TaskStatus


# JSON Schema for "at least one of task_id and workstream_id", which the validator below enforces.
_ONE_TARGET: JsonDict = {
    "anyOf": [
        {"required": [name], "properties": {name: {"type": "string"}}}
        for name in ("task_id", "workstream_id")
    ]
}


class NewFlag(Request):
    model_config = ConfigDict(extra="forbid", frozen=True, json_schema_extra=_ONE_TARGET)

    task_id: Id | None = None
    workstream_id: Id | None = None
    note: ShortText
    raised_by: Annotated[str, StringConstraints(min_length=1, max_length=200)]

    @model_validator(mode="after")
    def _needs_a_target(self) -> NewFlag:
        if self.task_id is None and self.workstream_id is None:
            raise ValueError("a flag needs task_id or workstream_id (or both)")
        return self


class FlagResolution(Request):
    status: Literal["resolved"]


class NewWorkstream(Request):
    domain: DomainName
    title: Title
    owner: Annotated[str, StringConstraints(max_length=200)] | None = None
    status: WorkstreamStatus | None = None


class NewTask(Request):
    workstream_id: Id
    title: Title
    description: LongText | None = None
    status: TaskStatus | None = None
    assignee: Annotated[str, StringConstraints(max_length=200)] | None = None
    due: date | None = None


class NewDecision(Request):
    domain: DomainName
    workstream_id: Id | None = None
    title: Title
    context: LongText | None = None
    options: tuple[Annotated[str, StringConstraints(min_length=1, max_length=200)], ...] | None = (
        Field(default=None, max_length=20)
    )


class DecisionResolution(Request):
    resolution: ShortText
