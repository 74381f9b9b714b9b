"""The action-plan schema: one strict pydantic model per plan section and per operation.

Each operation's spec (core/operations/) names its params model here.

Every model forbids extra fields and reuses the contract's id pattern and text limits, so a value
that passes here is a value the hub would accept.
"""

from __future__ import annotations

from datetime import date
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from custodian_runtime.core.contract import (
    DomainName,
    EventType,
    Id,
    LongText,
    ShortText,
    TaskStatus,
    Title,
)

# The only statuses Custodian may set on its own (CUST-ADR-002 D4): both are reversible.
SANCTIONED_STATUSES: frozenset[str] = frozenset({"done", "in_progress"})

OPERATION_PATTERN = r"^[A-Za-z][A-Za-z0-9_.-]{0,63}$"
MAX_CANON_CHARS = 200_000

Reason = Annotated[str, StringConstraints(min_length=1, max_length=2000)]
OperationName = Annotated[str, StringConstraints(pattern=OPERATION_PATTERN)]
Person = Annotated[str, StringConstraints(min_length=1, max_length=200)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# --- plan sections ---------------------------------------------------------------------------


# The events a status change cites as its evidence (core/authority/evidence.py).
EvidenceIds = Annotated[tuple[Id, ...], Field(min_length=1, max_length=5)]
# The observed events or tasks a progress event reports on (core/authority/grounded.py).
RestsOn = Annotated[tuple[Id, ...], Field(min_length=1, max_length=5)]
# What to add when a required field is missing, said where the model reads why it was denied.
MISSING_HINTS = {
    "rests_on": "add `rests_on`, a list of the ids of the observed events or tasks the event "
    "reports (1 to 5)",
}


class ProposalEntry(_Strict):
    operation: OperationName
    params: dict[str, Any] = Field(default_factory=dict)
    rationale: Reason | None = None
    reason: Reason | None = None


# --- operation parameters --------------------------------------------------------------------


class AddProgressEvent(_Strict):
    workstream_id: Id
    task_id: Id | None = None
    event_type: EventType
    rests_on: RestsOn
    summary: ShortText


class TaskStatusChange(_Strict):
    task_id: Id
    status: TaskStatus
    evidence: EvidenceIds | None = None


class FlagForHuman(_Strict):
    task_id: Id
    note: ShortText


class CreateWorkstream(_Strict):
    domain: DomainName
    title: Title
    owner: Person | None = None


class CreateTask(_Strict):
    workstream_id: Id
    title: Title
    description: LongText | None = None
    status: TaskStatus | None = None
    assignee: Person | None = None
    due: date | None = None


class RecordDecision(_Strict):
    title: Title
    context: LongText | None = None
    options: tuple[Person, ...] | None = Field(default=None, max_length=20)
    workstream_id: Id | None = None


class ResolveDecision(_Strict):
    decision_id: Id
    resolution: ShortText


class ResolveFlag(_Strict):
    flag_id: Id


class WriteCanon(_Strict):
    path: Annotated[str, StringConstraints(min_length=1, max_length=255)]
    content: Annotated[str, StringConstraints(max_length=MAX_CANON_CHARS)]


def describe(exc: ValidationError) -> str:
    """A validation error as one readable line: `field: problem (got value)` per error."""
    parts = []
    for error in exc.errors(include_url=False):
        where = ".".join(str(part) for part in error["loc"]) or "(item)"
        got = "" if error["type"] == "missing" else f" (got {short(error.get('input'))})"
        field = str(error["loc"][-1]) if error["loc"] else ""
        hint = MISSING_HINTS.get(field) if error["type"] == "missing" else None
        parts.append(f"{where}: {error['msg']}{got}" + (f": {hint}" if hint else ""))
    return "; ".join(parts)


def short(value: Any, limit: int = 60) -> str:
    """A value's repr, cut to `limit` characters so junk cannot flood a note."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
