"""StateHubClient and contract v1.1: `if_match` on status writes, and a 412 as its own error."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
import respx

from custodian_hub import ReferenceHub, demo_dataset, load_seed
from custodian_runtime.core.contract import Task, TaskStatusUpdate
from custodian_runtime.errors import HubRequestError
from custodian_runtime.statehub import HubPreconditionFailed
from custodian_runtime.statehub.client import StateHubClient

BASE = "http://hub.test"
TS = "2026-11-29T08:00:00Z"
TASK = {"id": "t-1", "workstream_id": "ws-1", "title": "Write copy", "description": "",
        "status": "cancelled", "assignee": None, "due": None, "created_at": TS,
        "updated_at": TS, "version": 4}  # fmt: skip
DONE = TaskStatusUpdate(status="done")


@pytest.fixture
def router() -> respx.Router:
    return respx.Router(base_url=BASE, assert_all_called=False)


@pytest.fixture
def client(router: respx.Router) -> Iterator[StateHubClient]:
    transport = httpx.MockTransport(router.handler)
    with StateHubClient(BASE, transport=transport, sleep=lambda _: None) as made:
        yield made


def test_if_match_is_sent_quoted(router: respx.Router, client: StateHubClient) -> None:
    route = router.patch("/tasks/t-1").respond(200, json={**TASK, "status": "done", "version": 5})
    written = client.update_task_status("t-1", DONE, idempotency_key="k", if_match=4)
    assert route.calls.last.request.headers["If-Match"] == '"4"'
    assert (written.resource.version, written.resource.status) == (5, "done")


def test_without_if_match_no_header_is_sent(router: respx.Router, client: StateHubClient) -> None:
    route = router.patch("/tasks/t-1").respond(200, json=TASK)
    client.update_task_status("t-1", DONE, idempotency_key="k")
    assert "If-Match" not in route.calls.last.request.headers


def test_a_v1_task_has_no_version() -> None:
    assert Task.model_validate({k: v for k, v in TASK.items() if k != "version"}).version is None


def test_412_raises_precondition_failed_with_the_current_task(
    router: respx.Router, client: StateHubClient
) -> None:
    body = {"detail": "task 't-1' is at version 4", "code": "precondition_failed", "current": TASK}
    route = router.patch("/tasks/t-1").respond(412, json=body)
    with pytest.raises(HubPreconditionFailed) as caught:
        client.update_task_status("t-1", DONE, idempotency_key="k", if_match=3)
    err = caught.value
    assert isinstance(err, HubRequestError) and err.exit_code == 3
    assert (err.status, err.code) == (412, "precondition_failed")
    assert err.current is not None and (err.current.status, err.current.version) == ("cancelled", 4)
    assert route.call_count == 1  # a 412 is an answer, not a failure to retry


@pytest.mark.parametrize(
    "answer",
    [{"detail": "stale", "code": "precondition_failed"},
     {"detail": "stale", "code": "precondition_failed", "current": {"id": 3}},
     "<html>proxy said 412</html>"],
    ids=["no-current", "bad-current", "not-json"],
)  # fmt: skip
def test_412_without_a_readable_task_still_raises_with_current_none(
    router: respx.Router, client: StateHubClient, answer: object
) -> None:
    if isinstance(answer, str):
        router.patch("/tasks/t-1").respond(412, text=answer)
    else:
        router.patch("/tasks/t-1").respond(412, json=answer)
    with pytest.raises(HubPreconditionFailed) as caught:
        client.update_task_status("t-1", DONE, idempotency_key="k", if_match=3)
    assert caught.value.current is None and caught.value.status == 412


@pytest.mark.parametrize("bad", [0, -1, True, "3", 2.0])
def test_if_match_must_be_a_version(
    router: respx.Router, client: StateHubClient, bad: object
) -> None:
    route = router.patch("/tasks/t-1").respond(200, json=TASK)
    with pytest.raises(ValueError, match="if_match"):
        client.update_task_status("t-1", DONE, idempotency_key="k", if_match=bad)  # type: ignore[arg-type]
    assert route.call_count == 0


def test_against_the_reference_hub(tmp_path: Path) -> None:
    db = tmp_path / "hub.sqlite3"
    load_seed(db, demo_dataset(datetime.now(UTC)))
    with ReferenceHub(db) as hub, StateHubClient(hub.url, sleep=lambda _: None) as client:
        seen = client.get_task("web-t-03")
        assert seen.version == 1
        other = client.update_task_status(
            "web-t-03", TaskStatusUpdate(status="cancelled"), idempotency_key="person"
        )
        assert other.resource.version == 2
        with pytest.raises(HubPreconditionFailed) as caught:
            client.update_task_status("web-t-03", DONE, idempotency_key="run", if_match=1)
        assert caught.value.current == client.get_task("web-t-03")
        assert client.get_task("web-t-03").status == "cancelled"
        written = client.update_task_status("web-t-03", DONE, idempotency_key="run", if_match=2)
        assert (written.resource.status, written.resource.version) == ("done", 3)
        replay = client.update_task_status("web-t-03", DONE, idempotency_key="run", if_match=2)
        assert replay.replayed and replay.resource == written.resource
