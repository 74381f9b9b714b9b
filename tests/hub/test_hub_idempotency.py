"""Idempotency keys on the reference hub: replay, mismatch, the 24 h window, races, restarts."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path

import httpx
import pytest

from conftest import HubClock
from custodian_hub import ReferenceHub, demo_dataset, load_seed

EVENT = {
    "workstream_id": "web-ws-2",
    "task_id": "web-t-11",
    "event_type": "observation",
    "summary": "Deployed and verified.",
    "source": "custodian",
}


@pytest.fixture
def http(hub_url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=hub_url, timeout=5.0) as client:
        yield client


def post_event(http: httpx.Client, key: str, body: Mapping[str, object] = EVENT) -> httpx.Response:
    return http.post("/events", json=body, headers={"Idempotency-Key": key})


def event_count(http: httpx.Client) -> int:
    return len(http.get("/events", params={"task_id": "web-t-11"}).json()["events"])


def test_the_same_post_twice_with_one_key_makes_one_event(http: httpx.Client) -> None:
    before = event_count(http)
    first = post_event(http, "run-1:item-1")
    second = post_event(http, "run-1:item-1")
    assert (first.status_code, second.status_code) == (201, 201)
    assert "idempotent-replayed" not in first.headers
    assert second.headers["idempotent-replayed"] == "true"
    assert second.json() == first.json()
    assert event_count(http) == before + 1


def test_key_order_of_the_body_does_not_matter(http: httpx.Client) -> None:
    first = post_event(http, "k")
    reordered = dict(reversed(list(EVENT.items())))
    assert post_event(http, "k", reordered).headers["idempotent-replayed"] == "true"
    assert first.status_code == 201


def test_a_patch_is_replayed_too(http: httpx.Client, hub_clock: HubClock) -> None:
    first = http.patch("/tasks/web-t-11", json={"status": "done"}, headers={"Idempotency-Key": "p"})
    hub_clock.advance(timedelta(minutes=1))
    again = http.patch("/tasks/web-t-11", json={"status": "done"}, headers={"Idempotency-Key": "p"})
    assert again.headers["idempotent-replayed"] == "true"
    assert again.json()["updated_at"] == first.json()["updated_at"]
    assert http.get("/tasks/web-t-11").json()["updated_at"] == first.json()["updated_at"]


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("POST", "/events", {**EVENT, "summary": "Something else."}),
        ("POST", "/flags", {"task_id": "web-t-11", "note": "n", "raised_by": "custodian"}),
        ("PATCH", "/tasks/web-t-11", {"status": "done"}),
    ],
)
def test_a_key_reused_for_another_request_is_a_mismatch(
    http: httpx.Client, method: str, path: str, body: dict[str, object]
) -> None:
    assert post_event(http, "shared").status_code == 201
    before = event_count(http)
    response = http.request(method, path, json=body, headers={"Idempotency-Key": "shared"})
    assert response.status_code == 422
    assert response.json()["code"] == "idempotency_mismatch"
    assert "shared" in response.json()["detail"]
    assert event_count(http) == before
    assert http.get("/tasks/web-t-11").json()["status"] == "in_progress"


def test_a_refused_write_does_not_use_up_its_key(http: httpx.Client) -> None:
    bad = post_event(http, "retry-me", {**EVENT, "workstream_id": "web-ws-1"})
    assert bad.status_code == 422
    good = post_event(http, "retry-me")
    assert good.status_code == 201 and "idempotent-replayed" not in good.headers


def test_a_key_is_forgotten_after_24_hours(http: httpx.Client, hub_clock: HubClock) -> None:
    first = post_event(http, "daily")
    hub_clock.advance(timedelta(hours=23, minutes=59))
    assert post_event(http, "daily").headers.get("idempotent-replayed") == "true"
    hub_clock.advance(timedelta(minutes=2))
    later = post_event(http, "daily")
    assert later.status_code == 201 and "idempotent-replayed" not in later.headers
    assert later.json()["id"] != first.json()["id"]


@pytest.mark.parametrize(
    "key",
    [b"", b"x" * 256, b"tab\there", "caf\u00e9".encode(), b"\x7f"],
    ids=["empty", "too-long", "tab", "non-ascii", "del"],
)
def test_a_malformed_key_is_400(http: httpx.Client, key: bytes) -> None:
    response = http.post("/events", json=EVENT, headers={b"Idempotency-Key": key})
    assert response.status_code == 400
    assert response.json()["code"] == "bad_request"


def test_the_longest_key_is_accepted(http: httpx.Client) -> None:
    assert post_event(http, "~" * 255).status_code == 201


def test_concurrent_identical_requests_write_once(tmp_path: Path) -> None:
    db_path = tmp_path / "hub.sqlite3"
    load_seed(db_path, demo_dataset(HubClock()()))

    def slow_commit(phase: str, method: str, path: str) -> None:
        if phase == "before_commit":
            time.sleep(0.05)  # widen the race window: every other request arrives meanwhile

    with ReferenceHub(db_path, on_write=slow_commit) as hub:
        barrier = threading.Barrier(8)

        def send(_: int) -> httpx.Response:
            with httpx.Client(base_url=hub.url, timeout=10.0) as client:
                barrier.wait()
                return post_event(client, "race")

        with ThreadPoolExecutor(max_workers=8) as pool:
            answers = list(pool.map(send, range(8)))
        events = httpx.get(f"{hub.url}/events", params={"task_id": "web-t-11"}).json()["events"]
    assert {a.status_code for a in answers} == {201}
    assert len({a.json()["id"] for a in answers}) == 1
    assert sum(a.headers.get("idempotent-replayed") == "true" for a in answers) == 7
    assert sum(e["summary"] == EVENT["summary"] for e in events) == 1


def test_replays_survive_a_restart(tmp_path: Path) -> None:
    db_path = tmp_path / "hub.sqlite3"
    load_seed(db_path, demo_dataset(HubClock()()))
    with ReferenceHub(db_path) as hub:
        first = httpx.post(f"{hub.url}/events", json=EVENT, headers={"Idempotency-Key": "k"})
    with ReferenceHub(db_path) as hub:
        again = httpx.post(f"{hub.url}/events", json=EVENT, headers={"Idempotency-Key": "k"})
    assert again.headers["idempotent-replayed"] == "true"
    assert again.json() == first.json()
