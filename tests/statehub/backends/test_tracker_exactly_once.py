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
import time
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import httpx
import pytest

from custodian_runtime.clock import utc_now
from custodian_runtime.core.contract import NewEvent, NewTask, NewWorkstream, TaskStatusUpdate
from custodian_runtime.core.journal.keys import run_key
from custodian_runtime.settings import HubSettings
from custodian_runtime.statehub import HubPreconditionFailed, StateHubClient
from custodian_runtime.statehub.connect import open_hub
from support.roundup import HoldingProxy, Tracker
from support.runs import CANON, run_cli
from support.spine import finish, start_run
from support.trackers import KILLED_ON_THE_ANSWER, AnswerLostOnce, seed_domain

# A key as a run makes them (core/journal/keys.py): its run id, fingerprint and nonce.
KEY = run_key("r20261207T070010Z-7029e2", "0749ef9be7d331c33636acd7995601a0", "a1b2c3d4e5f6")

# A process that sends one write through the Roundup backend and is SIGKILLed the moment the
# tracker's answer to it arrives: the write is kept there, its receipt never recorded.
KILLED_AFTER_THE_WRITE = (
    KILLED_ON_THE_ANSWER
    + """
from custodian_runtime.core.journal.keys import run_key
from custodian_runtime.core.contract import NewEvent, TaskStatusUpdate

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
)


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
        return seed_domain(client, name)


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


def _seed_killed_run(tracker: Tracker, tmp_path: Path, domain: str, what: str) -> str:
    """A task the offline planner writes to once: a blocked one (a flag), or one in progress a
    person's newer milestone says is done (a status). The task's id."""
    with _client(tracker, tmp_path) as client:
        new = NewWorkstream(domain=domain, title="Launch")
        ws = client.create_workstream(new, idempotency_key=f"{domain}-w").resource.id
        status = "blocked" if what == "flag" else "in_progress"
        task = NewTask(workstream_id=ws, title="Sign the contract", status=status)
        made = client.create_task(task, idempotency_key=f"{domain}-t").resource
        if what == "status":
            time.sleep(1.05)  # the tracker keeps seconds: the person's word must come later
            said = "The contract is signed: done."
            word = NewEvent(
                workstream_id=ws,
                task_id=made.id,
                event_type="milestone",
                summary=said,
                source="ana",
            )
            client.add_event(word, idempotency_key=f"{domain}-e")
    return made.id


@pytest.mark.parametrize(
    ("what", "klass", "method"), [("flag", "flag", "POST"), ("status", "task", "PUT")]
)
def test_a_run_killed_before_the_trackers_answer_is_reconciled_not_written_twice(
    tracker: Tracker,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    what: str,
    klass: str,
    method: str,
) -> None:
    """`custodian run` writes through a proxy that keeps the tracker's answer back, and is
    SIGKILLed there. The next run, straight to the tracker (the same hub_id), reconciles the open
    write: the flag is found on the task; the status write's probe (its key and If-Match sent
    again) is answered from its mark as a replay. Neither is made twice."""
    domain = f"killed-run-{what}"
    task = _seed_killed_run(tracker, tmp_path, domain, what)
    argv = ["run", "--domain", domain, "--llm", "offline", "--memory", str(tmp_path / "memory")]
    argv += ["--canon", str(CANON)]
    held = lambda verb, path: verb == method and f"/rest/data/{klass}" in path  # noqa: E731
    with HoldingProxy(tracker, held) as proxy:
        child = start_run(
            tmp_path, [sys.executable, "-m", "custodian_runtime", *argv, "--hub", proxy.hub_url()]
        )
        reached = proxy.reached.wait(20)
        child.send_signal(signal.SIGKILL)
        _, _, stderr = finish(child)
    assert reached, f"the run never sent its write: {stderr}"
    assert child.returncode == -signal.SIGKILL
    before = _state(tracker, tmp_path, domain, task)  # the tracker kept the write

    again = run_cli([*argv, "--hub", tracker.hub_url, "--json"], tmp_path, monkeypatch)
    assert again.code == 0, again.stderr
    [reconciled] = again.json()["reconciled"]
    assert _state(tracker, tmp_path, domain, task) == before  # not made a second time
    if what == "flag":
        assert (reconciled["outcome"], reconciled["hub_id"]) == ("found", before[0][0])
    else:
        assert before[1] == ("done", 2)
        # The probe met the write's mark on the task: a replay, which only that write makes.
        assert (reconciled["outcome"], reconciled["hub_id"]) == ("found", task)
        assert reconciled["reason"] == "the hub replayed its key: it landed"


def _state(tracker: Tracker, tmp_path: Path, domain: str, task: str) -> tuple[Any, ...]:
    with _client(tracker, tmp_path) as client:
        flags = tuple(flag.id for flag in client.list_flags(domain=domain))
        found = client.get_task(task)
    return flags, (found.status, found.version)


def _flags_of(tracker: Tracker, tmp_path: Path, domain: str) -> list[str]:
    with _client(tracker, tmp_path) as client:
        return [flag.id for flag in client.list_flags(domain=domain)]
