"""Contract v1.1 in the reference hub over real HTTP: task versions, ETag, If-Match and 412."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from custodian_hub import ReferenceHub, SeedError, load_seed
from custodian_runtime.core import contract

TASK = "/tasks/web-t-03"


@pytest.fixture
def http(hub_url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=hub_url, timeout=5.0) as client:
        yield client


def patch(http: httpx.Client, status: str, **headers: str) -> httpx.Response:
    return http.patch(TASK, json={"status": status}, headers=headers)


def test_a_seeded_task_starts_at_version_1_and_get_sends_its_etag(http: httpx.Client) -> None:
    response = http.get(TASK)
    assert response.json()["version"] == 1
    assert response.headers["ETag"] == '"1"'
    assert http.head(TASK).headers["ETag"] == '"1"'
    summary = http.get("/domains/website/summary").json()
    assert all(t["version"] == 1 for ws in summary["workstreams"] for t in ws["tasks"])


def test_every_patch_grows_the_version_by_one_and_answers_its_etag(http: httpx.Client) -> None:
    for expected, status in enumerate(("in_progress", "blocked", "done"), start=2):
        response = patch(http, status)
        assert response.status_code == 200
        assert response.json()["version"] == expected
        assert response.headers["ETag"] == f'"{expected}"'
    assert http.get(TASK).json()["version"] == 4


def test_if_match_with_the_current_version_writes(http: httpx.Client) -> None:
    response = patch(http, "done", **{"If-Match": '"1"'})
    assert response.status_code == 200, response.text
    assert (response.json()["status"], response.json()["version"]) == ("done", 2)


def test_if_match_with_another_version_is_412_with_the_current_task(http: httpx.Client) -> None:
    patch(http, "cancelled")  # someone else's change: version 2
    before = http.get(TASK).json()
    response = patch(http, "done", **{"If-Match": '"1"'})
    assert response.status_code == 412
    body = response.json()
    assert body["code"] == "precondition_failed" and "version 2" in body["detail"]
    assert body["current"] == before
    assert response.headers["ETag"] == '"2"'
    contract.PreconditionFailedBody.model_validate(body)
    assert http.get(TASK).json() == before  # nothing changed


@pytest.mark.parametrize(
    "raw", ["", '"2', '2"', "'2'", "*", '"1", "2"', 'W/"1"', '"abc"', '"' + "9" * 19 + '"']
)
def test_anything_but_one_quoted_version_is_400_and_writes_nothing(
    http: httpx.Client, raw: str
) -> None:
    response = patch(http, "done", **{"If-Match": raw})
    assert response.status_code == 400 and response.json()["code"] == "bad_request"
    assert "If-Match" in response.json()["detail"]
    assert http.get(TASK).json()["version"] == 1


def test_a_bare_version_reads_as_a_quoted_one(http: httpx.Client) -> None:
    assert patch(http, "done", **{"If-Match": "2"}).status_code == 412
    assert patch(http, "done", **{"If-Match": "1"}).json()["version"] == 2


def test_a_version_that_never_was_is_412(http: httpx.Client) -> None:
    assert patch(http, "done", **{"If-Match": '"0"'}).status_code == 412
    assert patch(http, "done", **{"If-Match": '"999999999999999999"'}).status_code == 412


def test_a_patch_without_if_match_is_unconditional(http: httpx.Client) -> None:
    patch(http, "blocked")
    response = patch(http, "done")
    assert response.status_code == 200 and response.json()["version"] == 3


def test_a_replay_answers_the_original_whatever_the_version(http: httpx.Client) -> None:
    first = patch(http, "done", **{"If-Match": '"1"', "Idempotency-Key": "k-1"})
    assert first.status_code == 200
    patch(http, "cancelled")  # version 3 now
    again = patch(http, "done", **{"If-Match": '"1"', "Idempotency-Key": "k-1"})
    assert again.status_code == 200
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json() == first.json() and again.headers["ETag"] == '"2"'
    assert http.get(TASK).json()["status"] == "cancelled"


def test_a_refused_conditional_write_does_not_burn_its_key(http: httpx.Client) -> None:
    patch(http, "blocked")
    assert patch(http, "done", **{"If-Match": '"1"', "Idempotency-Key": "k-2"}).status_code == 412
    retried = patch(http, "done", **{"If-Match": '"2"', "Idempotency-Key": "k-2"})
    assert retried.status_code == 200 and "Idempotent-Replayed" not in retried.headers


def test_a_created_task_starts_at_version_1(http: httpx.Client) -> None:
    response = http.post("/tasks", json={"workstream_id": "web-ws-1", "title": "New"})
    assert response.status_code == 201
    assert response.json()["version"] == 1 and response.headers["ETag"] == '"1"'


def test_events_and_flags_leave_the_task_version_alone(http: httpx.Client) -> None:
    http.post("/flags", json={"task_id": "web-t-03", "note": "look", "raised_by": "x"})
    event = {"workstream_id": "web-ws-1", "task_id": "web-t-03", "event_type": "note",
             "summary": "s", "source": "x"}  # fmt: skip
    http.post("/events", json=event)
    assert http.get(TASK).json()["version"] == 1


def test_a_seed_may_give_task_versions(tmp_path: Path) -> None:
    db = tmp_path / "hub.sqlite3"
    ts = "2026-01-01T00:00:00Z"
    ws = {"id": "ws", "domain": "d", "title": "W", "status": "active", "created_at": ts}
    task = {"id": "t", "workstream_id": "ws", "title": "T", "status": "todo", "created_at": ts}
    with pytest.raises(SeedError, match="version"):
        load_seed(db, {"workstreams": [ws], "tasks": [{**task, "version": 0}]})
    assert load_seed(db, {"workstreams": [ws], "tasks": [{**task, "version": 5}]})
    with ReferenceHub(db) as hub, httpx.Client(base_url=hub.url) as http:
        assert http.get("/tasks/t").headers["ETag"] == '"5"'
        assert http.patch("/tasks/t", json={"status": "done"}).json()["version"] == 6


def test_a_schema_1_database_is_migrated_with_every_task_at_version_1(tmp_path: Path) -> None:
    db = tmp_path / "hub.sqlite3"
    conn = sqlite3.connect(db)
    conn.executescript(
        """
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        INSERT INTO meta VALUES ('schema_version', '1');
        CREATE TABLE workstreams (
          seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, domain TEXT NOT NULL,
          title TEXT NOT NULL, status TEXT NOT NULL, owner TEXT, created_at TEXT NOT NULL,
          updated_at TEXT NOT NULL);
        CREATE TABLE tasks (
          seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, workstream_id TEXT NOT NULL,
          title TEXT NOT NULL, description TEXT NOT NULL, status TEXT NOT NULL, assignee TEXT,
          due TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
        INSERT INTO workstreams VALUES (1, 'ws', 'd', 'W', 'active', NULL,
          '2026-01-01T00:00:00.000000Z', '2026-01-01T00:00:00.000000Z');
        INSERT INTO tasks VALUES (1, 't', 'ws', 'T', '', 'todo', NULL, NULL,
          '2026-01-01T00:00:00.000000Z', '2026-01-01T00:00:00.000000Z');
        """
    )
    conn.close()
    with ReferenceHub(db) as hub, httpx.Client(base_url=hub.url) as http:
        assert http.get("/tasks/t").json()["version"] == 1
        conditional = http.patch("/tasks/t", json={"status": "done"}, headers={"If-Match": '"1"'})
        assert conditional.json()["version"] == 2
    with ReferenceHub(db) as hub, httpx.Client(base_url=hub.url) as http:  # opens again as is
        assert http.get("/tasks/t").json()["version"] == 2
    check = sqlite3.connect(db)
    assert check.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone() == ("3",)
    check.close()


def test_the_openapi_document_describes_version_etag_if_match_and_412(http: httpx.Client) -> None:
    doc = http.get("/openapi.json").json()
    task = doc["components"]["schemas"]["Task"]
    assert "version" in task["required"] and task["properties"]["version"]["type"] == "integer"
    operation = doc["paths"]["/tasks/{task_id}"]["patch"]
    assert "If-Match" in {p["name"] for p in operation["parameters"]}
    assert "412" in operation["responses"] and "ETag" in operation["responses"]["200"]["headers"]
    assert "ETag" in doc["paths"]["/tasks/{task_id}"]["get"]["responses"]["200"]["headers"]
