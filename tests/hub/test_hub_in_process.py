"""The hub in-process answers exactly as the hub over HTTP: status, headers and body alike.

Two hubs on identical databases and clocks, one on a loopback port and one behind
`HubTransport`, get the same requests in the same order: reads, errors, a 412, idempotent replays.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from conftest import HUB_NOW, HubClock
from custodian_hub import HubTransport, ReferenceHub, demo_dataset, in_process, load_seed

TOKEN = "parity-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
EVENT = {
    "workstream_id": "web-ws-2",
    "task_id": "web-t-11",
    "event_type": "observation",
    "summary": "Deployed and verified.",
    "source": "custodian",
}


@dataclass(frozen=True)
class Call:
    """One request of the sample."""

    method: str
    url: str
    headers: dict[str, str] = field(default_factory=lambda: dict(AUTH))
    body: Any = None
    raw: bytes | None = None
    chunked: bool = False  # send `raw` as a chunked body


def _key(name: str) -> dict[str, str]:
    return {**AUTH, "Idempotency-Key": name}


SAMPLE: tuple[Call, ...] = (
    Call("GET", "/health", headers={}),
    Call("GET", "/state/summary"),
    Call("GET", "/domains/website/summary?events=5"),
    Call("GET", "/tasks/web-t-11"),
    Call("HEAD", "/tasks/web-t-11"),
    Call("GET", "/events?domain=website&limit=3"),
    Call("GET", "/flags?status=open"),
    Call("GET", "/openapi.json"),
    Call("GET", "/state/summary", headers={}),  # 401 with WWW-Authenticate
    Call("GET", "/nowhere"),  # 404
    Call("DELETE", "/events"),  # 405 with Allow
    Call("FROB", "/events"),  # a method http.server does not know: 405 with Allow
    Call("FROB", "/nowhere"),
    Call("GET", "/events?domain="),  # 400: empty filter
    Call("GET", "/events?colour=red"),  # 400: unknown parameter
    Call("GET", "/tasks/web-t-11", headers={**AUTH, "Connection": "close"}),
    Call("POST", "/events", headers=_key("bad-json"), raw=b"{not json"),
    Call("POST", "/events", headers=_key("invalid"), body={"summary": ""}),  # 422
    Call("POST", "/events", headers=_key("chunked"), raw=b"{}", chunked=True),  # 400
    Call("POST", "/events", headers=_key("big"), raw=b" " * (1024 * 1024 + 1)),  # 413
    Call("POST", "/events", headers=_key("e-1"), body=EVENT),  # 201
    Call("POST", "/events", headers=_key("e-1"), body=EVENT),  # replayed
    Call("POST", "/events", headers=_key("e-1"), body={**EVENT, "summary": "Other."}),  # 422
    Call(
        "PATCH",
        "/tasks/web-t-11",
        headers={**_key("p-1"), "If-Match": '"99"'},
        body={"status": "done"},
    ),
    Call(
        "PATCH",
        "/tasks/web-t-11",
        headers={**_key("p-2"), "If-Match": "*"},
        body={"status": "done"},
    ),
    Call(
        "PATCH",
        "/tasks/web-t-11",
        headers={**_key("p-3"), "If-Match": '"1"'},
        body={"status": "done"},
    ),
    Call(
        "PATCH",
        "/tasks/web-t-11",
        headers={**_key("p-3"), "If-Match": '"1"'},
        body={"status": "done"},
    ),
    Call("GET", "/tasks/web-t-11"),
    Call(
        "POST",
        "/flags",
        headers=_key("f-1"),
        body={"workstream_id": "web-ws-9", "note": "x", "raised_by": "custodian"},
    ),
    Call("GET", "/events?task_id=web-t-11"),
    Call(
        "GET", "/domains/website/summary", headers={**AUTH, "If-None-Match": "*"}
    ),  # 304, no body (v1.2)
)


@dataclass(frozen=True)
class Seen:
    """What a client saw: status, headers but `Date`, and the body."""

    status: int
    headers: list[tuple[str, str]]
    body: bytes


def _send(client: httpx.Client, call: Call) -> Seen:
    content = call.raw if call.raw is not None else None
    if call.body is not None:
        content = json.dumps(call.body).encode()
        call.headers.setdefault("Content-Type", "application/json")
    if call.chunked:
        content = iter([call.raw or b""])  # type: ignore[assignment]
    response = client.request(call.method, call.url, headers=call.headers, content=content)
    headers = [(k, v) for k, v in response.headers.multi_items() if k.lower() != "date"]
    return Seen(response.status_code, headers, response.content)


def _seeded(path: Path) -> Path:
    load_seed(path, demo_dataset(HUB_NOW))
    return path


@pytest.fixture
def both(tmp_path: Path) -> Iterator[tuple[httpx.Client, httpx.Client]]:
    # A copy of one store: the same hub_id (v1.2) on both sides.
    http_db, local_db = _seeded(tmp_path / "http.sqlite3"), tmp_path / "local.sqlite3"
    shutil.copy(http_db, local_db)
    with (
        ReferenceHub(http_db, token=TOKEN, clock=HubClock()) as hub,
        in_process(local_db, token=TOKEN, clock=HubClock()) as transport,
        httpx.Client(base_url=hub.url, timeout=10.0) as over_http,
        httpx.Client(base_url="http://hub.invalid", transport=transport) as local,
    ):
        yield over_http, local


def test_every_answer_of_the_sample_is_the_same_in_process_and_over_http(
    both: tuple[httpx.Client, httpx.Client],
) -> None:
    over_http, local = both
    statuses = []
    for call in SAMPLE:
        seen_http, seen_local = _send(over_http, call), _send(local, call)
        assert seen_local == seen_http, f"{call.method} {call.url}"
        statuses.append(seen_http.status)
    # The sample covers what it claims: errors, a 412, a replay and a HEAD.
    assert {304, 400, 401, 404, 405, 412, 413, 422, 200, 201} <= set(statuses)


def test_the_sample_shows_the_headers_that_matter(
    both: tuple[httpx.Client, httpx.Client],
) -> None:
    _, local = both
    seen = [_send(local, call) for call in SAMPLE]
    names = {name.lower() for s in seen for name, _ in s.headers}
    assert {"etag", "allow", "www-authenticate", "idempotent-replayed", "connection"} <= names
    head = seen[4]
    assert head.body == b"" and int(dict(head.headers)["content-length"]) > 0


def test_a_failing_write_hook_drops_the_answer_and_keeps_nothing(tmp_path: Path) -> None:
    def crash(phase: str, method: str, path: str) -> None:
        raise RuntimeError(f"the hub dies in {phase}")

    db = _seeded(tmp_path / "hub.sqlite3")
    with (
        in_process(db, on_write=crash) as transport,
        httpx.Client(base_url="http://hub.invalid", transport=transport) as client,
    ):
        before = client.get("/events", params={"task_id": "web-t-11"}).json()["events"]
        with pytest.raises(httpx.RemoteProtocolError):
            client.post("/events", json=EVENT, headers={"Idempotency-Key": "k"})
        after = client.get("/events", params={"task_id": "web-t-11"}).json()["events"]
    assert after == before


def test_the_transport_is_a_real_httpx_transport(tmp_path: Path) -> None:
    with in_process(_seeded(tmp_path / "hub.sqlite3")) as transport:
        assert isinstance(transport, HubTransport)
        assert isinstance(transport, httpx.BaseTransport)
