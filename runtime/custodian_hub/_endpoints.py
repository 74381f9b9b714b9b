"""The one table of the hub's endpoints: the hub routes, answers and documents (OpenAPI) from it.

Each endpoint is named once, here, with everything about it: method and path, its query
parameters, the read or write that answers it, its body and answer models, and the headers it
honours. `register_endpoint()` adds one for as long as its context lasts, which is how a test
proves that a new endpoint needs nothing else.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import custodian_hub._reads as _reads
import custodian_hub._writes as _writes
from custodian_hub._openapi import openapi_document
from custodian_hub._routes import (
    MAX_EVENT_LIMIT,
    MAX_SUMMARY_EVENTS,
    Endpoint,
    QueryParsers,
    bounded_int,
    domain_value,
    id_value,
    status_value,
)
from custodian_runtime import __version__
from custodian_runtime.core import contract

_FILTERS: QueryParsers = {"domain": domain_value, "status": status_value}
_EVENTS: QueryParsers = {
    "domain": domain_value,
    "workstream_id": id_value,
    "task_id": id_value,
    "limit": bounded_int(MAX_EVENT_LIMIT),
}


def _health(hub_id: str) -> dict[str, Any]:
    return {"status": "ok", "version": __version__, "hub_id": hub_id}


_READS: tuple[Endpoint, ...] = (
    Endpoint(
        "health",
        "GET",
        "/health",
        "Liveness and hub version (no token needed)",
        contract.Health,
        about=_health,
        public=True,
    ),
    Endpoint(
        "openapi",
        "GET",
        "/openapi.json",
        "This document",
        None,
        about=lambda hub_id: openapi_document(all_endpoints()),
    ),
    Endpoint(
        "state_summary",
        "GET",
        "/state/summary",
        "Counts per domain",
        contract.StateSummary,
        read=lambda a: _reads.state_summary(a.conn, a.generated_at),
    ),
    Endpoint(
        "domain_summary",
        "GET",
        "/domains/{domain}/summary",
        "One domain: workstreams, tasks, open items",
        contract.DomainSummary,
        read=lambda a: _reads.domain_summary(
            a.conn, a.params["domain"], a.query["events"], a.generated_at
        ),
        query={"events": bounded_int(MAX_SUMMARY_EVENTS)},
        defaults={"events": 50},
        revisioned=True,
    ),
    Endpoint(
        "get_task",
        "GET",
        "/tasks/{task_id}",
        "One task",
        contract.Task,
        read=lambda a: _reads.get_task(a.conn, a.params["task_id"]),
        versioned=True,
    ),
    Endpoint(
        "list_events",
        "GET",
        "/events",
        "Progress events, newest first",
        contract.EventList,
        read=lambda a: _reads.list_events(a.conn, **a.query),
        query=_EVENTS,
        defaults={"domain": None, "workstream_id": None, "task_id": None, "limit": 100},
    ),
    Endpoint(
        "list_flags",
        "GET",
        "/flags",
        "Flags",
        contract.FlagList,
        read=lambda a: _reads.list_flags(a.conn, a.query["domain"], a.query["status"]),
        query=_FILTERS,
        defaults={"domain": None, "status": None},
    ),
    Endpoint(
        "list_decisions",
        "GET",
        "/decisions",
        "Decisions",
        contract.DecisionList,
        read=lambda a: _reads.list_decisions(a.conn, a.query["domain"], a.query["status"]),
        query=_FILTERS,
        defaults={"domain": None, "status": None},
    ),
    Endpoint(
        "list_workstreams",
        "GET",
        "/workstreams",
        "Workstreams",
        contract.WorkstreamList,
        read=lambda a: _reads.list_workstreams(a.conn, a.query["domain"]),
        query={"domain": domain_value},
        defaults={"domain": None},
    ),
)

_WRITES: tuple[Endpoint, ...] = (
    Endpoint(
        "add_event",
        "POST",
        "/events",
        "Add a progress event",
        contract.ProgressEvent,
        status=201,
        request=contract.NewEvent,
        write=_writes.add_event,
    ),
    Endpoint(
        "update_task_status",
        "PATCH",
        "/tasks/{task_id}",
        "Set a task's status",
        contract.Task,
        status=200,
        request=contract.TaskStatusUpdate,
        write=_writes.update_task_status,
        versioned=True,
        if_match=True,
    ),
    Endpoint(
        "add_flag",
        "POST",
        "/flags",
        "Flag a task or workstream for a human",
        contract.Flag,
        status=201,
        request=contract.NewFlag,
        write=_writes.add_flag,
    ),
    Endpoint(
        "resolve_flag",
        "PATCH",
        "/flags/{flag_id}",
        "Resolve a flag",
        contract.Flag,
        status=200,
        request=contract.FlagResolution,
        write=_writes.resolve_flag,
    ),
    Endpoint(
        "create_workstream",
        "POST",
        "/workstreams",
        "Create a workstream",
        contract.Workstream,
        status=201,
        request=contract.NewWorkstream,
        write=_writes.create_workstream,
    ),
    Endpoint(
        "create_task",
        "POST",
        "/tasks",
        "Create a task",
        contract.Task,
        status=201,
        request=contract.NewTask,
        write=_writes.create_task,
        versioned=True,
    ),
    Endpoint(
        "create_decision",
        "POST",
        "/decisions",
        "Record a decision to be made",
        contract.Decision,
        status=201,
        request=contract.NewDecision,
        write=_writes.create_decision,
    ),
    Endpoint(
        "resolve_decision",
        "POST",
        "/decisions/{decision_id}/resolve",
        "Resolve a decision",
        contract.Decision,
        status=200,
        request=contract.DecisionResolution,
        write=_writes.resolve_decision,
    ),
)

_table: list[Endpoint] = [*_READS, *_WRITES]


def all_endpoints() -> tuple[Endpoint, ...]:
    """Every endpoint the hub serves, in the order it matches them and documents them."""
    return tuple(_table)


@contextmanager
def register_endpoint(extra: Endpoint) -> Iterator[Endpoint]:
    """Serve `extra` while the context lasts (for tests); its name and route must be new."""
    for known in _table:
        if known.name == extra.name or (known.method, known.path) == (extra.method, extra.path):
            raise ValueError(f"{known.method} {known.path} ({known.name}) is already an endpoint")
    _table.append(extra)
    try:
        yield extra
    finally:
        _table.remove(extra)
