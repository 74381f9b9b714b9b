"""The reference hub's writes over real HTTP: answers, stored effects and refusals."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import httpx
import pytest

from conftest import HubClock
from custodian_hub import ReferenceHub
from custodian_runtime.core import contract

EVENT = {
    "workstream_id": "web-ws-1",
    "task_id": "web-t-03",
    "event_type": "note",
    "summary": "Pricing grid half done.",
    "source": "custodian",
}


@pytest.fixture
def http(hub_url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=hub_url, timeout=5.0) as client:
        yield client


def assert_error(response: httpx.Response, status: int, code: str) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"detail", "code"}
    assert body["code"] == code
    assert body["detail"]
    return str(body["detail"])


def test_add_event_creates_an_event_with_a_generated_id(http: httpx.Client) -> None:
    response = http.post("/events", json=EVENT)
    assert response.status_code == 201
    event = contract.ProgressEvent.model_validate(response.json())
    assert re.fullmatch(contract.ID_PATTERN, event.id) and event.id.startswith("evt-")
    assert response.json()["created_at"] == "2026-11-29T08:00:00Z"
    listed = http.get("/events", params={"task_id": "web-t-03"}).json()["events"]
    assert listed[0] == response.json()


def test_ids_are_unique_across_writes(http: httpx.Client) -> None:
    ids = {http.post("/events", json=EVENT).json()["id"] for _ in range(5)}
    assert len(ids) == 5


def test_add_event_refuses_a_task_of_another_workstream(http: httpx.Client) -> None:
    detail = assert_error(
        http.post("/events", json={**EVENT, "task_id": "web-t-09"}), 422, "validation_error"
    )
    assert "web-ws-2" in detail
    assert len(http.get("/events", params={"task_id": "web-t-09"}).json()["events"]) == 0


def test_add_event_with_unknown_workstream_or_task_is_404(http: httpx.Client) -> None:
    assert_error(http.post("/events", json={**EVENT, "workstream_id": "nope"}), 404, "not_found")
    assert_error(http.post("/events", json={**EVENT, "task_id": "web-t-99"}), 404, "not_found")


def test_patch_task_sets_status_and_updated_at(http: httpx.Client, hub_clock: HubClock) -> None:
    hub_clock.advance(timedelta(minutes=5))
    response = http.patch("/tasks/web-t-03", json={"status": "done"})
    assert response.status_code == 200
    task = response.json()
    assert (task["status"], task["updated_at"]) == ("done", "2026-11-29T08:05:00Z")
    assert http.get("/tasks/web-t-03").json() == task
    ws = http.get("/workstreams", params={"domain": "website"}).json()["workstreams"][0]
    assert ws["updated_at"] == "2026-11-29T08:05:00Z"


def test_patch_unknown_task_is_404(http: httpx.Client) -> None:
    assert_error(http.patch("/tasks/web-t-99", json={"status": "done"}), 404, "not_found")


def test_patch_task_with_a_bad_status_is_422(http: httpx.Client) -> None:
    detail = assert_error(
        http.patch("/tasks/web-t-03", json={"status": "finished"}), 422, "validation_error"
    )
    assert "status" in detail


def test_add_flag_derives_the_workstream_from_the_task(http: httpx.Client) -> None:
    response = http.post(
        "/flags", json={"task_id": "plat-t-05", "note": "Blocked 10 days", "raised_by": "custodian"}
    )
    assert response.status_code == 201
    flag = contract.Flag.model_validate(response.json())
    assert (flag.workstream_id, flag.status, flag.resolved_at) == ("plat-ws-1", "open", None)


def test_add_flag_needs_a_target_and_a_consistent_one(http: httpx.Client) -> None:
    base = {"note": "n", "raised_by": "custodian"}
    assert_error(http.post("/flags", json=base), 422, "validation_error")
    assert_error(
        http.post("/flags", json={**base, "task_id": "plat-t-05", "workstream_id": "plat-ws-2"}),
        422,
        "validation_error",
    )
    assert_error(http.post("/flags", json={**base, "workstream_id": "zz"}), 404, "not_found")
    ws_only = http.post("/flags", json={**base, "workstream_id": "plat-ws-2"})
    assert ws_only.status_code == 201 and ws_only.json()["task_id"] is None


def test_resolve_flag_once_then_409(http: httpx.Client, hub_clock: HubClock) -> None:
    hub_clock.advance(timedelta(hours=1))
    response = http.patch("/flags/web-flag-1", json={"status": "resolved"})
    assert response.status_code == 200
    assert response.json()["resolved_at"] == "2026-11-29T09:00:00Z"
    assert_error(http.patch("/flags/web-flag-1", json={"status": "resolved"}), 409, "conflict")
    assert_error(http.patch("/flags/web-flag-9", json={"status": "resolved"}), 404, "not_found")
    assert_error(http.patch("/flags/web-flag-2", json={"status": "open"}), 422, "validation_error")


def test_create_workstream_makes_a_new_domain(http: httpx.Client) -> None:
    response = http.post("/workstreams", json={"domain": "mobile", "title": "App store launch"})
    assert response.status_code == 201
    ws = response.json()
    assert (ws["status"], ws["owner"], ws["domain"]) == ("active", None, "mobile")
    summary = http.get("/domains/mobile/summary").json()
    assert [w["id"] for w in summary["workstreams"]] == [ws["id"]]


def test_create_task_defaults_and_due_date(http: httpx.Client) -> None:
    response = http.post(
        "/tasks", json={"workstream_id": "web-ws-2", "title": "Profile cart", "due": "2026-12-24"}
    )
    assert response.status_code == 201
    task = response.json()
    assert (task["status"], task["description"], task["due"]) == ("todo", "", "2026-12-24")
    assert task["id"].startswith("task-")
    assert_error(http.post("/tasks", json={"workstream_id": "x", "title": "t"}), 404, "not_found")


def test_create_and_resolve_a_decision(http: httpx.Client) -> None:
    created = http.post(
        "/decisions",
        json={
            "domain": "platform",
            "workstream_id": "plat-ws-1",
            "title": "Which CNI?",
            "options": ["Cilium", "Calico"],
        },
    )
    assert created.status_code == 201
    decision = created.json()
    assert (decision["status"], decision["options"]) == ("open", ["Cilium", "Calico"])
    path = f"/decisions/{decision['id']}/resolve"
    resolved = http.post(path, json={"resolution": "Cilium"})
    assert resolved.status_code == 200
    assert (resolved.json()["status"], resolved.json()["resolution"]) == ("resolved", "Cilium")
    assert_error(http.post(path, json={"resolution": "Calico"}), 409, "conflict")


def test_decision_refusals(http: httpx.Client) -> None:
    assert_error(
        http.post("/decisions", json={"domain": "nowhere", "title": "t"}), 404, "not_found"
    )
    assert_error(
        http.post(
            "/decisions", json={"domain": "website", "workstream_id": "plat-ws-1", "title": "t"}
        ),
        422,
        "validation_error",
    )
    assert_error(
        http.post("/decisions/web-dec-3/resolve", json={"resolution": "again"}), 409, "conflict"
    )
    assert_error(http.post("/decisions/nope/resolve", json={"resolution": "x"}), 404, "not_found")


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ({**EVENT, "extra": 1}, "extra"),
        ({**EVENT, "workstream_id": "has space"}, "workstream_id"),
        ({**EVENT, "summary": ""}, "summary"),
        ({**EVENT, "summary": "x" * 2001}, "summary"),
        ({**EVENT, "event_type": "gossip"}, "event_type"),
        ([EVENT], "body"),
        ({k: v for k, v in EVENT.items() if k != "source"}, "source"),
    ],
)
def test_invalid_bodies_are_422_with_a_readable_detail(
    http: httpx.Client, body: Any, needle: str
) -> None:
    detail = assert_error(http.post("/events", json=body), 422, "validation_error")
    assert needle in detail
    assert len(http.get("/events").json()["events"]) == 30


@pytest.mark.parametrize("raw", [b"", b"{not json", b"\xff\xfe", b'{"a": NaN}', b'"\\ud800"'])
def test_a_body_that_is_not_json_is_400(http: httpx.Client, raw: bytes) -> None:
    response = http.post("/events", content=raw, headers={"Content-Type": "application/json"})
    assert_error(response, 400, "bad_request")


def test_a_body_larger_than_a_mebibyte_is_413(http: httpx.Client) -> None:
    response = http.post("/events", content=b"x" * (1024 * 1024 + 1))
    assert_error(response, 413, "payload_too_large")


def test_a_write_while_another_process_holds_the_database_is_503_and_writes_nothing(
    http: httpx.Client, hub: ReferenceHub
) -> None:
    holder = sqlite3.connect(hub.db_path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another writer holds the database
    try:
        refused = http.post("/events", json=EVENT, headers={"Idempotency-Key": "busy-1"})
        still_reads = http.get("/events", params={"task_id": "web-t-03"})
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert_error(refused, 503, "unavailable")
    assert refused.headers["Retry-After"] == "1"
    assert still_reads.status_code == 200  # readers are not held up (WAL)
    before = still_reads.json()["events"]
    # Nothing was written, so the same request with the same key now goes through once.
    again = http.post("/events", json=EVENT, headers={"Idempotency-Key": "busy-1"})
    assert again.status_code == 201 and again.headers.get("Idempotent-Replayed") is None
    after = http.get("/events", params={"task_id": "web-t-03"}).json()["events"]
    assert len(after) == len(before) + 1
