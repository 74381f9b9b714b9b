"""The reference hub's reads over real HTTP on loopback, checked against the contract's shapes."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from custodian_hub import ReferenceHub
from custodian_runtime import __version__
from custodian_runtime.core import contract


@pytest.fixture
def http(hub_url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=hub_url, timeout=5.0) as client:
        yield client


def get_json(http: httpx.Client, path: str, **params: Any) -> Any:
    response = http.get(path, params=params)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/json"
    return response.json()


def test_health_answers_ok_the_version_and_the_hub_id(http: httpx.Client) -> None:
    body = get_json(http, "/health")
    assert body == {"status": "ok", "version": __version__, "hub_id": body["hub_id"]}
    assert re.fullmatch(contract.ID_PATTERN, body["hub_id"])


def test_the_url_is_loopback_with_the_bound_port(hub: ReferenceHub) -> None:
    assert hub.url.startswith("http://127.0.0.1:")
    assert int(hub.url.rsplit(":", 1)[1]) > 0


def test_state_summary_counts_every_domain(http: httpx.Client) -> None:
    body = get_json(http, "/state/summary")
    summary = contract.StateSummary.model_validate(body)
    assert body["generated_at"] == "2026-11-29T08:00:00Z"
    assert [d.domain for d in summary.domains] == ["platform", "website"]
    website = {d.domain: d for d in summary.domains}["website"]
    assert website.workstreams == contract.WorkstreamCounts(active=3, paused=1, done=1)
    assert sum(website.tasks.model_dump().values()) == 27
    assert website.open_flags == 2
    assert website.open_decisions == 2
    assert website.last_event_at is not None
    assert set(body["domains"][0]["tasks"]) == set(contract.TASK_STATUSES)


def test_domain_summary_nests_tasks_under_their_workstreams(http: httpx.Client) -> None:
    body = get_json(http, "/domains/website/summary")
    summary = contract.DomainSummary.model_validate(body)
    assert summary.domain == "website"
    assert {ws.domain for ws in summary.workstreams} == {"website"}
    for ws in summary.workstreams:
        assert all(task.workstream_id == ws.id for task in ws.tasks)
    assert all(d.status == "open" and d.domain == "website" for d in summary.open_decisions)
    assert all(f.status == "open" for f in summary.open_flags)
    assert len(summary.open_flags) == 2


def test_domain_summary_events_are_newest_first_and_bounded(http: httpx.Client) -> None:
    everything = get_json(http, "/domains/platform/summary")["recent_events"]
    stamps = [e["created_at"] for e in everything]
    assert stamps == sorted(stamps, reverse=True)
    three = get_json(http, "/domains/platform/summary", events=3)["recent_events"]
    assert three == everything[:3]
    assert get_json(http, "/domains/platform/summary", events=0)["recent_events"] == []


def test_domain_summary_default_is_fifty_events(http: httpx.Client) -> None:
    for i in range(55):
        event = {
            "workstream_id": "plat-ws-1",
            "event_type": "note",
            "summary": f"n{i}",
            "source": "test",
        }
        assert http.post("/events", json=event).status_code == 201
    assert len(get_json(http, "/domains/platform/summary")["recent_events"]) == 50
    assert len(get_json(http, "/domains/platform/summary", events=500)["recent_events"]) == 69


def test_get_task_returns_one_task(http: httpx.Client) -> None:
    task = contract.Task.model_validate(get_json(http, "/tasks/web-t-03"))
    assert (task.id, task.workstream_id, task.status) == ("web-t-03", "web-ws-1", "in_progress")


def test_list_events_filters_and_limits(http: httpx.Client) -> None:
    by_task = get_json(http, "/events", task_id="web-t-04")["events"]
    assert {e["task_id"] for e in by_task} == {"web-t-04"}
    assert len(by_task) == 2
    by_ws = get_json(http, "/events", workstream_id="plat-ws-1")["events"]
    assert by_ws and {e["workstream_id"] for e in by_ws} == {"plat-ws-1"}
    by_domain = get_json(http, "/events", domain="website", limit=5)["events"]
    assert len(by_domain) == 5
    assert all(e["workstream_id"].startswith("web-") for e in by_domain)
    everything = get_json(http, "/events")["events"]
    assert len(everything) == 30
    assert [e["created_at"] for e in everything] == sorted(
        (e["created_at"] for e in everything), reverse=True
    )


def test_list_flags_and_decisions_filter_by_domain_and_status(http: httpx.Client) -> None:
    flags = contract.FlagList.model_validate(get_json(http, "/flags", domain="platform"))
    assert {f.id for f in flags.flags} == {"plat-flag-1", "plat-flag-2"}
    open_flags = get_json(http, "/flags", status="open")["flags"]
    assert {f["id"] for f in open_flags} == {"web-flag-1", "web-flag-2", "plat-flag-1"}
    resolved = get_json(http, "/decisions", domain="website", status="resolved")["decisions"]
    assert [d["id"] for d in resolved] == ["web-dec-3"]
    assert resolved[0]["resolved_at"] is not None
    assert len(get_json(http, "/decisions")["decisions"]) == 6


def test_list_workstreams_filters_by_domain(http: httpx.Client) -> None:
    all_ws = contract.WorkstreamList.model_validate(get_json(http, "/workstreams"))
    assert len(all_ws.workstreams) == 9
    platform = get_json(http, "/workstreams", domain="platform")["workstreams"]
    assert [ws["id"] for ws in platform] == ["plat-ws-1", "plat-ws-2", "plat-ws-3", "plat-ws-4"]


@pytest.mark.parametrize(
    "target", ["/workstreams?domain=", "/flags?status=", "/events?task_id=", "/events?limit="]
)
def test_an_empty_filter_is_400_not_every_domain(http: httpx.Client, target: str) -> None:
    # The OpenAPI document's patterns forbid an empty value; leaving the parameter out is no filter.
    response = http.get(target)
    assert response.status_code == 400, response.text
    assert response.json()["code"] == "bad_request" and "empty" in response.json()["detail"]


@pytest.mark.parametrize(
    "target", ["/workstreams?domain=website%0A", "/events?task_id=web-t-1%0A", "/events?limit=5%0A"]
)
def test_a_value_with_a_trailing_newline_is_400(http: httpx.Client, target: str) -> None:
    # A pattern's `$` also matches before a final newline; the whole value must match.
    response = http.get(target)
    assert response.status_code == 400, response.text


def test_an_id_with_a_trailing_newline_is_refused_as_malformed(http: httpx.Client) -> None:
    task_id = get_json(http, "/domains/website/summary")["workstreams"][0]["tasks"][0]["id"]
    assert http.get(f"/tasks/{task_id}").status_code == 200
    response = http.get(f"/tasks/{task_id}%0A")
    # Refused by the path's pattern, not looked up as an id that happens to be missing.
    assert response.status_code == 404 and "no task named" in response.json()["detail"]


def test_filtering_on_an_unknown_domain_gives_an_empty_list(http: httpx.Client) -> None:
    assert get_json(http, "/flags", domain="nowhere") == {"flags": []}


def test_head_answers_like_get_without_a_body(http: httpx.Client) -> None:
    response = http.head("/health")
    assert response.status_code == 200
    assert response.content == b""
    assert int(response.headers["content-length"]) > 0


def test_openapi_document_covers_every_operation(http: httpx.Client) -> None:
    doc = get_json(http, "/openapi.json")
    assert doc["openapi"].startswith("3.1")
    operations = {(method.upper(), path) for path, item in doc["paths"].items() for method in item}
    assert operations == {
        ("GET", "/health"),
        ("GET", "/openapi.json"),
        ("GET", "/state/summary"),
        ("GET", "/domains/{domain}/summary"),
        ("GET", "/tasks/{task_id}"),
        ("GET", "/events"),
        ("GET", "/flags"),
        ("GET", "/decisions"),
        ("GET", "/workstreams"),
        ("POST", "/events"),
        ("PATCH", "/tasks/{task_id}"),
        ("POST", "/flags"),
        ("PATCH", "/flags/{flag_id}"),
        ("POST", "/workstreams"),
        ("POST", "/tasks"),
        ("POST", "/decisions"),
        ("POST", "/decisions/{decision_id}/resolve"),
    }
    schemas = doc["components"]["schemas"]
    assert schemas["NewEvent"]["additionalProperties"] is False
    assert schemas["ErrorBody"]["required"] == ["detail", "code"]
    add_event = doc["paths"]["/events"]["post"]
    assert add_event["requestBody"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/NewEvent"
    }
    assert "201" in add_event["responses"] and "422" in add_event["responses"]
    assert any(p["name"] == "Idempotency-Key" for p in add_event["parameters"])
    summary = doc["paths"]["/domains/{domain}/summary"]["get"]
    events = next(p for p in summary["parameters"] if p["name"] == "events")
    assert events["schema"]["maximum"] == 500
    assert doc["paths"]["/health"]["get"]["security"] == []
