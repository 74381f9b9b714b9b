"""The tracker port without a server: which backend a URL names, the registry, and the Roundup
mapping's pure parts (ids, dates, marks, revisions)."""

from __future__ import annotations

import json

import httpx
import pytest

from custodian_runtime.core.trackers import redmine as rm
from custodian_runtime.core.trackers import roundup as rd
from custodian_runtime.core.trackers.address import STATE_HUB, TRACKERS, HubAddress, hub_address
from custodian_runtime.errors import ConfigError
from custodian_runtime.settings._load import parse_hub
from custodian_runtime.statehub.backends import REGISTRY, backend
from custodian_runtime.statehub.backends._gateway import Refused
from custodian_runtime.statehub.backends._roundup_rest import PAGE, PAGES, RoundupRest
from support.paths import REPO

DOCS = REPO / "docs" / "trackers.md"


def test_a_url_names_its_backend_and_the_http_url_it_talks_to() -> None:
    assert hub_address("http://127.0.0.1:8765") == HubAddress(STATE_HUB, "http://127.0.0.1:8765")
    assert hub_address("Roundup+https://u:p@t.example/tr") == HubAddress(
        "roundup", "https://u:p@t.example/tr"
    )
    with pytest.raises(
        ValueError,
        match=r"no tracker backend 'gitlab' \(known: http\(s\)://, roundup\+http\(s\)://, "
        r"redmine\+http\(s\)://\)",
    ):
        hub_address("gitlab+http://127.0.0.1:3000")
    assert hub_address("redmine+http://KEY@127.0.0.1:3000") == HubAddress(
        "redmine", "http://KEY@127.0.0.1:3000"
    )
    with pytest.raises(ValueError, match="not an http"):
        hub_address("roundup+ftp://127.0.0.1")


def test_the_settings_refuse_an_unknown_tracker_naming_the_known_ones() -> None:
    assert parse_hub("roundup+http://127.0.0.1:8917/tracker/", None, "flag", {}).url == (
        "roundup+http://127.0.0.1:8917/tracker"
    )
    with pytest.raises(ConfigError, match=r"no tracker backend 'gitlab'.*roundup\+http"):
        parse_hub("gitlab+http://127.0.0.1:3000", None, "flag", {})


def test_every_backend_is_registered_and_an_unknown_one_lists_the_known() -> None:
    assert set(REGISTRY) == {STATE_HUB, *TRACKERS}
    assert [backend(name).name for name in REGISTRY] == list(REGISTRY)
    network = httpx.MockTransport(lambda request: httpx.Response(204))
    assert backend(STATE_HUB).transport("http://hub", network) is network  # nothing mapped
    assert backend(STATE_HUB).stand_ins == ()
    with pytest.raises(ValueError, match="known: state-hub, roundup, redmine"):
        backend("gitlab")


def test_each_stand_in_a_backend_declares_is_named_in_docs_trackers() -> None:
    text = DOCS.read_text(encoding="utf-8")
    for name in TRACKERS:
        for stand_in in backend(name).stand_ins:
            assert f"**{stand_in.what}**" in text, stand_in.what


def test_ids_name_one_class_and_one_item() -> None:
    assert rd.contract_id(rd.TASK, "12") == "t12"
    assert rd.roundup_id(rd.TASK, "t12") == "12"
    for wrong in ("w12", "t", "t012", "t1x", "12"):
        assert rd.roundup_id(rd.TASK, wrong) is None, wrong
    assert rd.number_of({"id": "3", "link": "http://t/rest/data/workstream/3"}) == "3"
    assert rd.number_of(None) is None


def test_roundup_dates_become_rfc_3339_and_anything_else_is_refused() -> None:
    assert rd.wire_time("2026-12-07.06:45:25") == "2026-12-07T06:45:25Z"
    assert rd.wire_time("2026-12-07.06:45:25.125") == "2026-12-07T06:45:25.125Z"
    assert rd.wire_time(None) is None
    with pytest.raises(ValueError):
        rd.wire_time("yesterday")


def test_marks_keep_the_last_writes_and_are_found_by_the_whole_key() -> None:
    marks = None
    for n in range(rd.MAX_MARKS + 3):
        marks = rd.with_mark(marks, f"key-{n}", f"digest-{n}")
    kept = rd.marks_of(marks)
    assert len(kept) == rd.MAX_MARKS and kept[-1] == (
        f"key-{rd.MAX_MARKS + 2}",
        f"digest-{rd.MAX_MARKS + 2}",
    )
    assert rd.mark_digest(marks, "key-0") is None  # the oldest are dropped
    assert rd.mark_digest(marks, "key-5") == "digest-5"
    # A search by substring finds `key-1` in `key-10`'s item too: only the whole key counts.
    items = [{"id": "1", "marks": rd.with_mark(None, "key-10", "d")}]
    assert rd.marked(items, "key-1") is None and rd.marked(items, "key-10") == items[0]
    assert rd.marks_of("typed by a person") == () and rd.marks_of(json.dumps({"a": 1})) == ()


def test_a_revision_grows_with_every_item_made_and_every_change() -> None:
    ws, task = [{"version": 1.0}], [{"version": 2.0}, {"version": 1}]
    before = rd.revision(ws, task, [], [], events=3)
    assert before == 1 + 3 + 3
    assert rd.revision(ws, [{"version": 3}, {"version": 1}], [], [], events=3) == before + 1
    assert rd.revision(ws, task, [{"version": 1}], [], events=3) == before + 1
    assert rd.hub_id("http://127.0.0.1:1/tracker/") == rd.hub_id("HTTP://127.0.0.1:1/tracker")
    assert rd.hub_id("http://127.0.0.1:1/tracker") != rd.hub_id("http://127.0.0.1:1/other")


def _pages(total: int, seen: list[str]) -> httpx.MockTransport:
    """Roundup's collection answer (`{"data": {"collection": [...], "@total_size": n}}`), a page
    of `@page_size` items at `@page_index`."""

    def answer(request: httpx.Request) -> httpx.Response:
        size, index = int(request.url.params["@page_size"]), int(request.url.params["@page_index"])
        seen.append(request.url.params["@page_index"])
        first = (index - 1) * size
        ids = range(first + 1, min(first + size, total) + 1)
        collection = [{"id": str(n), "link": f"http://t/rest/data/task/{n}"} for n in ids]
        return httpx.Response(200, json={"data": {"collection": collection, "@total_size": total}})

    return httpx.MockTransport(answer)


def test_a_list_is_read_page_by_page_and_refused_past_its_bound() -> None:
    seen: list[str] = []
    rest = RoundupRest("http://t", _pages(PAGE * 2 + 1, seen))
    assert len(rest.items(rd.TASK, {})) == PAGE * 2 + 1 and seen == ["1", "2", "3"]
    too_many = RoundupRest("http://t", _pages(PAGE * PAGES + 1, []))
    with pytest.raises(Refused, match=f"more than {PAGE * PAGES} task items"):
        too_many.items(rd.TASK, {})


def test_a_trackers_hub_id_comes_from_its_own_configured_address() -> None:
    """Roundup's `GET /rest` answer: its links are built from the tracker's `web` setting."""
    root = {
        "default_version": 1,
        "supported_versions": [1],
        "links": [
            {"uri": "https://tracker.example/demo/rest", "rel": "self"},
            {"uri": "https://tracker.example/demo/rest/data", "rel": "data"},
        ],
    }
    assert rd.tracker_id(root) == rd.hub_id("https://tracker.example/demo")
    assert rd.tracker_id({"links": [{"rel": "data", "uri": "x"}]}) is None
    assert rd.tracker_id({"links": "typed by hand"}) is None


def test_redmine_notes_carry_an_events_type_source_and_mark_and_a_persons_note_is_theirs() -> None:
    text = rm.note_text("Drafted.\n\n-- not a trailer", "milestone", "ana", ("k-1", "d1"))
    assert rm.note_meta(text) == (
        "Drafted.\n\n-- not a trailer",
        {"event_type": "milestone", "source": "ana", "mark": ["k-1", "d1"]},
    )
    journal = {"id": 7, "notes": text, "created_on": "2026-12-07T07:00:00Z", "user": {"name": "A"}}
    assert rm.event(journal, "w1", "t2")["source"] == "ana"
    typed = {**journal, "notes": "Signed, at last."}
    made = rm.event(typed, "w1", None)
    assert (made["id"], made["event_type"], made["source"], made["summary"]) == (
        "e7",
        "note",
        "A",
        "Signed, at last.",
    )


def test_a_redmine_version_counts_changes_not_notes_and_marks_keep_the_last() -> None:
    issue = {"journals": [{"details": [{"name": "status_id"}], "notes": ""}, {"notes": "hi"}]}
    assert rm.version(issue) == 2
    assert rm.revision([issue, {"journals": []}]) == 2 + 1 + 1  # versions, plus one event
    data: dict[str, object] = {"owner": "ana"}
    for n in range(rm.MAX_MARKS + 2):
        data = rm.with_mark(data, f"k{n}", f"d{n}")
    assert rm.mark_digest(data, "k1") is None and rm.mark_digest(data, f"k{rm.MAX_MARKS}") == (
        f"d{rm.MAX_MARKS}"
    )
    assert data["owner"] == "ana"
    field = {"custom_fields": [{"id": 4, "value": rm.field_text(data)}]}
    assert rm.extra(field, 4)["owner"] == "ana" and rm.extra(field, 5) == {}
    with pytest.raises(ValueError, match=r"status 'Doing'.*known: New"):
        rm.status_of(rm.TASK, "Doing")
    assert rm.number_in("t", "t12") == "12" and rm.number_in("t", "w12") is None
