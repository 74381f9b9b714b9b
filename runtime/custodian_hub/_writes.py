"""The hub's writes: each runs inside the caller's write transaction and returns (status, JSON)."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from custodian_hub._reads import domain_exists, get_by_id
from custodian_hub._wire import ApiError, db_date, etag_header
from custodian_runtime.core.contract import (
    DecisionResolution,
    FlagResolution,
    NewDecision,
    NewEvent,
    NewFlag,
    NewTask,
    NewWorkstream,
    TaskStatusUpdate,
)

Result = tuple[int, dict[str, Any]]

ID_PREFIXES: dict[str, str] = {
    "workstreams": "ws",
    "tasks": "task",
    "decisions": "dec",
    "events": "evt",
    "flags": "flag",
}


def new_id(conn: sqlite3.Connection, table: str) -> str:
    """The next free id of a kind, e.g. `evt-000042`; skips ids a seed already took."""
    prefix = ID_PREFIXES[table]
    row = conn.execute("SELECT value FROM counters WHERE kind = ?", (table,)).fetchone()
    value = 0 if row is None else int(row["value"])
    while True:
        value += 1
        candidate = f"{prefix}-{value:06d}"
        taken = conn.execute(f"SELECT 1 FROM {table} WHERE id = ?", (candidate,)).fetchone()
        if taken is None:
            break
    conn.execute(
        "INSERT INTO counters (kind, value) VALUES (?, ?)"
        " ON CONFLICT (kind) DO UPDATE SET value = excluded.value",
        (table, value),
    )
    return candidate


def insert(conn: sqlite3.Connection, table: str, values: dict[str, Any]) -> None:
    """Insert one row from a column -> value mapping."""
    columns = ", ".join(values)
    marks = ", ".join("?" for _ in values)
    conn.execute(f"INSERT INTO {table} ({columns}) VALUES ({marks})", list(values.values()))


def domain_of(conn: sqlite3.Connection, resource: dict[str, Any]) -> str:
    """The domain a written resource is in: its own, or its workstream's."""
    if "domain" in resource:
        return str(resource["domain"])
    row = conn.execute(
        "SELECT domain FROM workstreams WHERE id = ?", (resource["workstream_id"],)
    ).fetchone()
    return str(row["domain"])


def _require(conn: sqlite3.Connection, table: str, item_id: str, noun: str) -> dict[str, Any]:
    found = get_by_id(conn, table, item_id)
    if found is None:
        raise ApiError(404, f"no {noun} with id {item_id!r}")
    return found


def _created(conn: sqlite3.Connection, table: str, values: dict[str, Any]) -> Result:
    insert(conn, table, values)
    return 201, _require(conn, table, values["id"], table)


def _touch_workstream(conn: sqlite3.Connection, workstream_id: str, now: str) -> None:
    # A workstream counts as updated when its own tasks change.
    conn.execute("UPDATE workstreams SET updated_at = ? WHERE id = ?", (now, workstream_id))


def add_event(conn: sqlite3.Connection, now: str, body: NewEvent) -> Result:
    """POST /events."""
    _require(conn, "workstreams", body.workstream_id, "workstream")
    if body.task_id is not None:
        task = _require(conn, "tasks", body.task_id, "task")
        if task["workstream_id"] != body.workstream_id:
            raise ApiError(
                422,
                f"task {body.task_id!r} belongs to workstream {task['workstream_id']!r},"
                f" not {body.workstream_id!r}",
            )
    values = {"id": new_id(conn, "events"), **body.model_dump(), "created_at": now}
    return _created(conn, "events", values)


def update_task_status(
    conn: sqlite3.Connection,
    now: str,
    body: TaskStatusUpdate,
    task_id: str,
    if_match: int | None = None,
) -> Result:
    """PATCH /tasks/{id}; with `if_match`, only when the task is at that version (else 412)."""
    task = _require(conn, "tasks", task_id, "task")
    if if_match is not None and task["version"] != if_match:
        raise ApiError(
            412,
            f"task {task_id!r} is at version {task['version']}, not {if_match} as If-Match says;"
            " read it again and decide on what it is now",
            headers=etag_header(task),
            extra={"current": task},
        )
    conn.execute(
        "UPDATE tasks SET status = ?, updated_at = ?, version = version + 1 WHERE id = ?",
        (body.status, now, task_id),
    )
    _touch_workstream(conn, task["workstream_id"], now)
    return 200, _require(conn, "tasks", task_id, "task")


def add_flag(conn: sqlite3.Connection, now: str, body: NewFlag) -> Result:
    """POST /flags; the workstream comes from the task when it is not given."""
    workstream_id = body.workstream_id
    if body.task_id is not None:
        task = _require(conn, "tasks", body.task_id, "task")
        if workstream_id is not None and task["workstream_id"] != workstream_id:
            raise ApiError(
                422,
                f"task {body.task_id!r} belongs to workstream {task['workstream_id']!r},"
                f" not {workstream_id!r}",
            )
        workstream_id = task["workstream_id"]
    assert workstream_id is not None  # NewFlag guarantees one of the two ids
    _require(conn, "workstreams", workstream_id, "workstream")
    values = {
        "id": new_id(conn, "flags"),
        "workstream_id": workstream_id,
        "task_id": body.task_id,
        "note": body.note,
        "status": "open",
        "raised_by": body.raised_by,
        "created_at": now,
        "resolved_at": None,
    }
    return _created(conn, "flags", values)


def resolve_flag(conn: sqlite3.Connection, now: str, body: FlagResolution, flag_id: str) -> Result:
    """PATCH /flags/{id}."""
    flag = _require(conn, "flags", flag_id, "flag")
    if flag["status"] == "resolved":
        raise ApiError(409, f"flag {flag_id!r} was already resolved at {flag['resolved_at']}")
    conn.execute(
        "UPDATE flags SET status = ?, resolved_at = ? WHERE id = ?", (body.status, now, flag_id)
    )
    return 200, _require(conn, "flags", flag_id, "flag")


def create_workstream(conn: sqlite3.Connection, now: str, body: NewWorkstream) -> Result:
    """POST /workstreams; a new domain comes into being with its first workstream."""
    values = {
        "id": new_id(conn, "workstreams"),
        "domain": body.domain,
        "title": body.title,
        "status": body.status or "active",
        "owner": body.owner,
        "created_at": now,
        "updated_at": now,
    }
    return _created(conn, "workstreams", values)


def create_task(conn: sqlite3.Connection, now: str, body: NewTask) -> Result:
    """POST /tasks."""
    _require(conn, "workstreams", body.workstream_id, "workstream")
    values = {
        "id": new_id(conn, "tasks"),
        "workstream_id": body.workstream_id,
        "title": body.title,
        "description": body.description or "",
        "status": body.status or "todo",
        "assignee": body.assignee,
        "due": db_date(body.due),
        "created_at": now,
        "updated_at": now,
    }
    _touch_workstream(conn, body.workstream_id, now)
    return _created(conn, "tasks", values)


def create_decision(conn: sqlite3.Connection, now: str, body: NewDecision) -> Result:
    """POST /decisions; the domain must exist and hold the workstream, if one is named."""
    if not domain_exists(conn, body.domain):
        raise ApiError(404, f"no domain named {body.domain!r}")
    if body.workstream_id is not None:
        ws = _require(conn, "workstreams", body.workstream_id, "workstream")
        if ws["domain"] != body.domain:
            raise ApiError(
                422,
                f"workstream {body.workstream_id!r} is in domain {ws['domain']!r},"
                f" not {body.domain!r}",
            )
    values = {
        "id": new_id(conn, "decisions"),
        "domain": body.domain,
        "workstream_id": body.workstream_id,
        "title": body.title,
        "context": body.context or "",
        "options": json.dumps(list(body.options or ()), ensure_ascii=False),
        "status": "open",
        "resolution": None,
        "created_at": now,
        "resolved_at": None,
    }
    return _created(conn, "decisions", values)


def resolve_decision(
    conn: sqlite3.Connection, now: str, body: DecisionResolution, decision_id: str
) -> Result:
    """POST /decisions/{id}/resolve."""
    decision = _require(conn, "decisions", decision_id, "decision")
    if decision["status"] == "resolved":
        raise ApiError(
            409, f"decision {decision_id!r} was already resolved at {decision['resolved_at']}"
        )
    conn.execute(
        "UPDATE decisions SET status = 'resolved', resolution = ?, resolved_at = ? WHERE id = ?",
        (body.resolution, now, decision_id),
    )
    return 200, _require(conn, "decisions", decision_id, "decision")
