"""StateHubClient: the only code in the runtime that talks to the state-hub (contract v1.2).

One method per read and per write of the contract, and no other write. Reads parse into the
models of `custodian_runtime.core.contract`; every write takes its request model and a
caller-chosen idempotency key, serializes the body once, and sends the same bytes and key on every
retry.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Generic, TypeVar, overload

import httpx

from custodian_runtime.core.authority.origin import HubOrigin, hub_identity_of
from custodian_runtime.core.contract import (
    Decision,
    DecisionList,
    DecisionResolution,
    DomainSummary,
    EventList,
    Flag,
    FlagList,
    FlagResolution,
    Health,
    NewDecision,
    NewEvent,
    NewFlag,
    NewTask,
    NewWorkstream,
    ProgressEvent,
    Request,
    Response,
    StateSummary,
    Task,
    TaskStatusUpdate,
    Workstream,
    WorkstreamList,
)
from custodian_runtime.core.digest import canonical_json, sha256_hex
from custodian_runtime.errors import ConfigError
from custodian_runtime.net.bounded_http import Stoppable
from custodian_runtime.net.retry import MonotonicClock, RetryPolicy, Sleep
from custodian_runtime.process.stopping import OnRetry
from custodian_runtime.statehub._checks import (
    check_limits,
    checked_domain,
    checked_id,
    checked_key,
    checked_version,
)
from custodian_runtime.statehub._conditional import (
    NOT_MODIFIED,
    NotModified,
    if_none_match_header,
    summary_or_not_modified,
)
from custodian_runtime.statehub._failures import parse_body
from custodian_runtime.statehub._http import http_client
from custodian_runtime.statehub._sender import QueryParams, Sender
from custodian_runtime.statehub.lazy_summary import LazySummary

T = TypeVar("T", bound=Response)

DEFAULT_MAX_BYTES = 32 << 20  # a hub answer larger than this stops the call
JITTER_BASE_S = 0.5  # the first jitter window is [0, 0.5 s]; each retry doubles it


@dataclass(frozen=True)
class HubWrite(Generic[T]):
    """What a write returned: the parsed resource and how it came back."""

    resource: T
    status_code: int
    replayed: bool  # the hub answered from its idempotency store: nothing changed this time
    response_sha256: str  # of the raw response body, for the journal
    attempts: int


class StateHubClient:
    """A synchronous client of the state-hub contract v1, with bounded retries."""

    def __init__(
        self,
        base_url: str,
        *,
        token: str | None = None,
        timeout_s: float = 10.0,
        max_attempts: int = 5,
        max_total_s: float = 60.0,
        max_retry_wait_s: float = 30.0,
        transport: httpx.BaseTransport | None = None,
        sleep: Sleep = time.sleep,
        clock: MonotonicClock = time.monotonic,
        max_response_bytes: int = DEFAULT_MAX_BYTES,
        stop: Stoppable | None = None,
        on_retry: OnRetry | None = None,
        proxy: str | None = None,
    ) -> None:
        if timeout_s <= 0:
            raise ConfigError(f"the state-hub timeout must be positive, not {timeout_s}")
        if max_response_bytes < 1:
            raise ConfigError(f"the state-hub size cap must be positive, not {max_response_bytes}")
        self.base_url, self._http = http_client(base_url, token, timeout_s, transport, proxy)
        check_limits(max_attempts, max_total_s, max_retry_wait_s)
        policy = RetryPolicy(
            max_attempts=max_attempts,
            max_total_s=max_total_s,
            max_wait_s=max_retry_wait_s,
            backoff_base_s=JITTER_BASE_S,
            backoff_cap_s=max_retry_wait_s,
            sleep=sleep,
            clock=clock,
            stop=stop,  # a signal cuts the retrying of reads and writes alike before a wait
            on_retry=on_retry,
        )
        # A signal abandons a read in flight; a write in flight is finished.
        self._sender = Sender(self._http, self.base_url, policy, max_response_bytes, stop)
        self._health: Health | None = None  # read once, for hub_origin()

    def __enter__(self) -> StateHubClient:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()

    # --- reads -----------------------------------------------------------------------------

    def health(self) -> Health:
        """GET /health."""
        return self._read("/health", Health)

    def state_summary(self) -> StateSummary:
        """GET /state/summary: counts per domain."""
        return self._read("/state/summary", StateSummary)

    def state_summary_lazy(self) -> LazySummary:
        """GET /state/summary with its names and revisions parsed; the counts when first asked."""
        response, attempts = self._sender.send("GET", "/state/summary")
        return LazySummary(response, attempts)

    def hub_origin(self, location: str | None = None) -> HubOrigin:
        """Who the hub is: its hub_id from GET /health (v1.2; read once per client), and where
        it is reached: `location`, else this client's URL. From a v1.1 hub the hub_id is None
        and items fall back to the URL (`HubOrigin.notice()` says so)."""
        if self._health is None:
            self._health = self.health()
        return HubOrigin(self._health.hub_id, location or hub_identity_of(self.base_url))

    @overload
    def domain_summary(
        self, domain: str, events: int = 50, *, if_none_match: None = None
    ) -> DomainSummary: ...

    @overload
    def domain_summary(
        self, domain: str, events: int = 50, *, if_none_match: int
    ) -> DomainSummary | NotModified: ...

    def domain_summary(
        self, domain: str, events: int = 50, *, if_none_match: int | None = None
    ) -> DomainSummary | NotModified:
        """GET /domains/{domain}/summary: workstreams with tasks, open items, recent events.

        With `if_none_match` (a revision seen before, v1.2), a hub whose domain is still at
        that revision answers 304 and this returns `NotModified`; a v1.1 hub sends the summary.
        """
        if not 0 <= events <= 500:
            raise ValueError(f"events must be between 0 and 500 (the hub's maximum), not {events}")
        path = f"/domains/{checked_domain(domain)}/summary"
        headers = if_none_match_header(if_none_match)
        ok = frozenset({NOT_MODIFIED}) if headers else frozenset()
        response, attempts = self._sender.send(
            "GET", path, params={"events": events}, headers=headers, also_ok=ok
        )
        return summary_or_not_modified(response, attempts, domain, if_none_match)

    def get_task(self, task_id: str) -> Task:
        """GET /tasks/{id}."""
        return self._read(f"/tasks/{checked_id(task_id, 'task_id')}", Task)

    def list_events(
        self,
        domain: str | None = None,
        workstream_id: str | None = None,
        task_id: str | None = None,
        limit: int | None = None,
    ) -> tuple[ProgressEvent, ...]:
        """GET /events, newest first."""
        params = {"domain": domain, "workstream_id": workstream_id, "task_id": task_id}
        return self._read("/events", EventList, {**params, "limit": limit}).events

    def list_flags(self, domain: str | None = None, status: str | None = None) -> tuple[Flag, ...]:
        """GET /flags."""
        return self._read("/flags", FlagList, {"domain": domain, "status": status}).flags

    def list_decisions(
        self, domain: str | None = None, status: str | None = None
    ) -> tuple[Decision, ...]:
        """GET /decisions."""
        params = {"domain": domain, "status": status}
        return self._read("/decisions", DecisionList, params).decisions

    def list_workstreams(self, domain: str | None = None) -> tuple[Workstream, ...]:
        """GET /workstreams."""
        return self._read("/workstreams", WorkstreamList, {"domain": domain}).workstreams

    # --- writes ----------------------------------------------------------------------------

    def add_event(self, event: NewEvent, *, idempotency_key: str) -> HubWrite[ProgressEvent]:
        """POST /events."""
        return self._write("POST", "/events", event, ProgressEvent, idempotency_key)

    def update_task_status(
        self,
        task_id: str,
        update: TaskStatusUpdate,
        *,
        idempotency_key: str,
        if_match: int | None = None,
    ) -> HubWrite[Task]:
        """PATCH /tasks/{id}; with `if_match`, only at that version (else HubPreconditionFailed)."""
        path = f"/tasks/{checked_id(task_id, 'task_id')}"
        headers = {} if if_match is None else {"If-Match": f'"{checked_version(if_match)}"'}
        return self._write("PATCH", path, update, Task, idempotency_key, headers)

    def add_flag(self, flag: NewFlag, *, idempotency_key: str) -> HubWrite[Flag]:
        """POST /flags."""
        return self._write("POST", "/flags", flag, Flag, idempotency_key)

    def resolve_flag(self, flag_id: str, *, idempotency_key: str) -> HubWrite[Flag]:
        """PATCH /flags/{id} to resolved."""
        path = f"/flags/{checked_id(flag_id, 'flag_id')}"
        return self._write("PATCH", path, FlagResolution(status="resolved"), Flag, idempotency_key)

    def create_workstream(
        self, workstream: NewWorkstream, *, idempotency_key: str
    ) -> HubWrite[Workstream]:
        """POST /workstreams."""
        return self._write("POST", "/workstreams", workstream, Workstream, idempotency_key)

    def create_task(self, task: NewTask, *, idempotency_key: str) -> HubWrite[Task]:
        """POST /tasks."""
        return self._write("POST", "/tasks", task, Task, idempotency_key)

    def create_decision(self, decision: NewDecision, *, idempotency_key: str) -> HubWrite[Decision]:
        """POST /decisions."""
        return self._write("POST", "/decisions", decision, Decision, idempotency_key)

    def resolve_decision(
        self, decision_id: str, resolution: DecisionResolution, *, idempotency_key: str
    ) -> HubWrite[Decision]:
        """POST /decisions/{id}/resolve."""
        path = f"/decisions/{checked_id(decision_id, 'decision_id')}/resolve"
        return self._write("POST", path, resolution, Decision, idempotency_key)

    # --- plumbing --------------------------------------------------------------------------

    def _read(self, path: str, model: type[T], params: QueryParams | None = None) -> T:
        response, attempts = self._sender.send("GET", path, params=params)
        return parse_body(model, response, attempts)

    def _write(
        self,
        method: str,
        path: str,
        body: Request,
        model: type[T],
        idempotency_key: str,
        conditions: Mapping[str, str] | None = None,
    ) -> HubWrite[T]:
        key = checked_key(idempotency_key)
        # Serialized once: every retry sends these exact bytes with this exact key.
        content = canonical_json(body.model_dump(mode="json", exclude_none=True)).encode("utf-8")
        headers = {"Content-Type": "application/json", "Idempotency-Key": key, **(conditions or {})}
        response, attempts = self._sender.send(method, path, content=content, headers=headers)
        return HubWrite(
            resource=parse_body(model, response, attempts),
            status_code=response.status_code,
            replayed=response.headers.get("Idempotent-Replayed", "").strip().lower() == "true",
            response_sha256=sha256_hex(response.content),
            attempts=attempts,
        )
