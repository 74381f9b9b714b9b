"""StateHubClient against a mocked transport: the exact requests it sends and how it retries."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
import respx
from hypothesis import given
from hypothesis import strategies as st

from custodian_runtime import __version__
from custodian_runtime.core.contract import (
    DecisionResolution,
    NewDecision,
    NewEvent,
    NewFlag,
    NewTask,
    NewWorkstream,
    TaskStatusUpdate,
)
from custodian_runtime.errors import ConfigError, HubError, HubRequestError, HubUnavailable
from custodian_runtime.net.retry import parse_retry_after
from custodian_runtime.statehub.client import HubWrite, StateHubClient

BASE = "http://hub.test"
TOKEN = "s3cret-token"
TS = "2026-11-29T08:00:00Z"

WORKSTREAM = {"id": "ws-1", "domain": "website", "title": "Launch", "status": "active",
              "owner": None, "created_at": TS, "updated_at": TS}  # fmt: skip
TASK = {"id": "t-1", "workstream_id": "ws-1", "title": "Write copy", "description": "",
        "status": "todo", "assignee": None, "due": "2026-12-01", "created_at": TS,
        "updated_at": TS}  # fmt: skip
EVENT = {"id": "e-1", "workstream_id": "ws-1", "task_id": "t-1", "event_type": "note",
         "summary": "copy drafted", "source": "custodian", "created_at": TS}  # fmt: skip
FLAG = {"id": "f-1", "workstream_id": "ws-1", "task_id": None, "note": "stuck", "status": "open",
        "raised_by": "custodian", "created_at": TS, "resolved_at": None}  # fmt: skip
DECISION = {"id": "d-1", "domain": "website", "workstream_id": None, "title": "Pick a CMS",
            "context": "", "options": ["a", "b"], "status": "open", "resolution": None,
            "created_at": TS, "resolved_at": None}  # fmt: skip
OVERVIEW = {"domain": "website", "workstreams": {"active": 1}, "tasks": {"todo": 1},
            "open_flags": 1, "open_decisions": 1, "last_event_at": TS}  # fmt: skip
UNAVAILABLE = {"detail": "hub is restarting", "code": "unavailable"}


class FakeTime:
    """A clock that only moves when the client sleeps (or a test says so)."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds

    def clock(self) -> float:
        return self.now


@pytest.fixture
def router() -> respx.Router:
    return respx.Router(base_url=BASE, assert_all_called=False)


@pytest.fixture
def fake_time() -> FakeTime:
    return FakeTime()


@pytest.fixture
def make_client(
    router: respx.Router, fake_time: FakeTime
) -> Iterator[Callable[..., StateHubClient]]:
    made: list[StateHubClient] = []

    def make(base_url: str = BASE, **options: Any) -> StateHubClient:
        settings: dict[str, Any] = {"token": TOKEN, "sleep": fake_time.sleep,
                                    "clock": fake_time.clock, **options}  # fmt: skip
        client = StateHubClient(base_url, transport=httpx.MockTransport(router.handler), **settings)
        made.append(client)
        return client

    yield make
    for client in made:
        client.close()


@pytest.fixture
def client(make_client: Callable[..., StateHubClient]) -> StateHubClient:
    return make_client()


def _last(router: respx.Router) -> httpx.Request:
    request: httpx.Request = router.calls.last.request
    return request


# --- the exact requests ----------------------------------------------------------------------

READS: list[tuple[str, Callable[[StateHubClient], Any], str, dict[str, str], Any]] = [
    ("health", lambda c: c.health(), "/health", {}, {"status": "ok", "version": "1.2"}),
    ("state", lambda c: c.state_summary(), "/state/summary", {},
     {"generated_at": TS, "domains": [OVERVIEW]}),
    ("domain", lambda c: c.domain_summary("website"), "/domains/website/summary",
     {"events": "50"}, {"domain": "website", "generated_at": TS,
                        "workstreams": [{**WORKSTREAM, "tasks": [TASK]}],
                        "open_decisions": [DECISION], "open_flags": [FLAG],
                        "recent_events": [EVENT]}),
    ("domain-events", lambda c: c.domain_summary("website", events=7),
     "/domains/website/summary", {"events": "7"},
     {"domain": "website", "generated_at": TS, "workstreams": []}),
    ("task", lambda c: c.get_task("t-1"), "/tasks/t-1", {}, TASK),
    ("events", lambda c: c.list_events(), "/events", {}, {"events": [EVENT]}),
    ("events-filtered", lambda c: c.list_events("website", "ws-1", "t-1", 10), "/events",
     {"domain": "website", "workstream_id": "ws-1", "task_id": "t-1", "limit": "10"},
     {"events": [EVENT]}),
    ("flags", lambda c: c.list_flags("website", "open"), "/flags",
     {"domain": "website", "status": "open"}, {"flags": [FLAG]}),
    ("decisions", lambda c: c.list_decisions(status="open"), "/decisions", {"status": "open"},
     {"decisions": [DECISION]}),
    ("workstreams", lambda c: c.list_workstreams("website"), "/workstreams",
     {"domain": "website"}, {"workstreams": [WORKSTREAM]}),
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "call", "path", "query", "answer"), READS, ids=[r[0] for r in READS]
)
def test_each_read_sends_exactly_one_get(
    router: respx.Router,
    client: StateHubClient,
    name: str,
    call: Callable[[StateHubClient], Any],
    path: str,
    query: dict[str, str],
    answer: Any,
) -> None:
    router.get(path).respond(200, json=answer)
    result = call(client)
    request = _last(router)
    assert (request.method, request.url.path, dict(request.url.params)) == ("GET", path, query)
    assert request.headers["Authorization"] == f"Bearer {TOKEN}"
    assert request.headers["User-Agent"] == f"custodian/{__version__}"
    assert "Idempotency-Key" not in request.headers
    assert request.content == b""
    assert router.calls.call_count == 1
    assert result is not None


def test_reads_parse_into_contract_models_and_ignore_unknown_fields(
    router: respx.Router, client: StateHubClient
) -> None:
    router.get("/events").respond(200, json={"events": [{**EVENT, "new": 1}], "cursor": "x"})
    router.get("/tasks/t-1").respond(200, json={**TASK, "priority": "high"})
    (event,) = client.list_events()
    assert (event.id, event.task_id, event.created_at) == (
        "e-1",
        "t-1",
        datetime(2026, 11, 29, 8, tzinfo=UTC),
    )
    assert client.get_task("t-1").due is not None


Write = Callable[[StateHubClient, str], HubWrite[Any]]
WRITES: list[tuple[str, Write, str, str, dict[str, Any], int, Any]] = [
    ("add_event", lambda c, k: c.add_event(NewEvent(workstream_id="ws-1", event_type="note",
     summary="copy drafted", source="custodian"), idempotency_key=k), "POST", "/events",
     {"event_type": "note", "source": "custodian", "summary": "copy drafted",
      "workstream_id": "ws-1"}, 201, EVENT),
    ("update_task_status", lambda c, k: c.update_task_status("t-1",
     TaskStatusUpdate(status="done"), idempotency_key=k), "PATCH", "/tasks/t-1",
     {"status": "done"}, 200, {**TASK, "status": "done"}),
    ("add_flag", lambda c, k: c.add_flag(NewFlag(task_id="t-1", note="stuck",
     raised_by="custodian"), idempotency_key=k), "POST", "/flags",
     {"note": "stuck", "raised_by": "custodian", "task_id": "t-1"}, 201, FLAG),
    ("resolve_flag", lambda c, k: c.resolve_flag("f-1", idempotency_key=k), "PATCH",
     "/flags/f-1", {"status": "resolved"}, 200, {**FLAG, "status": "resolved"}),
    ("create_workstream", lambda c, k: c.create_workstream(NewWorkstream(domain="website",
     title="Launch"), idempotency_key=k), "POST", "/workstreams",
     {"domain": "website", "title": "Launch"}, 201, WORKSTREAM),
    ("create_task", lambda c, k: c.create_task(NewTask(workstream_id="ws-1", title="Write copy",
     due=datetime(2026, 12, 1).date()), idempotency_key=k), "POST", "/tasks",
     {"due": "2026-12-01", "title": "Write copy", "workstream_id": "ws-1"}, 201, TASK),
    ("create_decision", lambda c, k: c.create_decision(NewDecision(domain="website",
     title="Pick a CMS", options=("a", "b")), idempotency_key=k), "POST", "/decisions",
     {"domain": "website", "options": ["a", "b"], "title": "Pick a CMS"}, 201, DECISION),
    ("resolve_decision", lambda c, k: c.resolve_decision("d-1",
     DecisionResolution(resolution="a"), idempotency_key=k), "POST", "/decisions/d-1/resolve",
     {"resolution": "a"}, 200, {**DECISION, "status": "resolved", "resolution": "a"}),
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "call", "method", "path", "body", "status", "answer"),
    WRITES,
    ids=[w[0] for w in WRITES],
)
def test_each_write_sends_the_canonical_body_with_its_key(
    router: respx.Router,
    client: StateHubClient,
    name: str,
    call: Write,
    method: str,
    path: str,
    body: dict[str, Any],
    status: int,
    answer: Any,
) -> None:
    router.route(method=method, path=path).respond(status, json=answer)
    written = call(client, f"run-1:{name}")
    request = _last(router)
    assert (request.method, request.url.path, request.url.query) == (method, path, b"")
    # Canonical: sorted keys, no spaces, None fields left out.
    assert request.content == json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
    assert request.headers["Idempotency-Key"] == f"run-1:{name}"
    assert request.headers["Content-Type"] == "application/json"
    assert request.headers["Authorization"] == f"Bearer {TOKEN}"
    assert request.headers["User-Agent"] == f"custodian/{__version__}"
    assert (written.status_code, written.attempts, written.replayed) == (status, 1, False)
    assert written.resource.id == answer["id"]


def test_no_token_sends_no_authorization(
    router: respx.Router, make_client: Callable[..., StateHubClient]
) -> None:
    router.get("/health").respond(200, json={"status": "ok", "version": "1"})
    make_client(token=None).health()
    assert "Authorization" not in _last(router).headers


def test_base_url_with_a_path_prefix_keeps_it(
    router: respx.Router, make_client: Callable[..., StateHubClient]
) -> None:
    router.get("/hub/v1/state/summary").respond(200, json={"generated_at": TS, "domains": []})
    make_client(base_url=f"{BASE}/hub/v1/").state_summary()
    assert _last(router).url == f"{BASE}/hub/v1/state/summary"


# --- retries -----------------------------------------------------------------------------------


def test_503_with_retry_after_waits_that_long_then_succeeds(
    router: respx.Router, client: StateHubClient, fake_time: FakeTime
) -> None:
    router.get("/health").mock(
        side_effect=[
            httpx.Response(503, headers={"Retry-After": "2"}, json=UNAVAILABLE),
            httpx.Response(200, json={"status": "ok", "version": "1"}),
        ]
    )
    assert client.health().status == "ok"
    # The first jitter window is at most 0.5 s, so the hub's 2 s is what the client waits.
    assert fake_time.sleeps == [2.0]
    assert router.calls.call_count == 2


def test_retry_after_as_http_date_is_measured_from_the_hubs_date(
    router: respx.Router, client: StateHubClient, fake_time: FakeTime
) -> None:
    dated = {
        "Date": "Sun, 29 Nov 2026 08:00:00 GMT",
        "Retry-After": "Sun, 29 Nov 2026 08:00:07 GMT",
    }
    router.get("/state/summary").mock(
        side_effect=[
            httpx.Response(
                429, headers=dated, json={"detail": "slow down", "code": "rate_limited"}
            ),
            httpx.Response(200, json={"generated_at": TS, "domains": []}),
        ]
    )
    client.state_summary()
    assert fake_time.sleeps == [7.0]


def test_retry_after_is_capped_by_max_retry_wait(
    router: respx.Router, make_client: Callable[..., StateHubClient], fake_time: FakeTime
) -> None:
    router.get("/health").mock(
        side_effect=[
            httpx.Response(503, headers={"Retry-After": "3600"}, json=UNAVAILABLE),
            httpx.Response(200, json={"status": "ok", "version": "1"}),
        ]
    )
    make_client(max_retry_wait_s=5.0, max_total_s=100.0).health()
    assert fake_time.sleeps == [5.0]


@pytest.mark.parametrize(
    "failure",
    [
        httpx.Response(429, json={"detail": "slow down", "code": "rate_limited"}),
        httpx.Response(502, text="bad gateway"),
        httpx.Response(503, json=UNAVAILABLE),
        httpx.Response(504, text="gateway timeout"),
        httpx.ConnectError("connection refused"),
        httpx.ReadTimeout("timed out"),
        httpx.RemoteProtocolError("server disconnected"),
    ],
    ids=["429", "502", "503", "504", "connect", "read-timeout", "disconnect"],
)
def test_transient_failures_are_retried(
    router: respx.Router, client: StateHubClient, fake_time: FakeTime, failure: Any
) -> None:
    router.get("/tasks/t-1").mock(side_effect=[failure, failure, httpx.Response(200, json=TASK)])
    assert client.get_task("t-1").id == "t-1"
    assert router.calls.call_count == 3
    # Full jitter without Retry-After: first window 0.5 s, then 1 s.
    assert len(fake_time.sleeps) == 2
    assert 0 <= fake_time.sleeps[0] <= 0.5 and 0 <= fake_time.sleeps[1] <= 1.0


def test_gives_up_after_max_attempts_with_the_count(
    router: respx.Router, client: StateHubClient, fake_time: FakeTime
) -> None:
    router.get("/state/summary").respond(503, json=UNAVAILABLE)
    with pytest.raises(HubUnavailable) as caught:
        client.state_summary()
    error = caught.value
    assert str(error) == (
        f"state-hub GET {BASE}/state/summary failed after 5 attempts:"
        " 503 unavailable: hub is restarting"
    )
    assert (error.status, error.code, error.detail) == (503, "unavailable", "hub is restarting")
    assert (error.method, error.url, error.attempts, error.exit_code) == (
        "GET",
        f"{BASE}/state/summary",
        5,
        3,
    )
    assert router.calls.call_count == 5
    assert len(fake_time.sleeps) == 4
    assert all(0 <= s <= w for s, w in zip(fake_time.sleeps, [0.5, 1, 2, 4], strict=True))


def test_connection_failures_give_up_with_a_hint(
    router: respx.Router, make_client: Callable[..., StateHubClient]
) -> None:
    router.get("/health").mock(side_effect=httpx.ConnectError("[Errno 111] Connection refused"))
    with pytest.raises(HubUnavailable) as caught:
        make_client(max_attempts=3).health()
    error = caught.value
    assert (error.status, error.code, error.attempts) == (None, "connection_error", 3)
    assert "failed after 3 attempts: ConnectError: [Errno 111] Connection refused" in str(error)
    assert f"check that the hub is running at {BASE}" in str(error)


def test_never_sleeps_past_the_total_time_budget(
    router: respx.Router, make_client: Callable[..., StateHubClient], fake_time: FakeTime
) -> None:
    def slow_503(request: httpx.Request) -> httpx.Response:
        fake_time.now += 1.0  # each request itself takes a second
        return httpx.Response(503, headers={"Retry-After": "4"}, json=UNAVAILABLE)

    router.get("/health").mock(side_effect=slow_503)
    with pytest.raises(HubUnavailable) as caught:
        make_client(max_attempts=10, max_total_s=12.0).health()
    # t=1 fail, sleep to 5; t=6 fail, sleep to 10; t=11 fail: 11 + 4 > 12, so give up now.
    assert fake_time.sleeps == [4.0, 4.0]
    assert caught.value.attempts == 3
    assert fake_time.now <= 12.0
    assert "the next wait would pass the 12 s budget" in str(caught.value)


# --- errors that are not retried ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "code", "detail"),
    [
        (400, "bad_request", "limit must be an integer"),
        (401, "unauthorized", "missing or wrong token"),
        (404, "not_found", "no task 't-9'"),
        (409, "conflict", "flag f-1 is already resolved"),
        (422, "validation_error", "summary: too long"),
        (422, "idempotency_mismatch", "key reused with another body"),
    ],
)
def test_client_errors_are_not_retried_and_keep_their_fields(
    router: respx.Router, client: StateHubClient, status: int, code: str, detail: str
) -> None:
    router.patch("/flags/f-1").respond(status, json={"detail": detail, "code": code})
    with pytest.raises(HubRequestError) as caught:
        client.resolve_flag("f-1", idempotency_key="k-1")
    error = caught.value
    assert router.calls.call_count == 1
    assert (error.status, error.code, error.detail, error.attempts) == (status, code, detail, 1)
    assert (error.method, error.url) == ("PATCH", f"{BASE}/flags/f-1")
    assert str(error).startswith(
        f"state-hub PATCH {BASE}/flags/f-1 refused the request: {status} {code}: {detail}"
    )


def test_refusals_that_the_caller_can_fix_say_how(
    router: respx.Router, client: StateHubClient
) -> None:
    router.get("/health").respond(401, json={"detail": "bad token", "code": "unauthorized"})
    with pytest.raises(HubRequestError, match="check the state-hub token"):
        client.health()


def test_a_non_json_error_body_is_tolerated(router: respx.Router, client: StateHubClient) -> None:
    router.get("/tasks/t-9").respond(404, text="<html>Not Found</html>")
    with pytest.raises(HubRequestError) as caught:
        client.get_task("t-9")
    assert (caught.value.status, caught.value.code) == (404, None)
    assert caught.value.detail == "<html>Not Found</html>"
    assert "404 Not Found: <html>Not Found</html>" in str(caught.value)


def test_a_500_is_not_retried(router: respx.Router, client: StateHubClient) -> None:
    router.get("/health").respond(500, json={"detail": "boom", "code": "internal"})
    with pytest.raises(HubUnavailable) as caught:
        client.health()
    assert (caught.value.status, caught.value.attempts, router.calls.call_count) == (500, 1, 1)


def test_redirects_are_not_followed(router: respx.Router, client: StateHubClient) -> None:
    router.get("/health").respond(307, headers={"Location": "http://elsewhere.test/health"})
    with pytest.raises(HubError, match="unexpected 307") as caught:
        client.health()
    assert type(caught.value) is HubError
    assert router.calls.call_count == 1


@pytest.mark.parametrize(
    ("body", "problem"),
    [(b'{"status": "ok"}', "version: Field required"), (b"<html>hello</html>", "Invalid JSON")],
)
def test_a_body_that_does_not_parse_is_a_hub_error_not_retried(
    router: respx.Router, client: StateHubClient, body: bytes, problem: str
) -> None:
    router.get("/health").respond(200, content=body)
    with pytest.raises(HubError) as caught:
        client.health()
    assert type(caught.value) is HubError
    assert caught.value.code == "bad_response"
    assert "answered 200 with a body that is not a valid Health" in str(caught.value)
    assert problem in str(caught.value)
    assert router.calls.call_count == 1


# --- writes: idempotency -----------------------------------------------------------------------


def test_a_retried_write_resends_the_same_bytes_and_key(
    router: respx.Router, client: StateHubClient
) -> None:
    router.post("/events").mock(
        side_effect=[
            httpx.ReadTimeout("response lost"),
            httpx.Response(503, json=UNAVAILABLE),
            httpx.Response(201, json=EVENT),
        ]
    )
    event = NewEvent(workstream_id="ws-1", event_type="note", summary="é ✓", source="custodian")
    written = client.add_event(event, idempotency_key="run-7:abc")
    requests = [call.request for call in router.calls]
    assert len(requests) == 3 and written.attempts == 3
    assert {r.content for r in requests} == {requests[0].content}
    assert {r.headers["Idempotency-Key"] for r in requests} == {"run-7:abc"}
    assert json.loads(requests[0].content)["summary"] == "é ✓"


def test_replayed_flag_and_response_digest(router: respx.Router, client: StateHubClient) -> None:
    raw = json.dumps(FLAG).encode()
    router.post("/flags").mock(
        side_effect=[
            httpx.Response(201, content=raw),
            httpx.Response(201, content=raw, headers={"Idempotent-Replayed": "true"}),
        ]
    )
    flag = NewFlag(workstream_id="ws-1", note="stuck", raised_by="custodian")
    first = client.add_flag(flag, idempotency_key="k-1")
    again = client.add_flag(flag, idempotency_key="k-1")
    assert (first.replayed, again.replayed) == (False, True)
    assert first.response_sha256 == again.response_sha256 == hashlib.sha256(raw).hexdigest()
    assert again.resource == first.resource


@pytest.mark.parametrize(
    "key", ["", " lead", "trail ", "x" * 256, "caf\u00e9", "a\nb", "tab\there", "bell\x07"]
)
def test_a_bad_idempotency_key_is_refused_before_sending(
    router: respx.Router, client: StateHubClient, key: str
) -> None:
    with pytest.raises(ValueError, match="idempotency_key must be 1-255 printable ASCII"):
        client.resolve_flag("f-1", idempotency_key=key)
    assert router.calls.call_count == 0


@pytest.mark.parametrize("key", ["k", "x" * 255, "run 1:add_event:9f86d081", "~!@#$%^&*()"])
def test_edge_idempotency_keys_are_accepted(
    router: respx.Router, client: StateHubClient, key: str
) -> None:
    router.patch("/flags/f-1").respond(200, json={**FLAG, "status": "resolved"})
    assert client.resolve_flag("f-1", idempotency_key=key).resource.status == "resolved"
    assert _last(router).headers["Idempotency-Key"] == key


# --- bad input --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda c: c.get_task("../state"),
        lambda c: c.get_task(".."),
        lambda c: c.get_task("t-1\n"),
        lambda c: c.resolve_flag("a/b", idempotency_key="k"),
        lambda c: c.domain_summary("Website"),
        lambda c: c.domain_summary("website", events=501),
    ],
)
def test_bad_ids_are_refused_before_sending(
    router: respx.Router, client: StateHubClient, call: Callable[[StateHubClient], Any]
) -> None:
    with pytest.raises(ValueError, match="must"):
        call(client)
    assert router.calls.call_count == 0


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"base_url": "hub:8080"}, "must look like http://host:port"),
        ({"base_url": "ftp://hub.test"}, "must look like http://host:port"),
        ({"base_url": ""}, "must look like http://host:port"),
        ({"base_url": "http://hub.test/?x=1"}, "must not carry a query"),
        ({"token": ""}, "token must be non-empty printable ASCII"),
        ({"token": "two words"}, "token must be non-empty printable ASCII"),
        ({"max_attempts": 0}, "max_attempts must be at least 1"),
        ({"max_total_s": 0}, "retry limits must be positive"),
        ({"timeout_s": -1}, "timeout must be positive"),
    ],
)
def test_bad_settings_are_config_errors(options: dict[str, Any], message: str) -> None:
    base_url = options.pop("base_url", BASE)
    with pytest.raises(ConfigError, match=message):
        StateHubClient(base_url, **options)


def test_context_manager_closes_the_client(router: respx.Router) -> None:
    router.get("/health").respond(200, json={"status": "ok", "version": "1"})
    with StateHubClient(BASE, transport=httpx.MockTransport(router.handler)) as client:
        client.health()
    with pytest.raises(RuntimeError, match="closed"):
        client.health()


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("120", 120.0),
        (" 0 ", 0.0),
        ("Sun, 29 Nov 2026 08:01:00 GMT", 60.0),
        ("Sun, 29 Nov 2026 07:00:00 GMT", 0.0),  # already past
        ("soon", None),
        ("\u00b2", None),  # a Unicode digit, not delay-seconds
        ("Mon, 32 Nov 2026 08:00:00 GMT", None),
        ("-5", None),
        ("1.5", None),
        (None, None),
    ],
)
def test_parse_retry_after(value: str | None, expected: float | None) -> None:
    now = datetime(2026, 11, 29, 8, 0, tzinfo=UTC)
    assert parse_retry_after(value, now=now) == expected


@given(st.text(max_size=60))
def test_parse_retry_after_never_raises_on_hub_text(value: str) -> None:
    now = datetime(2026, 11, 29, 8, 0, tzinfo=UTC)
    result = parse_retry_after(value, now=now)
    assert result is None or result >= 0


@given(st.integers(min_value=0, max_value=10**12))
def test_parse_retry_after_reads_any_delay_seconds(seconds: int) -> None:
    assert parse_retry_after(str(seconds), now=datetime(2026, 1, 1, tzinfo=UTC)) == seconds
