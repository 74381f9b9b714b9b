"""A grant's bounds hold in the ruling, not only at issue time (issue #28), through the CLI on a
real reference hub.

A grant's issue time is the hub's, which every host shares; `grants issue` refuses on a host
whose clock and the hub's differ by more than `MAX_SKEW`. A grant that lasts more than 30 days
after its issue, or whose issue lies ahead of the ruling's clock, covers nothing and says so.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from conftest import HubClock
from custodian_hub import ReferenceHub, load_seed
from custodian_runtime.clock import simulated_clock
from custodian_runtime.core.standing.grants import (
    MAX_EXPIRY,
    MAX_SKEW,
    VOID_AHEAD,
    VOID_LONG,
    Grant,
    covering,
    skew_problem,
    state_of,
)
from custodian_runtime.journal.lock import RunLock
from custodian_runtime.journal.store import JournalStore
from support.review import Browser, review_page, review_settings
from support.runs import hub_get, small_dataset
from support.standing import Cli, note_of, status


@pytest.fixture
def hub_now() -> HubClock:
    """The hub's clock: the wall clock when the test began, moved by hand."""
    return HubClock(datetime.now(UTC))


@pytest.fixture
def hub(tmp_path: Path, hub_now: HubClock) -> Iterator[ReferenceHub]:
    """The small dataset on a hub whose clock is `hub_now`, whatever this host's clock says."""
    db = tmp_path / "hub.sqlite3"
    load_seed(db, small_dataset())
    with ReferenceHub(db, clock=hub_now) as running:
        yield running


def _hub_id(hub: ReferenceHub) -> str:
    return f"hub_id:{hub_get(hub, '/health')['hub_id']}"


def _journal(cli: Cli, kind: str, data: dict[str, Any], domain: str = "website") -> str:
    """Journal one record of a person's run as written by another (older, or broken) writer."""
    store = JournalStore(cli.memory)
    with RunLock(cli.memory, domain, run_id="person-written-by-hand"):
        writer = store.writer(domain, "person-written-by-hand", lambda: datetime.now(UTC))
        record = writer.append(kind, data)
    # No checkpoint is saved: the next reader folds this record in from the journal's tail.
    return record.ref


def _grant(hub: ReferenceHub, issued: datetime, expires: datetime, **extra: Any) -> dict[str, Any]:
    return {
        "id": "grant-00000000abcd", "domain": "website", "operation": "set_task_status",
        "where": {}, "max_uses": 5, "expires_at": expires.isoformat(), "by": "ana",
        "reason": "routine blocks", "hub_id": _hub_id(hub), "issued_at": issued.isoformat(),
        **extra,
    }  # fmt: skip


# --- issue time: the hub's clock ----------------------------------------------------------------


def test_a_host_20_days_ahead_cannot_issue_a_grant_that_is_live_40_days_later(
    cli: Cli, hub: ReferenceHub, hub_now: HubClock
) -> None:
    ahead = hub_now() + timedelta(days=20)
    with simulated_clock(lambda: ahead):
        done = cli("grants", "issue", "--domain", "website", "--operation", "set_task_status",
                   "--max", "5", "--expires", "30d", "--hub", hub.url, "--by", "ana",
                   "--reason", "routine blocks")  # fmt: skip
    assert done.code == 2, done.stdout + done.stderr
    assert "clock" in done.stderr and "5 minutes" in done.stderr, done.stderr
    assert "20 days" in done.stderr and "issue it again" in done.stderr, done.stderr
    assert done.stdout == "" and cli.grants() == []
    # 40 days later, on hub and host alike: nothing covers the item, it waits for a person.
    hub_now.advance(timedelta(days=40))
    with simulated_clock(hub_now):
        [item] = cli.run(hub.url, status("web-t-4"))["items"]
    assert item["outcome"] == "queued" and item.get("grant") is None, item
    assert hub_get(hub, "/tasks/web-t-4")["status"] == "in_progress"


@pytest.mark.parametrize(
    "off", [MAX_SKEW + timedelta(seconds=30), -MAX_SKEW - timedelta(minutes=1)]
)
def test_issue_refuses_when_the_hosts_clock_and_the_hubs_differ_past_the_skew(
    cli: Cli, hub: ReferenceHub, hub_now: HubClock, off: timedelta
) -> None:
    hub_now.advance(off)
    done = cli.refused("--max", "1", "--expires", "7d", hub_url=hub.url)
    assert "this host's clock" in done.stderr and "the hub's" in done.stderr, done.stderr
    assert "more than 5 minutes" in done.stderr and "NTP" in done.stderr, done.stderr


def test_the_grant_records_the_hubs_time_as_its_issue_and_its_expiry_from_it(
    cli: Cli, hub: ReferenceHub, hub_now: HubClock
) -> None:
    hub_now.advance(-MAX_SKEW + timedelta(seconds=20))  # behind, but within the skew
    cli.issue(hub.url, "--max", "2", "--expires", "7d")
    [listed] = cli.grants()
    issued = datetime.fromisoformat(listed["issued_at"])
    assert abs(issued - hub_now()) < timedelta(seconds=5), (issued, hub_now())
    assert datetime.fromisoformat(listed["expires_at"]) - issued == timedelta(days=7)
    assert listed["state"] == "live"


# --- in the ruling: a void grant covers nothing, and says so ------------------------------------


def test_a_grant_that_lasts_past_30_days_after_its_issue_is_void_listed_and_not_covering(
    cli: Cli, hub: ReferenceHub
) -> None:
    now = datetime.now(UTC)
    _journal(cli, "grant_issued", {"grant": _grant(hub, now, now + timedelta(days=31))})
    [listed] = cli.grants()
    assert listed["state"] == "void: expires more than 30 days after issue", listed
    text = cli.ok("grants", "list", "--domain", "website").stdout
    assert "grant-00000000abcd void: expires more than 30 days after issue website" in text, text
    summary = cli.run(hub.url, status("web-t-4"))
    [item] = summary["items"]
    assert item["outcome"] == "queued" and item.get("grant") is None, item
    said = "grant-00000000abcd did not cover it: void: expires more than 30 days after issue"
    assert said in item["reason"], item["reason"]
    assert said in note_of(summary)
    assert hub_get(hub, "/tasks/web-t-4")["status"] == "in_progress"
    assert cli.grants()[0]["uses"] == 0


def test_a_grant_issued_ahead_of_the_rulings_clock_is_void_until_its_issue(
    cli: Cli, hub: ReferenceHub
) -> None:
    # As an older release issued it on a host whose clock ran 20 days ahead.
    ahead = datetime.now(UTC) + timedelta(days=20)
    _journal(cli, "grant_issued", {"grant": _grant(hub, ahead, ahead + timedelta(days=30))})
    assert cli.grants()[0]["state"] == "void: issued in the future"
    [item] = cli.run(hub.url, status("web-t-4"))["items"]
    assert item["outcome"] == "queued" and item.get("grant") is None, item
    assert "grant-00000000abcd did not cover it: void: issued in the future" in item["reason"]
    assert hub_get(hub, "/tasks/web-t-4")["status"] == "in_progress"


def test_a_grant_issued_within_the_skew_ahead_covers(cli: Cli, hub: ReferenceHub) -> None:
    soon = datetime.now(UTC) + MAX_SKEW - timedelta(minutes=1)
    _journal(cli, "grant_issued", {"grant": _grant(hub, soon, soon + timedelta(days=30))})
    assert cli.grants()[0]["state"] == "live"
    [item] = cli.run(hub.url, status("web-t-4"))["items"]
    assert item["outcome"] == "executed" and item["grant"] == "grant-00000000abcd", item


# --- a record of the standing that does not decode is damage ------------------------------------

BAD = {
    "policy_set": {"operation": ["set_task_status"], "mode": "ask", "by": "ana", "reason": "x"},
    "grant_issued": {"grant": ["not", "a", "grant"]},
    "grant_issued-field": {"grant": {"id": "grant-00000000abcd", "max_uses": "many"}},
    "grant_revoked": {"grant_id": 7, "by": "bo", "reason": "stop"},
    "grant_used": {"grant_id": {"id": "grant-00000000abcd"}, "index": 0},
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_standing_record_that_does_not_decode_exits_6_naming_it(
    cli: Cli, hub: ReferenceHub, case: str
) -> None:
    cli.issue(hub.url, "--max", "5", "--expires", "7d")
    ref = _journal(cli, case.split("-")[0], BAD[case])
    for argv in (
        ("grants", "list"),
        ("grants", "list", "--domain", "website"),
        ("policy", "show", "--domain", "website"),
        ("policy", "report", "--domain", "website"),
        ("inspect",),
        ("run", "--domain", "website", "--hub", hub.url, "--llm", cli.answer(
            {"observations": ["x"], "proposals": [status("web-t-4")]}), "--canon",
         str(cli.canon), "--force"),
    ):  # fmt: skip
        done = cli(*argv)
        assert done.code == 6, (argv, done.code, done.stdout, done.stderr)
        said = done.stdout + done.stderr
        assert f"journal record {ref} ({case.split('-')[0]})" in said, (argv, said)
        assert "restore the domain's journal from a backup" in said, (argv, said)
    assert hub_get(hub, "/tasks/web-t-4")["status"] == "in_progress"


# --- the review page: the same bounds, the same damage -------------------------------------------


def test_the_review_page_refuses_an_issue_past_the_skew_and_shows_a_void_grant(
    cli: Cli, hub: ReferenceHub, hub_now: HubClock, tmp_path: Path
) -> None:
    now = datetime.now(UTC)
    _journal(cli, "grant_issued", {"grant": _grant(hub, now, now + timedelta(days=31))})
    live = cli.issue(hub.url, "--max", "5", "--expires", "7d")  # its revoke form: a CSRF token
    hub_now.advance(MAX_SKEW + timedelta(minutes=5))
    with review_page(review_settings(cli.memory, hub.url, tmp_path)) as server:
        page = Browser(server)
        shown = page.get("/standing?domain=website")
        assert shown.status_code == 200 and "void: expires more than 30 days after issue" in (
            shown.text
        )
        form = {"domain": "website", "operation": "create_task", "where": "", "max": "3",
                "expires": "7d", "by": "ana", "reason": "routine", "decision": "issue"}  # fmt: skip
        refused = page.post("/standing/issue", **form)
        assert refused.status_code == 422, refused.text
        assert "more than 5 minutes" in refused.text and "NTP" in refused.text
    assert sorted(g["id"] for g in cli.grants()) == sorted(["grant-00000000abcd", live])


def test_the_review_standing_page_says_a_damaged_standing_record_not_a_500(
    cli: Cli, hub: ReferenceHub, tmp_path: Path
) -> None:
    cli.issue(hub.url, "--max", "5", "--expires", "7d")
    ref = _journal(cli, "grant_issued", {"grant": {"id": "grant-00000000abcd", "max_uses": "x"}})
    with review_page(review_settings(cli.memory, hub.url, tmp_path)) as server:
        shown = Browser(server).get("/standing?domain=website")
    assert shown.status_code == 200, shown.status_code
    assert f"journal record {ref} (grant_issued) does not decode" in shown.text, shown.text
    assert "restore the domain" in shown.text


# --- the pure rules, at their edges --------------------------------------------------------------


def _pure(issued: datetime, expires: datetime) -> Grant:
    return Grant(
        id="grant-00000000abcd", domain="website", operation="set_task_status", max_uses=1,
        expires_at=expires, by="ana", reason="r", hub_id="hub_id:h", issued_at=issued,
    )  # fmt: skip


def test_the_bounds_at_their_edges() -> None:
    now = datetime(2026, 12, 1, 9, tzinfo=UTC)
    thirty = _pure(now, now + MAX_EXPIRY)
    assert state_of(thirty, 0, now) == "live"
    assert state_of(_pure(now, now + MAX_EXPIRY + timedelta(seconds=1)), 0, now) == VOID_LONG
    assert state_of(_pure(now + MAX_SKEW, now + timedelta(days=1)), 0, now) == "live"
    ahead = _pure(now + MAX_SKEW + timedelta(seconds=1), now + timedelta(days=1))
    assert state_of(ahead, 0, now) == VOID_AHEAD
    assert state_of(ahead.model_copy(update={"revoked": True}), 0, now) == "revoked"
    cover = covering("set_task_status", {"task_id": "t"}, [ahead], {}, now, "hub_id:h")
    assert cover.grant is None and cover.void == (f"{ahead.id} did not cover it: {VOID_AHEAD}",)
    elsewhere = covering("set_task_status", {"task_id": "t"}, [ahead], {}, now, "hub_id:other")
    assert elsewhere.void == ()  # it would not have covered it anyway: nothing to say
    assert skew_problem(now, now + MAX_SKEW) is None
    assert skew_problem(now, now - MAX_SKEW) is None
    late = skew_problem(now - timedelta(hours=3, minutes=2), now)
    assert late is not None and "differ by 3 hours, more than 5 minutes" in late
    with pytest.raises(ValidationError):
        _pure(now.replace(tzinfo=None), now + timedelta(days=1))
