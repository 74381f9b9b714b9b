"""The hub as a plain function of a request: auth, routing, validation, idempotency, hooks.

Nothing here knows about sockets; `_server.py` turns HTTP into `HubRequest` and back.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ValidationError

import custodian_hub._idempotency as _idempotency
import custodian_hub._reads as _reads
import custodian_hub._writes as _writes
from custodian_hub._endpoints import all_endpoints
from custodian_hub._routes import Endpoint, Reading, match, query_params
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
from custodian_runtime.core.digest import digest

Clock = Callable[[], datetime]
WriteHook = Callable[[str, str, str], None]
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
        endpoints = all_endpoints()
        if not (request.method in ("GET", "HEAD") and _public(endpoints, path)):
            self._authorize(request)
        endpoint, params = match(request.method, path, endpoints)
        query = query_params(endpoint, split.query)
        if endpoint.is_write:
            return self._write(request, endpoint, path, params)
        if endpoint.about is not None:
            return HubResponse(endpoint.status, endpoint.about(self.store.hub_id))
        if endpoint.revisioned:
            return self._revisioned(request, endpoint, params, query)
        generated_at = _wire(self._now())
        with self.store.read() as conn:
            body = self._read(endpoint, Reading(conn, params, query, generated_at))
        return HubResponse(endpoint.status, body, _etag(endpoint, body))

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

    def _read(self, endpoint: Endpoint, reading: Reading) -> Any:
        assert endpoint.read is not None  # a read endpoint answers by `read` or `about`
        return endpoint.read(reading)

    def _revisioned(
        self, request: HubRequest, endpoint: Endpoint, params: dict[str, str], query: dict[str, Any]
    ) -> HubResponse:
        """One domain's read; 304 without a body while `If-None-Match` holds (v1.2)."""
        wanted = parse_if_none_match(request.headers.get("if-none-match"))
        generated_at = _wire(self._now())
        with self.store.read() as conn:
            current = _reads.domain_revision(conn, params["domain"])
            tag = {"ETag": f'"{current}"'}
            if wanted is not None and (wanted == "*" or current in wanted):
                return HubResponse(304, None, tag)
            body = self._read(endpoint, Reading(conn, params, query, generated_at))
            return HubResponse(endpoint.status, body, tag)

    def _write(
        self, request: HubRequest, route: Endpoint, path: str, params: dict[str, str]
    ) -> HubResponse:
        key = _idempotency.check_key(request.headers.get("idempotency-key"))
        payload = parse_json_body(request.body)
        body_sha256 = digest(payload)
        model, function = route.request, route.write
        assert model is not None and function is not None  # a write endpoint has both
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


def _public(endpoints: tuple[Endpoint, ...], path: str) -> bool:
    """Whether `path` is an endpoint answered without the token (health)."""
    return any(e.public and e.pattern.match(path) for e in endpoints)


def _etag(endpoint: Endpoint, body: Any) -> dict[str, str]:
    # A task's answer sends its version as `ETag` (v1.1).
    if not endpoint.versioned or not isinstance(body, dict) or "version" not in body:
        return {}
    return etag_header(body)


def _conditions(endpoint: Endpoint, headers: Mapping[str, str]) -> dict[str, Any]:
    # If-Match is honoured where the endpoint says so (PATCH /tasks/{id}, a versioned write).
    if not endpoint.if_match:
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
