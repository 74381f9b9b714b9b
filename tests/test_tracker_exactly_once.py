"""Exactly once on a Roundup tracker, which has no idempotency keys: a write whose answer was lost
is found by its mark before it is sent again, counted on the tracker itself.

The answer is lost two ways: the connection drops after the tracker kept the write (the client
retries with the same key), and the process is SIGKILLed right after the tracker answered (a new
process re-sends the same key, as a reconcile does). A person's change between Custodian's read
and its write meets Roundup's 412, and is neither lost nor overwritten unseen.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import httpx
import pytest

from custodian_runtime.clock import utc_now
from custodian_runtime.core.authority.keys import run_key
from custodian_runtime.core.contract import NewEvent, NewTask, NewWorkstream, TaskStatusUpdate
from custodian_runtime.errors import HubPreconditionFailed
from custodian_runtime.settings import HubSettings
from custodian_runtime.statehub import StateHubClient
from custodian_runtime.statehub.connect import open_hub
from trackersupport import Tracker

# A key as a run makes them (core/authority/keys.py): its run id, fingerprint and nonce.
KEY = run_key("r20261207T070010Z-7029e2", "0749ef9be7d331c33636acd7995601a0", "a1b2c3d4e5f6")

# A process that sends one write through the Roundup backend and is SIGKILLed the moment the
# tracker's answer to it arrives: the write is kept there, its receipt never recorded.
KILLED_AFTER_THE_WRITE = """
import os, signal, sys
import httpx
from custodian_runtime.clock import utc_now
from custodian_runtime.core.authority.keys import run_key
from custodian_runtime.core.contract import NewEvent, TaskStatusUpdate
from custodian_runtime.settings import HubSettings
from custodian_runtime.statehub.connect import open_hub

class KilledOnTheAnswer(httpx.BaseTransport):
    def __init__(self):
        self.inner = httpx.HTTPTransport()
    def handle_request(self, request):
        response = self.inner.handle_request(request)
        if request.method in ("POST", "PUT"):
            response.read()
            os.kill(os.getpid(), signal.SIGKILL)
        return response

url, what, target, key = sys.argv[1:]
hub = HubSettings(url=url, max_attempts=1)
with open_hub(hub, None, utc_now, transport=KilledOnTheAnswer()) as client:
    if what == "event":
        event = NewEvent(workstream_id=target, event_type="note", summary=key, source="custodian")
        client.add_event(event, idempotency_key=key)
    else:
        done = TaskStatusUpdate(status="done")
        client.update_task_status(target, done, idempotency_key=key, if_match=1)
"""


@pytest.fixture
def tracker(roundup: Tracker) -> Tracker:
    """The session's Roundup tracker."""
    return roundup


def _client(
    tracker: Tracker,
    tmp_path: Path,
    transport: httpx.BaseTransport | None = None,
    attempts: int = 1,
) -> AbstractContextManager[StateHubClient]:
    hub = HubSettings(url=tracker.hub_url, max_attempts=attempts)
    return open_hub(hub, tmp_path, utc_now, transport=transport)


def _tracker_items(tracker: Tracker, klass: str, **where: str) -> list[dict[str, Any]]:
    """Items as the tracker itself lists them (Roundup's REST, as its admin)."""
    response = httpx.get(
        f"{tracker.web}/rest/data/{klass}",
        params={"@fields": "marks,version", **where},
        auth=("admin", "admin-pw"),
        headers={"X-Requested-With": "rest"},
    )
    response.raise_for_status()
    items: list[dict[str, Any]] = response.json()["data"]["collection"]
    return items


def _domain(tracker: Tracker, tmp_path: Path, name: str) -> tuple[str, str]:
    with _client(tracker, tmp_path) as client:
        ws = client.create_workstream(
            NewWorkstream(domain=name, title="Site"), idempotency_key=f"{name}-w"
        )
        task = client.create_task(
            NewTask(workstream_id=ws.resource.id, title="Ship it"), idempotency_key=f"{name}-t"
        )
    return ws.resource.id, task.resource.id


class AnswerLostOnce(httpx.BaseTransport):
    """Sends every request to the tracker; the answer to the first write is lost on the way back."""

    def __init__(self) -> None:
        self.inner = httpx.HTTPTransport()
        self.writes = 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        if request.method in ("POST", "PUT"):
            self.writes += 1
            if self.writes == 1:
                response.close()
                raise httpx.RemoteProtocolError("Server disconnected", request=request)
        return response


def test_a_lost_answer_is_found_by_its_mark_and_not_written_twice(
    tracker: Tracker, tmp_path: Path
) -> None:
    workstream, _ = _domain(tracker, tmp_path, "lost-answer")
    lossy = AnswerLostOnce()
    event = NewEvent(
        workstream_id=workstream, event_type="note", summary="lost-answer-1", source="custodian"
    )
    with _client(tracker, tmp_path, lossy, attempts=3) as client:
        sent = client.add_event(event, idempotency_key=KEY)
    assert (sent.attempts, sent.replayed, sent.status_code) == (2, True, 201)
    assert lossy.writes == 1  # the retry found the mark: nothing was sent twice
    assert len(_tracker_items(tracker, "progress_event", summary="lost-answer-1")) == 1


@pytest.mark.parametrize("what", ["event", "status"])
def test_a_process_killed_after_the_tracker_kept_its_write_is_not_written_twice(
    tracker: Tracker, tmp_path: Path, what: str
) -> None:
    workstream, task = _domain(tracker, tmp_path, f"killed-{what}")
    key = f"killed-{what}-1"
    target = workstream if what == "event" else task
    killed = subprocess.run(
        [sys.executable, "-c", KILLED_AFTER_THE_WRITE, tracker.hub_url, what, target, key],
        capture_output=True,
        timeout=60,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    with _client(tracker, tmp_path) as client:  # the next run sends the same write again
        if what == "event":
            event = NewEvent(
                workstream_id=workstream, event_type="note", summary=key, source="custodian"
            )
            again = client.add_event(event, idempotency_key=key)
            kept = _tracker_items(tracker, "progress_event", summary=key)
            assert len(kept) == 1 and again.resource.id == f"e{kept[0]['id']}"
        else:
            done = TaskStatusUpdate(status="done")
            again = client.update_task_status(task, done, idempotency_key=key, if_match=1)
            assert (again.resource.status, again.resource.version) == ("done", 2)
            [kept] = [t for t in _tracker_items(tracker, "task") if f"t{t['id']}" == task]
            assert kept["version"] == 2 and kept["marks"].count(key) == 1
    assert again.replayed is True


class PersonChangesFirst(httpx.BaseTransport):
    """A person changes the task in the tracker just before Custodian's change reaches it."""

    def __init__(self, tracker: Tracker, number: str) -> None:
        self.inner = httpx.HTTPTransport()
        self.tracker, self.number, self.done = tracker, number, False

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if request.method == "PUT" and not self.done:
            self.done = True
            url = f"{self.tracker.web}/rest/data/task/{self.number}"
            headers = {
                "X-Requested-With": "rest",
                "Referer": f"{self.tracker.web}/",
                "Origin": self.tracker.web.rsplit("/", 1)[0],
            }
            with httpx.Client(auth=("admin", "admin-pw"), headers=headers) as person:
                etag = person.get(url).json()["data"]["@etag"]
                person.put(
                    url, json={"status": "blocked"}, headers={"If-Match": etag}
                ).raise_for_status()
        return self.inner.handle_request(request)


def test_a_persons_change_between_read_and_write_meets_roundups_412(
    tracker: Tracker, tmp_path: Path
) -> None:
    _, task = _domain(tracker, tmp_path, "person-first")
    number = task.removeprefix("t")
    start = TaskStatusUpdate(status="in_progress")
    person_first = PersonChangesFirst(tracker, number)
    with (
        _client(tracker, tmp_path, person_first) as client,
        pytest.raises(HubPreconditionFailed) as refused,
    ):
        client.update_task_status(task, start, idempotency_key="person-first-1", if_match=1)
    assert refused.value.current is not None
    assert (refused.value.current.status, refused.value.current.version) == ("blocked", 2)
    with _client(tracker, tmp_path, PersonChangesFirst(tracker, number)) as client:
        moved = client.update_task_status(task, start, idempotency_key="person-first-2")
    # Unconditional: re-read after the person's second change, then made on top of it.
    assert (moved.resource.status, moved.resource.version) == ("in_progress", 4)
