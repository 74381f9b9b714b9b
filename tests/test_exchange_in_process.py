"""An in-process exchange runs in the caller's thread and keeps the size cap and the stop flag."""

from __future__ import annotations

import threading
from dataclasses import dataclass

import httpx
import pytest

from custodian._bounded_http import TooLarge, exchange
from custodian.errors import Interrupted


@dataclass
class _Stop:
    signal: int | None = None


def _client(body: bytes, seen: list[str]) -> httpx.Client:
    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(threading.current_thread().name)
        return httpx.Response(200, content=body)

    return httpx.Client(transport=httpx.MockTransport(answer), base_url="http://embedded.invalid")


def test_the_answer_is_made_in_the_callers_thread() -> None:
    seen: list[str] = []
    with _client(b'{"ok": true}', seen) as client:
        request = client.build_request("GET", "/health")
        response = exchange(client, request, deadline=1e12, max_bytes=100, in_process=True)
    assert response.json() == {"ok": True}
    assert seen == [threading.current_thread().name]


def test_the_size_cap_holds_in_process() -> None:
    with _client(b"x" * 101, []) as client:
        request = client.build_request("GET", "/health")
        with pytest.raises(TooLarge):
            exchange(client, request, deadline=1e12, max_bytes=100, in_process=True)


def test_a_signal_that_came_first_stops_it_before_anything_is_sent() -> None:
    seen: list[str] = []
    with _client(b"{}", seen) as client:
        request = client.build_request("GET", "/health")
        with pytest.raises(Interrupted):
            exchange(client, request, deadline=1e12, max_bytes=100, stop=_Stop(15), in_process=True)
    assert seen == []


def test_over_the_network_the_answer_is_read_in_a_worker() -> None:
    seen: list[str] = []
    with _client(b"{}", seen) as client:
        exchange(client, client.build_request("GET", "/health"), deadline=1e12, max_bytes=100)
    assert seen == ["custodian-http"]
