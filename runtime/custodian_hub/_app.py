"""The hub as a plain function of a request: auth, routing, validation, idempotency, hooks.

Nothing here knows about sockets; `_server.py` turns HTTP into `HubRequest` and back.
"""

from __future__ import annotations

import hmac
import sqlite3
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ValidationError

import custodian_hub._idempotency as _idempotency
import custodian_hub._reads as _reads
import custodian_hub._writes as _writes
from custodian_hub._openapi import openapi_document
from custodian_hub._routes import Route, match, query_params
from custodian_hub._store import Store, bump_revision
from custodian_hub._wire import (
    ApiError,
    db_timestamp,
    etag_header,
    parse_if_match,
    parse_if_none_match,
    parse_json_body,
    to_utc,
    wire_timestamp,
)
from custodian_runtime import __version__
from custodian_runtime.core import contract
from custodian_runtime.core.digest import digest

Clock = Callable[[], datetime]
WriteHook = Callable[[str, str, str], None]
WriteFunction = Callable[..., _writes.Result]

WRITES: dict[str, tuple[type[BaseModel], WriteFunction]] = {
    "add_event": (contract.NewEvent, _writes.add_event),
    "update_task_status": (contract.TaskStatusUpdate, _writes.update_task_status),
    "add_flag": (contract.NewFlag, _writes.add_flag),
    "resolve_flag": (contract.FlagResolution, _writes.resolve_flag),
    "create_workstream": (contract.NewWorkstream, _writes.create_workstream),
    "create_task": (contract.NewTask, _writes.create_task),
    "create_decision": (contract.NewDecision, _writes.create_decision),
    "resolve_decision": (contract.DecisionResolution, _writes.resolve_decision),
}
MAX_VALIDATION_ERRORS = 10


class WriteAborted(Exception):
    """The on_write hook raised: the request ends without an answer, as if the hub had died."""


@dataclass(frozen=True)
class HubRequest:
    """One HTTP request: method, target (path and query), headers with lower-case names, body."""

    method: str
    target: str
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes = b""


@dataclass(frozen=True)
class HubResponse:
    """One answer: status, JSON body and extra headers."""

    status: int
    body: Any
    headers: Mapping[str, str] = field(default_factory=dict)


class HubApp:
    """Serves the contract over a `Store`."""

    def __init__(
        self,
        store: Store,
        *,
        token: str | None,
        clock: Clock,
        on_write: WriteHook | None = None,
    ) -> None:
        self.store = store
        self.token = token
        self.clock = clock
        self.on_write = on_write

    def handle(self, request: HubRequest) -> HubResponse:
        """Answer one request; API errors become error bodies, `WriteAborted` propagates."""
        try:
            return self._handle(request)
        except ApiError as err:
            return HubResponse(err.status, err.body(), err.headers)

    def _handle(self, request: HubRequest) -> HubResponse:
        split = urlsplit(request.target)
        path = split.path
        if not (request.method in ("GET", "HEAD") and path == "/health"):
            self._authorize(request)
        route, params = match(request.method, path)
        query = query_params(route, split.query)
        if route.is_write:
            return self._write(request, route, path, params)
        if route.name == "domain_summary":
            return self._domain_summary(request, params["domain"], query["events"])
        body = self._read(route, params, query)
        return HubResponse(200, body, _etag(route, body))

    def _authorize(self, request: HubRequest) -> None:
        if self.token is None:
            return
        sent = request.headers.get("authorization", "").encode("utf-8")
        expected = f"Bearer {self.token}".encode()
        if not hmac.compare_digest(sent, expected):
            raise ApiError(
                401,
                "missing or wrong token: send 'Authorization: Bearer <token>'",
                headers={"WWW-Authenticate": "Bearer"},
            )

    def _now(self) -> str:
        return db_timestamp(to_utc(self.clock()))

    def _read(self, route: Route, params: dict[str, str], query: dict[str, Any]) -> Any:
        if route.name == "health":
            return {"status": "ok", "version": __version__, "hub_id": self.store.hub_id}
        if route.name == "openapi":
            return openapi_document()
        generated_at = _wire(self._now())
        readers: dict[str, Callable[[sqlite3.Connection], Any]] = {
            "state_summary": lambda c: _reads.state_summary(c, generated_at),
            "get_task": lambda c: _reads.get_task(c, params["task_id"]),
            "list_events": lambda c: _reads.list_events(c, **query),
            "list_flags": lambda c: _reads.list_flags(c, query["domain"], query["status"]),
            "list_decisions": lambda c: _reads.list_decisions(c, query["domain"], query["status"]),
            "list_workstreams": lambda c: _reads.list_workstreams(c, query["domain"]),
        }
        with self.store.read() as conn:
            return readers[route.name](conn)

    def _domain_summary(self, request: HubRequest, domain: str, events: int) -> HubResponse:
        """GET /domains/{domain}/summary; 304 without a body while `If-None-Match` holds (v1.2)."""
        wanted = parse_if_none_match(request.headers.get("if-none-match"))
        generated_at = _wire(self._now())
        with self.store.read() as conn:
            current = _reads.domain_revision(conn, domain)
            tag = {"ETag": f'"{current}"'}
            if wanted is not None and (wanted == "*" or current in wanted):
                return HubResponse(304, None, tag)
            return HubResponse(200, _reads.domain_summary(conn, domain, events, generated_at), tag)

    def _write(
        self, request: HubRequest, route: Route, path: str, params: dict[str, str]
    ) -> HubResponse:
        key = _idempotency.check_key(request.headers.get("idempotency-key"))
        payload = parse_json_body(request.body)
        body_sha256 = digest(payload)
        model, function = WRITES[route.name]
        conditions = _conditions(route, request.headers)
        replay: _idempotency.Replay | None = None
        with self.store.write() as conn:
            now = to_utc(self.clock())
            if key is not None:
                replay = _idempotency.lookup(conn, key, route.method, path, body_sha256, now)
            if replay is None:
                body = _validate(model, payload)
                answer = function(conn, db_timestamp(now), body, **params, **conditions)
                # Only a write that changed something gets here: refusals raised, replays did not
                # run. Each one moves its domain's revision (v1.2).
                bump_revision(conn, _writes.domain_of(conn, answer[1]))
                if key is not None:
                    _idempotency.remember(conn, key, route.method, path, body_sha256, answer, now)
                self._hook("before_commit", route.method, path)
        if replay is not None:
            replayed = {"Idempotent-Replayed": "true", **_etag(route, replay.body)}
            return HubResponse(replay.status, replay.body, replayed)
        self._hook("after_commit", route.method, path)
        return HubResponse(*answer, _etag(route, answer[1]))

    def _hook(self, phase: str, method: str, path: str) -> None:
        if self.on_write is None:
            return
        try:
            self.on_write(phase, method, path)
        except Exception as exc:
            raise WriteAborted(f"on_write hook raised in {phase}") from exc


# The operations that answer a Task, and so send its version as `ETag` (v1.1).
_TASK_ANSWERS = frozenset({"get_task", "update_task_status", "create_task"})


def _etag(route: Route, body: Any) -> dict[str, str]:
    if route.name not in _TASK_ANSWERS or not isinstance(body, dict) or "version" not in body:
        return {}
    return etag_header(body)


def _conditions(route: Route, headers: Mapping[str, str]) -> dict[str, Any]:
    # If-Match is honoured on PATCH /tasks/{id}, the one write of a versioned resource.
    if route.name != "update_task_status":
        return {}
    return {"if_match": parse_if_match(headers.get("if-match"))}


def _wire(stored: str) -> str:
    return wire_timestamp(stored) or stored


def _validate(model: type[BaseModel], payload: Any) -> BaseModel:
    try:
        return model.model_validate(payload)
    except ValidationError as exc:
        raise ApiError(422, validation_detail(exc)) from exc


def validation_detail(exc: ValidationError) -> str:
    """A pydantic error as one readable line: `field: problem; field: problem`."""
    parts = []
    for error in exc.errors(include_url=False)[:MAX_VALIDATION_ERRORS]:
        location = ".".join(str(part) for part in error["loc"]) or "body"
        parts.append(f"{location}: {error['msg']}")
    return "the request body is invalid: " + "; ".join(parts)
