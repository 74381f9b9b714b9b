"""StateHubClient against the real reference hub on loopback: the contract end to end."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from custodian_hub import ReferenceHub, demo_dataset, load_seed
from custodian_runtime.core.contract import (
    DecisionResolution,
    NewDecision,
    NewEvent,
    NewFlag,
    NewTask,
    NewWorkstream,
    TaskStatusUpdate,
)
from custodian_runtime.errors import HubRequestError, HubUnavailable
from custodian_runtime.statehub.client import StateHubClient

TOKEN = "hub-test-token"


class Sleeps:
    """Records the waits the client asked for; never sleeps."""

    def __init__(self) -> None:
        self.calls: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "hub.sqlite3"


@pytest.fixture
def running(db_path: Path) -> Iterator[ReferenceHub]:
    with ReferenceHub(db_path, token=TOKEN) as hub:
        yield hub


@pytest.fixture
def connect() -> Iterator[Callable[..., StateHubClient]]:
    opened: list[StateHubClient] = []

    def make(url: str, token: str | None = TOKEN, **options: Any) -> StateHubClient:
        settings: dict[str, Any] = {"sleep": Sleeps(), "timeout_s": 5.0, **options}
        client = StateHubClient(url, token=token, **settings)
        opened.append(client)
        return client

    yield make
    for client in opened:
        client.close()


@pytest.fixture
def client(running: ReferenceHub, connect: Callable[..., StateHubClient]) -> StateHubClient:
    return connect(running.url)


def _workstream_with_task(client: StateHubClient) -> tuple[str, str]:
    ws = client.create_workstream(
        NewWorkstream(domain="website", title="Launch", owner="ana"), idempotency_key="ws-1"
    ).resource
    task = client.create_task(
        NewTask(workstream_id=ws.id, title="Write copy", description="Landing page"),
        idempotency_key="task-1",
    ).resource
    return ws.id, task.id


def _note(workstream_id: str, summary: str = "copy drafted", **extra: str) -> NewEvent:
    return NewEvent(
        workstream_id=workstream_id, event_type="note", summary=summary, source="test", **extra
    )


def test_every_endpoint_through_the_client(client: StateHubClient) -> None:
    assert client.health().status == "ok"
    ws_id, task_id = _workstream_with_task(client)
    event = client.add_event(_note(ws_id, task_id=task_id), idempotency_key="ev-1")
    assert (event.status_code, event.replayed, event.resource.task_id) == (201, False, task_id)
    done = client.update_task_status(
        task_id, TaskStatusUpdate(status="done"), idempotency_key="s-1"
    )
    assert (done.status_code, done.resource.status) == (200, "done")
    flag = client.add_flag(
        NewFlag(task_id=task_id, note="needs review", raised_by="test"), idempotency_key="fl-1"
    ).resource
    assert flag.workstream_id == ws_id  # derived from the task by the hub
    assert [f.id for f in client.list_flags("website", "open")] == [flag.id]
    assert client.resolve_flag(flag.id, idempotency_key="fl-1-r").resource.status == "resolved"
    decision = client.create_decision(
        NewDecision(domain="website", title="Pick a CMS", options=("a", "b")),
        idempotency_key="d-1",
    ).resource
    assert [d.id for d in client.list_decisions(status="open")] == [decision.id]
    resolved = client.resolve_decision(
        decision.id, DecisionResolution(resolution="a"), idempotency_key="d-1-r"
    )
    assert (resolved.resource.status, resolved.resource.resolution) == ("resolved", "a")

    assert client.get_task(task_id).status == "done"
    assert [e.id for e in client.list_events(domain="website", task_id=task_id)] == [
        event.resource.id
    ]
    assert [w.id for w in client.list_workstreams("website")] == [ws_id]
    summary = client.domain_summary("website", events=10)
    assert [t.id for t in summary.workstreams[0].tasks] == [task_id]
    assert summary.open_flags == () and summary.open_decisions == ()
    (overview,) = client.state_summary().domains
    assert (overview.domain, overview.tasks.done, overview.workstreams.active) == ("website", 1, 1)


def test_the_same_write_twice_with_one_key_is_one_event(client: StateHubClient) -> None:
    ws_id, _ = _workstream_with_task(client)
    first = client.add_event(_note(ws_id), idempotency_key="run-1:event")
    again = client.add_event(_note(ws_id), idempotency_key="run-1:event")
    assert (first.replayed, again.replayed) == (False, True)
    assert again.resource == first.resource
    assert again.response_sha256 == first.response_sha256
    assert len(client.list_events(workstream_id=ws_id)) == 1


def test_a_key_reused_with_another_body_is_an_idempotency_mismatch(
    client: StateHubClient,
) -> None:
    ws_id, _ = _workstream_with_task(client)
    client.add_event(_note(ws_id), idempotency_key="run-1:event")
    with pytest.raises(HubRequestError) as caught:
        client.add_event(_note(ws_id, summary="something else"), idempotency_key="run-1:event")
    assert (caught.value.status, caught.value.code, caught.value.attempts) == (
        422,
        "idempotency_mismatch",
        1,
    )
    assert "needs a new key" in str(caught.value)
    assert len(client.list_events(workstream_id=ws_id)) == 1


def test_a_response_lost_after_commit_is_replayed_on_retry(
    db_path: Path, connect: Callable[..., StateHubClient]
) -> None:
    lost: list[str] = []

    def lose_first_answer(phase: str, method: str, path: str) -> None:
        if phase == "after_commit" and path == "/events" and not lost:
            lost.append(path)
            raise ConnectionAbortedError("the hub died before answering")

    with ReferenceHub(db_path, token=TOKEN, on_write=lose_first_answer) as hub:
        client = connect(hub.url)
        ws_id, _ = _workstream_with_task(client)
        written = client.add_event(_note(ws_id), idempotency_key="run-2:event")
        assert (written.attempts, written.replayed) == (2, True)
        assert len(client.list_events(workstream_id=ws_id)) == 1


def test_a_wrong_token_is_401_but_health_needs_none(
    running: ReferenceHub, connect: Callable[..., StateHubClient]
) -> None:
    intruder = connect(running.url, token="wrong")
    assert intruder.health().status == "ok"
    with pytest.raises(HubRequestError) as caught:
        intruder.state_summary()
    assert (caught.value.status, caught.value.code, caught.value.attempts) == (
        401,
        "unauthorized",
        1,
    )
    with pytest.raises(HubRequestError, match="401 unauthorized"):
        connect(running.url, token=None).list_workstreams()


def test_hub_refusals_map_to_request_errors(client: StateHubClient) -> None:
    ws_id, task_id = _workstream_with_task(client)
    other_ws = client.create_workstream(
        NewWorkstream(domain="website", title="Other"), idempotency_key="ws-2"
    ).resource.id
    with pytest.raises(HubRequestError) as unknown_task:
        client.get_task("no-such-task")
    with pytest.raises(HubRequestError) as unknown_domain:
        client.domain_summary("nowhere")
    with pytest.raises(HubRequestError) as wrong_workstream:
        client.add_event(_note(other_ws, task_id=task_id), idempotency_key="ev-x")
    decision = client.create_decision(
        NewDecision(domain="website", title="Pick"), idempotency_key="d-1"
    ).resource
    client.resolve_decision(decision.id, DecisionResolution(resolution="a"), idempotency_key="r-1")
    with pytest.raises(HubRequestError) as twice:
        client.resolve_decision(
            decision.id, DecisionResolution(resolution="b"), idempotency_key="r-2"
        )
    found = [
        (e.value.status, e.value.code)
        for e in (unknown_task, unknown_domain, wrong_workstream, twice)
    ]
    assert found == [
        (404, "not_found"),
        (404, "not_found"),
        (422, "validation_error"),
        (409, "conflict"),
    ]
    assert all(e.value.detail for e in (unknown_task, unknown_domain, wrong_workstream, twice))
    assert ws_id != other_ws


def test_state_persists_across_a_hub_restart(
    db_path: Path, connect: Callable[..., StateHubClient]
) -> None:
    with ReferenceHub(db_path, token=TOKEN) as hub:
        client = connect(hub.url)
        ws_id, task_id = _workstream_with_task(client)
        first = client.add_event(_note(ws_id), idempotency_key="run-3:event")
    with ReferenceHub(db_path, token=TOKEN) as hub:
        client = connect(hub.url)
        assert client.get_task(task_id).title == "Write copy"
        assert [e.id for e in client.list_events(workstream_id=ws_id)] == [first.resource.id]
        again = client.add_event(_note(ws_id), idempotency_key="run-3:event")
        assert (again.replayed, again.resource) == (True, first.resource)


def test_the_demo_dataset_reads_cleanly(
    db_path: Path, connect: Callable[..., StateHubClient]
) -> None:
    load_seed(db_path, demo_dataset(datetime(2026, 11, 29, 8, 0, tzinfo=UTC)))
    with ReferenceHub(db_path) as hub:
        client = connect(hub.url, token=None)
        domains = {d.domain for d in client.state_summary().domains}
        assert {"website", "platform"} <= domains
        for domain in sorted(domains):
            summary = client.domain_summary(domain)
            assert summary.domain == domain and summary.workstreams


def test_a_hub_that_is_gone_gives_up_with_the_attempt_count(
    db_path: Path, connect: Callable[..., StateHubClient]
) -> None:
    with ReferenceHub(db_path) as hub:
        url = hub.url
    sleeps = Sleeps()
    with pytest.raises(HubUnavailable) as caught:
        connect(url, token=None, max_attempts=3, sleep=sleeps).health()
    assert (caught.value.code, caught.value.attempts, len(sleeps.calls)) == (
        "connection_error",
        3,
        2,
    )
    assert f"check that the hub is running at {url}" in str(caught.value)
