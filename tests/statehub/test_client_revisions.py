"""StateHubClient and contract v1.2: `if_none_match` and `NotModified`, and the hub's identity.

Against a real reference hub on loopback, and at the transport with respx (the request that
was sent, a v1.1 hub's answers).
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
import respx

from custodian_hub import ReferenceHub
from custodian_runtime.core.contract import DomainSummary, NewFlag
from custodian_runtime.errors import HubError
from custodian_runtime.statehub import NotModified, StateHubClient

BASE = "http://hub.test"
TS = "2026-11-29T08:00:00Z"
SUMMARY = {"domain": "website", "generated_at": TS, "workstreams": [], "revision": 7}


@pytest.fixture
def router() -> respx.Router:
    return respx.Router(base_url=BASE, assert_all_called=False)


@pytest.fixture
def client(router: respx.Router) -> Iterator[StateHubClient]:
    transport = httpx.MockTransport(router.handler)
    with StateHubClient(BASE, transport=transport, sleep=lambda _: None) as made:
        yield made


def test_if_none_match_is_sent_quoted_and_a_304_is_not_modified(
    router: respx.Router, client: StateHubClient
) -> None:
    route = router.get("/domains/website/summary").respond(304, headers={"ETag": '"7"'})
    answer = client.domain_summary("website", if_none_match=7)
    assert answer == NotModified("website", 7)
    assert route.calls.last.request.headers["If-None-Match"] == '"7"'
    assert route.call_count == 1  # a 304 is an answer, never retried


def test_a_moved_domain_comes_back_as_its_summary_with_the_revision(
    router: respx.Router, client: StateHubClient
) -> None:
    router.get("/domains/website/summary").respond(200, json=SUMMARY, headers={"ETag": '"7"'})
    answer = client.domain_summary("website", if_none_match=6)
    assert isinstance(answer, DomainSummary) and answer.revision == 7


def test_without_if_none_match_no_header_is_sent_and_a_304_is_an_error(
    router: respx.Router, client: StateHubClient
) -> None:
    route = router.get("/domains/website/summary").respond(304)
    with pytest.raises(HubError, match="unexpected 304"):
        client.domain_summary("website")
    assert "If-None-Match" not in route.calls.last.request.headers


def test_a_v11_hub_ignores_if_none_match_and_its_summary_has_no_revision(
    router: respx.Router, client: StateHubClient
) -> None:
    v11 = {k: v for k, v in SUMMARY.items() if k != "revision"}
    router.get("/domains/website/summary").respond(200, json=v11)
    answer = client.domain_summary("website", if_none_match=3)
    assert isinstance(answer, DomainSummary) and answer.revision is None


@pytest.mark.parametrize("bad", [-1, True, "3"])
def test_a_bad_revision_is_refused_before_sending(client: StateHubClient, bad: object) -> None:
    with pytest.raises(ValueError, match="if_none_match"):
        client.domain_summary("website", if_none_match=bad)  # type: ignore[call-overload]


def test_the_hub_id_is_read_once_from_health(router: respx.Router, client: StateHubClient) -> None:
    route = router.get("/health").respond(
        200, json={"status": "ok", "version": "1", "hub_id": "hub-abc"}
    )
    origin = client.hub_origin()
    assert (origin.hub_id, origin.identity, origin.location) == (
        "hub-abc", "hub_id:hub-abc", BASE
    )  # fmt: skip
    assert origin.notice() is None
    assert client.hub_origin("embedded:/x/hub.sqlite3").location == "embedded:/x/hub.sqlite3"
    assert route.call_count == 1


def test_a_v11_hub_falls_back_to_its_url_and_says_so(
    router: respx.Router, client: StateHubClient
) -> None:
    router.get("/health").respond(200, json={"status": "ok", "version": "1.1"})
    origin = client.hub_origin()
    assert origin.hub_id is None and origin.identity == BASE
    notice = origin.notice()
    assert notice is not None and "no hub_id" in notice and BASE in notice


def test_a_hub_id_outside_the_pattern_is_a_bad_answer(
    router: respx.Router, client: StateHubClient
) -> None:
    router.get("/health").respond(200, json={"status": "ok", "version": "1", "hub_id": "a b/c"})
    with pytest.raises(HubError, match="not a valid Health"):
        client.hub_origin()


def test_against_a_real_hub_the_same_hub_by_two_urls_has_one_identity(
    hub: ReferenceHub,
) -> None:
    port = hub.url.rsplit(":", 1)[1]
    with (
        StateHubClient(hub.url) as by_ip,
        StateHubClient(f"http://localhost:{port}/") as by_name,
    ):
        assert by_ip.hub_origin().identity == by_name.hub_origin().identity
        assert by_ip.hub_origin().location != by_name.hub_origin().location


def test_against_a_real_hub_a_304_until_a_write_moves_the_domain(hub: ReferenceHub) -> None:
    with StateHubClient(hub.url) as client:
        first = client.domain_summary("website")
        assert first.revision is not None
        assert client.domain_summary("website", if_none_match=first.revision) == NotModified(
            "website", first.revision
        )
        flag = NewFlag(task_id="web-t-01", note="look", raised_by="test")
        client.add_flag(flag, idempotency_key="k-1")
        moved = client.domain_summary("website", if_none_match=first.revision)
        assert isinstance(moved, DomainSummary) and moved.revision == first.revision + 1
        assert len(moved.open_flags) == len(first.open_flags) + 1
