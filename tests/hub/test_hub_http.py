"""The reference hub at the HTTP level: auth, routing, query parameters and the error body."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from conftest import HUB_NOW
from custodian_hub import ReferenceHub, demo_dataset, load_seed

TOKEN = "s3cret-token"


@pytest.fixture
def http(hub_url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=hub_url, timeout=5.0) as client:
        yield client


@pytest.fixture
def locked_hub(tmp_path: Path) -> Iterator[ReferenceHub]:
    db_path = tmp_path / "hub.sqlite3"
    load_seed(db_path, demo_dataset(HUB_NOW))
    with ReferenceHub(db_path, token=TOKEN) as hub:
        yield hub


def assert_error(response: httpx.Response, status: int, code: str) -> str:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert set(body) == {"detail", "code"} and body["code"] == code
    return str(body["detail"])


def test_with_a_token_every_request_but_health_needs_it(locked_hub: ReferenceHub) -> None:
    with httpx.Client(base_url=locked_hub.url) as anonymous:
        assert anonymous.get("/health").status_code == 200
        for path in ("/state/summary", "/openapi.json", "/no/such/route", "/tasks/web-t-01"):
            response = anonymous.get(path)
            assert_error(response, 401, "unauthorized")
            assert response.headers["www-authenticate"] == "Bearer"
        assert_error(anonymous.post("/events", json={}), 401, "unauthorized")


def test_a_wrong_token_is_401_and_the_right_one_passes(locked_hub: ReferenceHub) -> None:
    wrong = httpx.get(f"{locked_hub.url}/state/summary", headers={"Authorization": "Bearer x"})
    assert_error(wrong, 401, "unauthorized")
    not_bearer = httpx.get(f"{locked_hub.url}/state/summary", headers={"Authorization": TOKEN})
    assert_error(not_bearer, 401, "unauthorized")
    right = httpx.get(
        f"{locked_hub.url}/state/summary", headers={"Authorization": f"Bearer {TOKEN}"}
    )
    assert right.status_code == 200


def test_an_unknown_route_is_404(http: httpx.Client) -> None:
    assert "openapi" in assert_error(http.get("/nothing/here"), 404, "not_found")
    assert_error(http.get("/health/"), 404, "not_found")
    assert_error(http.post("/tasks/web-t-01/comments", json={}), 404, "not_found")


def test_unknown_domain_and_ids_are_404(http: httpx.Client) -> None:
    assert_error(http.get("/domains/nowhere/summary"), 404, "not_found")
    assert_error(http.get("/domains/Not_A_Domain/summary"), 404, "not_found")
    assert_error(http.get("/tasks/web-t-99"), 404, "not_found")
    assert_error(http.get("/tasks/has%20space"), 404, "not_found")
    assert_error(http.get("/tasks/%ff"), 404, "not_found")


def test_a_wrong_method_is_405_with_allow(http: httpx.Client) -> None:
    response = http.delete("/tasks/web-t-01")
    assert "PATCH" in assert_error(response, 405, "method_not_allowed")
    assert response.headers["allow"] == "GET, HEAD, PATCH"
    assert_error(http.put("/events", json={}), 405, "method_not_allowed")
    assert_error(http.get("/decisions/web-dec-1/resolve"), 405, "method_not_allowed")
    assert_error(http.request("FROB", "/events"), 405, "method_not_allowed")


@pytest.mark.parametrize("method", ["FROB", "CONNECT", "QUERY"])
def test_an_unknown_method_is_405_with_allow_too(http: httpx.Client, method: str) -> None:
    response = http.request(method, "/tasks/web-t-01?x=1")
    assert "PATCH" in assert_error(response, 405, "method_not_allowed")
    assert response.headers["allow"] == "GET, HEAD, PATCH"
    assert http.request(method, "/events").headers["allow"] == "GET, HEAD, POST"
    assert_error(http.request(method, "/nowhere"), 404, "not_found")


@pytest.mark.parametrize(
    ("path", "needle"),
    [
        ("/domains/website/summary?events=abc", "events"),
        ("/domains/website/summary?events=9999", "0-500"),
        ("/domains/website/summary?events=-1", "events"),
        ("/domains/website/summary?events=1.5", "events"),
        ("/events?limit=abc", "limit"),
        ("/events?limit=1001", "0-1000"),
        ("/events?limit=10&limit=20", "more than once"),
        ("/events?domain=Web%20Site", "domain"),
        ("/events?task_id=a/b", "task_id"),
        ("/flags?status=closed", "status"),
        ("/decisions?colour=blue", "colour"),
        ("/state/summary?x=1", "x"),
        ("/events?domain=%ff", "query"),
    ],
)
def test_a_malformed_query_parameter_is_400(http: httpx.Client, path: str, needle: str) -> None:
    assert needle in assert_error(http.get(path), 400, "bad_request")


def test_limits_at_their_maximum_are_accepted(http: httpx.Client) -> None:
    assert http.get("/domains/website/summary?events=500").status_code == 200
    assert http.get("/events?limit=1000").status_code == 200


def test_many_requests_share_one_kept_alive_connection(http: httpx.Client) -> None:
    answers = [http.get("/tasks/web-t-01").status_code for _ in range(20)]
    assert answers == [200] * 20
    assert http.get("/tasks/web-t-01").http_version == "HTTP/1.1"


def test_a_broken_request_line_gets_a_json_error(hub: ReferenceHub) -> None:
    host, port = hub.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=5) as raw:
        raw.sendall(b"GET /health HTTP/x.y\r\n\r\n")
        received = b""
        while chunk := raw.recv(65536):  # the hub closes the connection after an error
            received += chunk
    answer = received.decode("latin-1")
    head, _, body = answer.partition("\r\n\r\n")
    assert head.startswith("HTTP/1.1 400")
    assert "Content-Type: application/json" in head
    assert '"code":"bad_request"' in body


def test_chunked_bodies_are_refused_with_a_hint(http: httpx.Client) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"status": "done"}'

    response = http.patch("/tasks/web-t-01", content=chunks())
    assert "Content-Length" in assert_error(response, 400, "bad_request")
