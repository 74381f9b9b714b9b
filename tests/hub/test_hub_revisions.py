"""Contract v1.2 on the reference hub: a hub_id per store, and per-domain revisions with 304.

Real hubs on loopback (and the in-process transport): the hub_id survives a restart and a copy
of the database, a new store gets a new one; every write that changes a domain moves that
domain's revision and nothing else does (reads, replays, refusals, other domains).
"""

from __future__ import annotations

import re
import shutil
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from conftest import HUB_NOW
from custodian_hub import ReferenceHub, demo_dataset, in_process, load_seed
from custodian_runtime.core import contract


@pytest.fixture
def http(hub_url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=hub_url, timeout=5.0) as client:
        yield client


def revisions(http: httpx.Client) -> dict[str, int]:
    body = http.get("/state/summary").json()
    return {entry["domain"]: entry["revision"] for entry in body["domains"]}


def hub_id_of(http: httpx.Client) -> str:
    found: str = http.get("/health").json()["hub_id"]
    return found


def test_the_hub_id_is_the_stores_and_survives_a_restart_and_a_copy(tmp_path: Path) -> None:
    db = tmp_path / "hub.sqlite3"
    load_seed(db, demo_dataset(HUB_NOW))
    with ReferenceHub(db) as hub, httpx.Client(base_url=hub.url) as http:
        first = hub_id_of(http)
        assert re.fullmatch(contract.ID_PATTERN, first)
        assert http.get("/state/summary").json()["hub_id"] == first
    shutil.copy(db, tmp_path / "restored.sqlite3")
    with ReferenceHub(db, port=0) as again, httpx.Client(base_url=again.url) as http:
        assert hub_id_of(http) == first  # another port, the same hub
    with ReferenceHub(tmp_path / "restored.sqlite3") as copy, httpx.Client(base_url=copy.url) as h:
        assert hub_id_of(h) == first
    load_seed(tmp_path / "new.sqlite3", demo_dataset(HUB_NOW))
    with ReferenceHub(tmp_path / "new.sqlite3") as fresh, httpx.Client(base_url=fresh.url) as h:
        assert hub_id_of(h) != first
    with (
        in_process(db) as transport,
        httpx.Client(base_url="http://embedded.invalid", transport=transport) as embedded,
    ):
        assert hub_id_of(embedded) == first  # in-process, the same store is the same hub


def test_seeding_is_each_domains_first_revision(http: httpx.Client) -> None:
    assert revisions(http) == {"platform": 1, "website": 1}
    response = http.get("/domains/website/summary")
    assert response.json()["revision"] == 1 and response.headers["ETag"] == '"1"'


WRITES: list[tuple[str, str, str, dict[str, Any]]] = [
    ("event", "POST", "/events",
     {"workstream_id": "web-ws-1", "event_type": "note", "summary": "s", "source": "t"}),
    ("task status", "PATCH", "/tasks/web-t-01", {"status": "in_progress"}),
    ("flag", "POST", "/flags", {"task_id": "web-t-01", "note": "n", "raised_by": "t"}),
    ("workstream", "POST", "/workstreams", {"domain": "website", "title": "New"}),
    ("task", "POST", "/tasks", {"workstream_id": "web-ws-1", "title": "New"}),
    ("decision", "POST", "/decisions", {"domain": "website", "title": "Which?"}),
]  # fmt: skip


@pytest.mark.parametrize(("what", "method", "path", "body"), WRITES, ids=[w[0] for w in WRITES])
def test_every_kind_of_write_moves_its_domains_revision_once(
    http: httpx.Client, what: str, method: str, path: str, body: dict[str, Any]
) -> None:
    before = revisions(http)
    headers = {"Idempotency-Key": f"k-{what}"}
    first = http.request(method, path, json=body, headers=headers)
    assert first.status_code in (200, 201), first.text
    after = revisions(http)
    assert after == {**before, "website": before["website"] + 1}
    replay = http.request(method, path, json=body, headers=headers)
    assert replay.headers["Idempotent-Replayed"] == "true"
    assert revisions(http) == after  # a replay changes nothing


def test_resolving_moves_the_revision_and_refusals_do_not(http: httpx.Client) -> None:
    flag = http.post("/flags", json={"task_id": "web-t-01", "note": "n", "raised_by": "t"}).json()
    decision = http.post("/decisions", json={"domain": "website", "title": "Which?"}).json()
    before = revisions(http)["website"]
    assert http.patch(f"/flags/{flag['id']}", json={"status": "resolved"}).status_code == 200
    resolve = f"/decisions/{decision['id']}/resolve"
    assert http.post(resolve, json={"resolution": "this"}).status_code == 200
    assert revisions(http)["website"] == before + 2
    refusals: list[Callable[[], httpx.Response]] = [
        lambda: http.patch(f"/flags/{flag['id']}", json={"status": "resolved"}),  # 409
        lambda: http.post(resolve, json={"resolution": "again"}),  # 409
        lambda: http.patch(
            "/tasks/web-t-01", json={"status": "done"}, headers={"If-Match": '"99"'}
        ),
        lambda: http.patch("/tasks/nope", json={"status": "done"}),  # 404
        lambda: http.post("/tasks", json={"workstream_id": "web-ws-1"}),  # 422
    ]
    for refused in refusals:
        assert refused().status_code >= 400
    for path in ("/health", "/state/summary", "/domains/website/summary", "/tasks/web-t-01"):
        http.get(path)
    assert revisions(http)["website"] == before + 2


def test_a_write_moves_only_its_own_domain(http: httpx.Client) -> None:
    before = revisions(http)
    created = http.post("/workstreams", json={"domain": "newdomain", "title": "First"})
    assert created.status_code == 201
    assert revisions(http) == {**before, "newdomain": 1}


def test_if_none_match_answers_304_without_a_body_until_the_domain_changes(
    http: httpx.Client,
) -> None:
    seen = http.get("/domains/website/summary")
    tag = seen.headers["ETag"]
    same = http.get("/domains/website/summary", headers={"If-None-Match": tag})
    assert same.status_code == 304 and same.content == b"" and same.headers["ETag"] == tag
    assert "content-type" not in same.headers
    for matching in ("*", f"W/{tag}", f'"abc", {tag}', tag.strip('"')):
        answered = http.get("/domains/website/summary", headers={"If-None-Match": matching})
        assert answered.status_code == 304, matching
    head = http.head("/domains/website/summary", headers={"If-None-Match": tag})
    assert head.status_code == 304
    other = http.get("/domains/platform/summary", headers={"If-None-Match": tag})
    assert other.status_code == 304  # platform is at revision 1 too: tags are per domain
    http.post("/flags", json={"task_id": "web-t-01", "note": "n", "raised_by": "t"})
    moved = http.get("/domains/website/summary", headers={"If-None-Match": tag})
    assert moved.status_code == 200 and moved.headers["ETag"] == f'"{moved.json()["revision"]}"'
    assert moved.json()["revision"] == int(tag.strip('"')) + 1
    assert http.get("/domains/platform/summary", headers={"If-None-Match": tag}).status_code == 304


def test_if_none_match_on_an_unknown_domain_is_404_and_a_bad_header_400(
    http: httpx.Client,
) -> None:
    unknown = http.get("/domains/nowhere/summary", headers={"If-None-Match": "*"})
    assert unknown.status_code == 404
    for bad in ("bogus", '"1', "W/1", '"a,b"'):
        refused = http.get("/domains/website/summary", headers={"If-None-Match": bad})
        assert refused.status_code == 400, bad
        assert refused.json()["code"] == "bad_request"


def test_a_304_leaves_the_connection_usable(http: httpx.Client) -> None:
    tag = http.get("/domains/website/summary").headers["ETag"]
    for _ in range(3):
        assert (
            http.get("/domains/website/summary", headers={"If-None-Match": tag}).status_code == 304
        )
        assert http.get("/health").status_code == 200


def test_a_schema_2_store_gets_a_hub_id_and_revisions_from_its_next_write(tmp_path: Path) -> None:
    db = tmp_path / "hub.sqlite3"
    load_seed(db, demo_dataset(HUB_NOW))
    conn = sqlite3.connect(db)
    conn.executescript(
        "DROP TABLE revisions; DELETE FROM meta WHERE key = 'hub_id';"
        " UPDATE meta SET value = '2' WHERE key = 'schema_version';"
    )
    conn.close()
    with ReferenceHub(db) as hub, httpx.Client(base_url=hub.url) as http:
        made = hub_id_of(http)
        assert revisions(http) == {"platform": 0, "website": 0}
        assert http.get("/domains/website/summary").headers["ETag"] == '"0"'
        http.post("/flags", json={"task_id": "web-t-01", "note": "n", "raised_by": "t"})
        assert revisions(http) == {"platform": 0, "website": 1}
    with ReferenceHub(db) as hub, httpx.Client(base_url=hub.url) as http:
        assert hub_id_of(http) == made  # made once, at the migration
    check = sqlite3.connect(db)
    assert check.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone() == ("3",)
    check.close()


def test_the_openapi_document_describes_hub_id_revision_etag_and_304(http: httpx.Client) -> None:
    doc = http.get("/openapi.json").json()
    schemas = doc["components"]["schemas"]
    assert "hub_id" in schemas["Health"]["required"]
    assert "hub_id" in schemas["StateSummary"]["required"]
    assert "revision" in schemas["DomainSummary"]["required"]
    assert "revision" in schemas["DomainOverview"]["required"]
    operation = doc["paths"]["/domains/{domain}/summary"]["get"]
    assert "If-None-Match" in [p["name"] for p in operation["parameters"]]
    assert "ETag" in operation["responses"]["200"]["headers"]
    assert "content" not in operation["responses"]["304"]
