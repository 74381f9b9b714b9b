"""The hub's read queries: each takes a connection in a read transaction, returns contract JSON."""

from __future__ import annotations

import sqlite3
from typing import Any

from custodian_hub._store import hub_id, record, revision
from custodian_hub._wire import ApiError, wire_timestamp
from custodian_runtime.core.contract import TASK_STATUSES, WORKSTREAM_STATUSES

_EVENTS_BY_DOMAIN = (
    "SELECT e.* FROM events e JOIN workstreams w ON e.workstream_id = w.id WHERE w.domain = ?"
)


def domain_exists(conn: sqlite3.Connection, domain: str) -> bool:
    """A domain exists once it has a workstream."""
    row = conn.execute("SELECT 1 FROM workstreams WHERE domain = ? LIMIT 1", (domain,)).fetchone()
    return row is not None


def get_by_id(conn: sqlite3.Connection, table: str, item_id: str) -> dict[str, Any] | None:
    """One resource by id, or None."""
    row = conn.execute(f"SELECT * FROM {table} WHERE id = ?", (item_id,)).fetchone()
    return None if row is None else record(row)


def get_task(conn: sqlite3.Connection, task_id: str) -> dict[str, Any]:
    """GET /tasks/{id}."""
    task = get_by_id(conn, "tasks", task_id)
    if task is None:
        raise ApiError(404, f"no task with id {task_id!r}")
    return task


def list_workstreams(conn: sqlite3.Connection, domain: str | None) -> dict[str, Any]:
    """GET /workstreams."""
    sql = "SELECT * FROM workstreams"
    args: list[str] = []
    if domain is not None:
        sql, args = sql + " WHERE domain = ?", [domain]
    rows = conn.execute(sql + " ORDER BY seq", args).fetchall()
    return {"workstreams": [record(row) for row in rows]}


def list_flags(conn: sqlite3.Connection, domain: str | None, status: str | None) -> dict[str, Any]:
    """GET /flags, oldest first."""
    sql = "SELECT f.* FROM flags f JOIN workstreams w ON f.workstream_id = w.id WHERE 1 = 1"
    args: list[str] = []
    if domain is not None:
        sql, args = sql + " AND w.domain = ?", [*args, domain]
    if status is not None:
        sql, args = sql + " AND f.status = ?", [*args, status]
    rows = conn.execute(sql + " ORDER BY f.created_at, f.seq", args).fetchall()
    return {"flags": [record(row) for row in rows]}


def list_decisions(
    conn: sqlite3.Connection, domain: str | None, status: str | None
) -> dict[str, Any]:
    """GET /decisions, oldest first."""
    sql = "SELECT * FROM decisions WHERE 1 = 1"
    args: list[str] = []
    if domain is not None:
        sql, args = sql + " AND domain = ?", [*args, domain]
    if status is not None:
        sql, args = sql + " AND status = ?", [*args, status]
    rows = conn.execute(sql + " ORDER BY created_at, seq", args).fetchall()
    return {"decisions": [record(row) for row in rows]}


def list_events(
    conn: sqlite3.Connection,
    *,
    domain: str | None,
    workstream_id: str | None,
    task_id: str | None,
    limit: int,
) -> dict[str, Any]:
    """GET /events, newest first."""
    sql = "SELECT e.* FROM events e JOIN workstreams w ON e.workstream_id = w.id WHERE 1 = 1"
    args: list[Any] = []
    for column, value in (("w.domain", domain), ("e.workstream_id", workstream_id)):
        if value is not None:
            sql, args = f"{sql} AND {column} = ?", [*args, value]
    if task_id is not None:
        sql, args = sql + " AND e.task_id = ?", [*args, task_id]
    sql += " ORDER BY e.created_at DESC, e.seq DESC LIMIT ?"
    rows = conn.execute(sql, [*args, limit]).fetchall()
    return {"events": [record(row) for row in rows]}


def domain_revision(conn: sqlite3.Connection, domain: str) -> int:
    """The revision of a domain that exists (v1.2); 404 for an unknown domain."""
    if not domain_exists(conn, domain):
        raise ApiError(
            404, f"no domain named {domain!r} (a domain exists once it has a workstream)"
        )
    return revision(conn, domain)


def domain_summary(
    conn: sqlite3.Connection, domain: str, events: int, generated_at: str
) -> dict[str, Any]:
    """GET /domains/{domain}/summary."""
    current = domain_revision(conn, domain)
    workstreams = list_workstreams(conn, domain)["workstreams"]
    tasks_sql = (
        "SELECT t.* FROM tasks t JOIN workstreams w ON t.workstream_id = w.id"
        " WHERE w.domain = ? ORDER BY t.seq"
    )
    by_workstream: dict[str, list[dict[str, Any]]] = {ws["id"]: [] for ws in workstreams}
    for row in conn.execute(tasks_sql, (domain,)):
        by_workstream[row["workstream_id"]].append(record(row))
    recent = conn.execute(
        _EVENTS_BY_DOMAIN + " ORDER BY e.created_at DESC, e.seq DESC LIMIT ?", (domain, events)
    ).fetchall()
    return {
        "domain": domain,
        "revision": current,
        "generated_at": generated_at,
        "workstreams": [{**ws, "tasks": by_workstream[ws["id"]]} for ws in workstreams],
        "open_decisions": list_decisions(conn, domain, "open")["decisions"],
        "open_flags": list_flags(conn, domain, "open")["flags"],
        "recent_events": [record(row) for row in recent],
    }


def state_summary(conn: sqlite3.Connection, generated_at: str) -> dict[str, Any]:
    """GET /state/summary: counts per domain, domains sorted by name."""
    domains: dict[str, dict[str, Any]] = {}
    ws_counts = "SELECT domain, status, COUNT(*) AS n FROM workstreams GROUP BY domain, status"
    for row in conn.execute(ws_counts):
        entry = domains.setdefault(row["domain"], _empty_overview(row["domain"]))
        entry["workstreams"][row["status"]] = row["n"]
    task_counts = (
        "SELECT w.domain, t.status, COUNT(*) AS n FROM tasks t"
        " JOIN workstreams w ON t.workstream_id = w.id GROUP BY w.domain, t.status"
    )
    for row in conn.execute(task_counts):
        domains[row["domain"]]["tasks"][row["status"]] = row["n"]
    flag_counts = (
        "SELECT w.domain, COUNT(*) AS n FROM flags f JOIN workstreams w"
        " ON f.workstream_id = w.id WHERE f.status = 'open' GROUP BY w.domain"
    )
    for row in conn.execute(flag_counts):
        domains[row["domain"]]["open_flags"] = row["n"]
    decision_counts = (
        "SELECT domain, COUNT(*) AS n FROM decisions WHERE status = 'open' GROUP BY domain"
    )
    for row in conn.execute(decision_counts):
        if row["domain"] in domains:
            domains[row["domain"]]["open_decisions"] = row["n"]
    last_events = (
        "SELECT w.domain, MAX(e.created_at) AS last FROM events e"
        " JOIN workstreams w ON e.workstream_id = w.id GROUP BY w.domain"
    )
    for row in conn.execute(last_events):
        domains[row["domain"]]["last_event_at"] = wire_timestamp(row["last"])
    for name, entry in domains.items():
        entry["revision"] = revision(conn, name)
    listed = [domains[name] for name in sorted(domains)]
    return {"generated_at": generated_at, "hub_id": hub_id(conn), "domains": listed}


def _empty_overview(domain: str) -> dict[str, Any]:
    return {
        "domain": domain,
        "revision": 0,
        "workstreams": dict.fromkeys(WORKSTREAM_STATUSES, 0),
        "tasks": dict.fromkeys(TASK_STATUSES, 0),
        "open_flags": 0,
        "open_decisions": 0,
        "last_event_at": None,
    }
