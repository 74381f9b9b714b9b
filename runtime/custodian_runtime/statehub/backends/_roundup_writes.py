"""The contract's writes on a Roundup tracker, each made once: found by its mark before it is sent.

Roundup has no idempotency keys. Each write keeps its key (and its body's digest) in the item's
`marks`; before a write goes out, the tracker is asked for that mark, and a write found there is
answered as a replay, not made again. A change reads the item, checks the mark and the contract's
`If-Match`, then sends the change with Roundup's ETag: a 412 (someone changed the item between)
reads it again, so a mark is never missed and a version never skipped.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from custodian_runtime.core.contract import (
    DecisionResolution,
    NewDecision,
    NewEvent,
    NewFlag,
    NewTask,
    NewWorkstream,
    TaskStatusUpdate,
)
from custodian_runtime.core.trackers import roundup as rd
from custodian_runtime.statehub.backends._gateway import Refused
from custodian_runtime.statehub.backends._roundup_rest import EtagStale, RoundupRest

Auth = Mapping[str, str]
Made = tuple[int, dict[str, Any], bool]  # status, the contract's resource, replayed
CHANGE_TRIES = 5  # reads and guarded sends of one change, while others keep changing the item


@dataclass(frozen=True)
class Mark:
    """A write's idempotency key and its body's digest, as the tracker keeps them."""

    key: str
    digest: str


def _number(kind: rd.Kind, contract_id: str | None, noun: str) -> str:
    number = None if contract_id is None else rd.roundup_id(kind, contract_id)
    if number is None:
        raise Refused(404, f"no {noun} with id {contract_id!r}")
    return number


def _existing(
    rest: RoundupRest, auth: Auth, kind: rd.Kind, contract_id: str | None, noun: str
) -> Any:
    item, _ = rest.item(kind, _number(kind, contract_id, noun), auth)
    return item


def _replay(
    item: Any, mark: Mark | None, shape: Callable[[Any], dict[str, Any]], status: int
) -> Made:
    if mark is not None and rd.mark_digest(item.get("marks"), mark.key) != mark.digest:
        raise Refused(
            422,
            f"idempotency key {mark.key!r} was used with another body",
            "idempotency_mismatch",
        )
    return status, shape(item), True


def _create(
    rest: RoundupRest,
    auth: Auth,
    kind: rd.Kind,
    values: dict[str, Any],
    mark: Mark | None,
    shape: Callable[[Any], dict[str, Any]],
) -> Made:
    if mark is not None:
        found = rd.marked(rest.items(kind, auth, {"marks": mark.key}), mark.key)
        if found is not None:
            return _replay(found, mark, shape, 201)
        values = {**values, "marks": rd.with_mark(None, mark.key, mark.digest)}
    item, _ = rest.item(kind, rest.create(kind, values, auth), auth)
    return 201, shape(item), False


def add_event(rest: RoundupRest, auth: Auth, body: NewEvent, mark: Mark | None) -> Made:
    """POST /events. An event on a task reads the task alone: its link names its workstream,
    which exists; only a task in another workstream reads that one (404 or 422, as the hub)."""
    number = _number(rd.WORKSTREAM, body.workstream_id, "workstream")
    task = None if body.task_id is None else _existing(rest, auth, rd.TASK, body.task_id, "task")
    own = None if task is None else str(rd.number_of(task.get("workstream")))
    if number != own:  # the task's own workstream exists: its link says so
        rest.item(rd.WORKSTREAM, number, auth)  # 404 when there is no such workstream
    if own is not None and own != number:
        raise Refused(422, f"task {body.task_id!r} is not in workstream {body.workstream_id!r}")
    values = {
        "workstream": number,
        "task": None if task is None else task["id"],
        "event_type": body.event_type,
        "summary": body.summary,
        "source": body.source,
    }
    return _create(rest, auth, rd.EVENT, values, mark, rd.event)


def add_flag(rest: RoundupRest, auth: Auth, body: NewFlag, mark: Mark | None) -> Made:
    """POST /flags: the workstream is the task's when not given (and then not read again)."""
    task = None if body.task_id is None else _existing(rest, auth, rd.TASK, body.task_id, "task")
    own = None if task is None else str(rd.number_of(task.get("workstream")))
    workstream_id = body.workstream_id
    if workstream_id is None and own is not None:
        workstream_id = rd.contract_id(rd.WORKSTREAM, own)
    number = _number(rd.WORKSTREAM, workstream_id, "workstream")
    if own is not None and own != number:  # as the hub: refused before the workstream is read
        raise Refused(422, f"task {body.task_id!r} is not in workstream {workstream_id!r}")
    if own is None:  # a task's own workstream exists: its link says so
        rest.item(rd.WORKSTREAM, number, auth)  # 404 when there is no such workstream
    values = {
        "workstream": number,
        "task": None if task is None else task["id"],
        "note": body.note,
        "status": "open",
        "raised_by": body.raised_by,
    }
    return _create(rest, auth, rd.FLAG, values, mark, rd.flag)


def create_workstream(
    rest: RoundupRest, auth: Auth, body: NewWorkstream, mark: Mark | None
) -> Made:
    """POST /workstreams."""
    values = {
        "domain": body.domain,
        "title": body.title,
        "owner": body.owner,
        "status": body.status or "active",  # the contract's default
    }
    return _create(rest, auth, rd.WORKSTREAM, values, mark, rd.workstream)


def create_task(rest: RoundupRest, auth: Auth, body: NewTask, mark: Mark | None) -> Made:
    """POST /tasks."""
    workstream = _existing(rest, auth, rd.WORKSTREAM, body.workstream_id, "workstream")
    values = {
        "workstream": workstream["id"],
        "title": body.title,
        "description": body.description,
        "status": body.status or "todo",  # the contract's default
        "assignee": body.assignee,
        "due": None if body.due is None else body.due.isoformat(),
    }
    return _create(rest, auth, rd.TASK, values, mark, rd.task)


def create_decision(rest: RoundupRest, auth: Auth, body: NewDecision, mark: Mark | None) -> Made:
    """POST /decisions; the options are kept as a JSON list."""
    workstream = None
    if body.workstream_id is not None:
        workstream = _existing(rest, auth, rd.WORKSTREAM, body.workstream_id, "workstream")
    values = {
        "domain": body.domain,
        "workstream": None if workstream is None else workstream["id"],
        "title": body.title,
        "context": body.context,
        "options": rd.options_text(body.options or ()),
        "status": "open",
    }
    return _create(rest, auth, rd.DECISION, values, mark, rd.decision)


StateCheck = Callable[[Any], None]  # refuses a change the item's state does not allow


def _change(
    rest: RoundupRest,
    auth: Auth,
    kind: rd.Kind,
    number: str,
    values: dict[str, Any],
    mark: Mark | None,
    check: StateCheck,
    shape: Callable[[Any], dict[str, Any]],
) -> Made:
    for _ in range(CHANGE_TRIES):
        item, etag = rest.item(kind, number, auth)
        if mark is not None and rd.mark_digest(item.get("marks"), mark.key) is not None:
            return _replay(item, mark, shape, 200)
        check(item)
        sent = (
            values
            if mark is None
            else {**values, "marks": rd.with_mark(item.get("marks"), mark.key, mark.digest)}
        )
        try:
            rest.change(kind, number, etag, sent, auth)
        except EtagStale:
            continue
        after, _ = rest.item(kind, number, auth)  # the item as the tracker keeps it now
        return 200, shape(after), False
    raise Refused(503, f"{kind.klass} {number} kept changing; try again", "unavailable")


def update_task_status(
    rest: RoundupRest,
    auth: Auth,
    task_id: str,
    body: TaskStatusUpdate,
    mark: Mark | None,
    if_match: int | None,
) -> Made:
    """PATCH /tasks/{id}; with the contract's If-Match, only at that version (else 412)."""

    def check(item: Any) -> None:
        if if_match is not None and int(item.get("version") or 1) != if_match:
            raise Refused(
                412,
                f"task {task_id!r} is at version {item.get('version')}, not {if_match}",
                "precondition_failed",
                extra={"current": rd.task(item)},
            )

    number = _number(rd.TASK, task_id, "task")
    return _change(rest, auth, rd.TASK, number, {"status": body.status}, mark, check, rd.task)


def resolve_flag(rest: RoundupRest, auth: Auth, flag_id: str, mark: Mark | None) -> Made:
    """PATCH /flags/{id} to resolved; 409 when it is resolved already."""
    values = {"status": "resolved", "resolved_at": "."}  # ".": Roundup's now
    number = _number(rd.FLAG, flag_id, "flag")
    return _change(rest, auth, rd.FLAG, number, values, mark, _open("flag", flag_id), rd.flag)


def resolve_decision(
    rest: RoundupRest, auth: Auth, decision_id: str, body: DecisionResolution, mark: Mark | None
) -> Made:
    """POST /decisions/{id}/resolve; 409 when it is resolved already."""
    values = {"status": "resolved", "resolution": body.resolution, "resolved_at": "."}
    number = _number(rd.DECISION, decision_id, "decision")
    check = _open("decision", decision_id)
    return _change(rest, auth, rd.DECISION, number, values, mark, check, rd.decision)


def _open(noun: str, contract_id: str) -> StateCheck:
    def check(item: Any) -> None:
        if item.get("status") == "resolved":
            raise Refused(409, f"{noun} {contract_id!r} is resolved already")

    return check
