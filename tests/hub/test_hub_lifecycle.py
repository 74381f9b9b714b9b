"""Reference hub lifecycle: start and stop, persistence across restarts, the on_write hook."""

from __future__ import annotations

import threading
from pathlib import Path

import httpx
import pytest

from conftest import HUB_NOW
from custodian_hub import ReferenceHub, demo_dataset, load_seed

EVENT = {
    "workstream_id": "plat-ws-2",
    "event_type": "milestone",
    "summary": "Cutover done.",
    "source": "custodian",
}


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    path = tmp_path / "state" / "hub.sqlite3"
    load_seed(path, demo_dataset(HUB_NOW))
    return path


def milestones(url: str) -> list[str]:
    events = httpx.get(f"{url}/events", params={"workstream_id": "plat-ws-2"}).json()["events"]
    return [e["id"] for e in events if e["summary"] == EVENT["summary"]]


def test_data_survives_a_restart_on_the_same_file(db_path: Path) -> None:
    with ReferenceHub(db_path) as hub:
        created = httpx.post(f"{hub.url}/events", json=EVENT).json()
        httpx.patch(f"{hub.url}/tasks/plat-t-13", json={"status": "in_progress"})
    with ReferenceHub(db_path) as hub:
        assert milestones(hub.url) == [created["id"]]
        assert httpx.get(f"{hub.url}/tasks/plat-t-13").json()["status"] == "in_progress"
        second = httpx.post(f"{hub.url}/events", json=EVENT).json()
    assert second["id"] != created["id"]


def test_url_needs_a_started_hub_and_stop_is_safe_twice(db_path: Path) -> None:
    hub = ReferenceHub(db_path)
    with pytest.raises(RuntimeError, match="start"):
        _ = hub.url
    assert hub.start() is hub
    with pytest.raises(RuntimeError, match="already running"):
        hub.start()
    url = hub.url
    hub.stop()
    hub.stop()
    with pytest.raises(httpx.TransportError):
        httpx.get(f"{url}/health", timeout=1.0)


def test_stop_cuts_kept_alive_connections(db_path: Path) -> None:
    hub = ReferenceHub(db_path).start()
    with httpx.Client(base_url=hub.url, timeout=2.0) as client:
        assert client.get("/health").status_code == 200
        hub.stop()
        with pytest.raises(httpx.TransportError):
            client.get("/health")


def test_on_write_sees_both_phases_of_each_write_only(db_path: Path) -> None:
    calls: list[tuple[str, str, str]] = []
    with ReferenceHub(db_path, on_write=lambda *call: calls.append(call)) as hub:
        headers = {"Idempotency-Key": "once"}
        httpx.get(f"{hub.url}/state/summary")
        httpx.post(f"{hub.url}/events", json=EVENT, headers=headers)
        httpx.post(f"{hub.url}/events", json=EVENT, headers=headers)  # a replay writes nothing
        httpx.patch(f"{hub.url}/tasks/nope", json={"status": "done"})  # a refusal neither
    assert calls == [("before_commit", "POST", "/events"), ("after_commit", "POST", "/events")]


def test_a_crash_before_commit_writes_nothing(db_path: Path) -> None:
    def crash(phase: str, method: str, path: str) -> None:
        if phase == "before_commit":
            raise RuntimeError("power cut")

    with ReferenceHub(db_path, on_write=crash) as hub:
        with pytest.raises(httpx.RemoteProtocolError):
            httpx.post(f"{hub.url}/events", json=EVENT, headers={"Idempotency-Key": "k"})
        assert milestones(hub.url) == []
        assert httpx.get(f"{hub.url}/health").status_code == 200


def test_a_crash_after_commit_keeps_the_write_and_a_retry_replays_it(db_path: Path) -> None:
    crashes = [True]

    def crash_once(phase: str, method: str, path: str) -> None:
        if phase == "after_commit" and crashes:
            crashes.pop()
            raise RuntimeError("died before answering")

    with ReferenceHub(db_path, on_write=crash_once) as hub:
        with pytest.raises(httpx.RemoteProtocolError):
            httpx.post(f"{hub.url}/events", json=EVENT, headers={"Idempotency-Key": "k"})
        retry = httpx.post(f"{hub.url}/events", json=EVENT, headers={"Idempotency-Key": "k"})
        assert retry.status_code == 201
        assert retry.headers["idempotent-replayed"] == "true"
        assert milestones(hub.url) == [retry.json()["id"]]


def test_a_held_write_blocks_no_reader_and_stays_invisible(db_path: Path) -> None:
    entered, release = threading.Event(), threading.Event()

    def hold(phase: str, method: str, path: str) -> None:
        if phase == "before_commit":
            entered.set()
            release.wait(5)

    with ReferenceHub(db_path, on_write=hold) as hub:
        writer = threading.Thread(
            target=httpx.post, args=(f"{hub.url}/events",), kwargs={"json": EVENT, "timeout": 10.0}
        )
        writer.start()
        assert entered.wait(5)
        assert milestones(hub.url) == []  # answered while the write is open
        release.set()
        writer.join(5)
        assert len(milestones(hub.url)) == 1


def test_a_fresh_database_serves_an_empty_state(tmp_path: Path) -> None:
    with ReferenceHub(tmp_path / "new" / "hub.sqlite3") as hub:
        assert httpx.get(f"{hub.url}/state/summary").json()["domains"] == []
        assert httpx.get(f"{hub.url}/domains/website/summary").status_code == 404
