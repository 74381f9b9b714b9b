"""An unchanged domain costs one small request: the revision skip, against a real reference hub.

Each run goes through `run()` with a transport in front of the real hub on loopback that counts
what was sent. The first run completes; the second asks only `If-None-Match` with the revision
the first one saw, unless something waits here or the hub moved.
"""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from custodian_hub import ReferenceHub, load_seed
from custodian_runtime.core.digest import workstream_digests
from custodian_runtime.core.fold import api as core_journal
from custodian_runtime.core.journal.kinds import Entry, GrantIssued, PolicySet
from custodian_runtime.core.journal.words import decision_word
from custodian_runtime.core.standing.grants import Grant
from custodian_runtime.journal.person.inbox import Inbox
from custodian_runtime.journal.person.standing_store import StandingStore
from custodian_runtime.journal.snapshots import SnapshotStore
from custodian_runtime.run import run
from custodian_runtime.run._facts import previous_digests
from custodian_runtime.run._result import RunResult
from custodian_runtime.settings import load_settings
from support.domaingen import generated_summary
from support.runs import CANON, small_dataset
from support.spine import journal, of_run, write_plan

QUIET = {"observations": ["Nothing to do."]}
EVENT = {
    "progress_events": [
        {
            "workstream_id": "web-ws-1",
            "task_id": "web-t-4",
            "event_type": "observation",
            "rests_on": ["web-t-4"],
            "summary": "CDN config verified in ev-1.",
        }
    ]
}


class Counting(httpx.BaseTransport):
    """The real hub, recording each request's method, path and If-None-Match."""

    def __init__(self, *, v11: bool = False, lose_writes: bool = False) -> None:
        self._inner = httpx.HTTPTransport()
        self.sent: list[tuple[str, str, str | None]] = []
        self._v11, self._lose_writes = v11, lose_writes

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        asked = request.headers.get("If-None-Match")
        self.sent.append((request.method, request.url.path, asked))
        if self._lose_writes and request.method != "GET":
            raise httpx.ReadTimeout("no answer", request=request)
        if self._v11 and asked is not None:
            del request.headers["If-None-Match"]  # a v1.1 hub knows no revisions
        response = self._inner.handle_request(request)
        return _as_v11(response) if self._v11 else response

    def paths(self) -> list[str]:
        """The paths asked, in order."""
        return [path for _, path, _ in self.sent]


def _as_v11(response: httpx.Response) -> httpx.Response:
    """The answer without `revision`, `hub_id` and `ETag`, as a v1.1 hub sends it."""
    body = response.read()
    if response.headers.get("content-type", "").startswith("application/json") and body:
        data = _strip(json.loads(body))
        body = json.dumps(data).encode()
    drop = ("content-length", "etag")
    headers = [(k, v) for k, v in response.headers.items() if k.lower() not in drop]
    return httpx.Response(response.status_code, headers=headers, content=body)


def _strip(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: _strip(v) for k, v in data.items() if k not in ("revision", "hub_id")}
    if isinstance(data, list):
        return [_strip(v) for v in data]
    return data


def _run_through(
    tmp_path: Path,
    hub: ReferenceHub,
    plan: dict[str, Any],
    transport: httpx.BaseTransport | None = None,
    *,
    canon: Path = CANON,
    clock: Any = None,
    force: bool = False,
    **env: str,
) -> RunResult:
    llm = write_plan(tmp_path / "answer.md", plan)
    flags = {"domain": "website", "hub": hub.url, "llm": llm, "force": force}
    flags |= {"memory": str(tmp_path / "memory"), "canon": str(canon)}
    settings = load_settings(flags, {"PATH": "/usr/bin:/bin", **env}, tmp_path)
    kwargs: dict[str, Any] = {"clock": clock} if clock is not None else {}
    with (tmp_path / "stderr").open("a") as err:
        return run(settings, transport=transport, stderr=err, **kwargs)


def _kinds(tmp_path: Path, run_id: str) -> list[str]:
    return [r.kind for r in of_run(journal(tmp_path / "memory"), run_id)]


def _first(tmp_path: Path, hub: ReferenceHub, **kwargs: Any) -> RunResult:
    first = _run_through(tmp_path, hub, QUIET, **kwargs)
    assert first.status == "completed", first.message
    return first


def _read_the_domain(counting: Counting) -> bool:
    """The run read the domain whole: the overview, and a summary not answered 304."""
    return "/state/summary" in counting.paths()


def test_an_unchanged_domain_is_skipped_with_one_conditional_request(
    tmp_path: Path, small_hub: ReferenceHub
) -> None:
    first = _first(tmp_path, small_hub)
    counting = Counting()
    second = _run_through(tmp_path, small_hub, QUIET, counting)
    assert len(counting.sent) == 1 and counting.sent[0][:2] == ("GET", "/domains/website/summary")
    assert (second.status, second.exit_code) == ("skipped", 0)
    assert f"unchanged since run {first.run_id}" in second.message
    assert second.summary()["status"] == "skipped"
    kinds = _kinds(tmp_path, second.run_id)
    assert kinds == ["run_started", "observed", "finished"]  # no prompt, no model call
    [observed] = of_run(journal(tmp_path / "memory"), second.run_id, "observed")
    assert observed.data["not_modified"] is True and isinstance(observed.data["revision"], int)
    assert "not modified" in (tmp_path / "stderr").read_text()


def test_the_revision_asked_is_the_one_the_last_completed_run_left(
    tmp_path: Path, small_hub: ReferenceHub
) -> None:
    _first(tmp_path, small_hub)
    revision = httpx.get(small_hub.url + "/domains/website/summary").json()["revision"]
    counting = Counting()
    _run_through(tmp_path, small_hub, QUIET, counting)
    assert counting.sent == [("GET", "/domains/website/summary", f'"{revision}"')]


def test_a_task_edited_on_the_hub_makes_the_run_read_and_plan(
    tmp_path: Path, small_hub: ReferenceHub
) -> None:
    _first(tmp_path, small_hub)
    httpx.patch(small_hub.url + "/tasks/web-t-3", json={"status": "in_progress"}).raise_for_status()
    counting = Counting()
    second = _run_through(tmp_path, small_hub, QUIET, counting)
    assert second.status == "completed", second.message
    assert "prompt" in _kinds(tmp_path, second.run_id)
    # The conditional read's summary is observed's first read: the summary is fetched once.
    assert counting.paths().count("/domains/website/summary") == 1
    assert _read_the_domain(counting)


def test_a_decision_waiting_makes_the_run_read_the_domain(
    tmp_path: Path, small_hub: ReferenceHub
) -> None:
    _first(tmp_path, small_hub)
    word = decision_word(
        "website", "apr-00000000-0001", "approve", "ana", None, datetime.now(UTC), "w-000000000001"
    )
    Inbox(tmp_path / "memory").append(word)
    counting = Counting()
    _run_through(tmp_path, small_hub, QUIET, counting)
    assert _read_the_domain(counting)
    assert all(asked is None for _, _, asked in counting.sent)
    assert "1 decision(s) waiting" in (tmp_path / "stderr").read_text()


def test_an_open_write_makes_the_run_read_and_settle_it(
    tmp_path: Path, small_hub: ReferenceHub
) -> None:
    _first(tmp_path, small_hub)
    lost = _run_through(
        tmp_path,
        small_hub,
        EVENT,
        Counting(lose_writes=True),
        force=True,
        STATE_HUB_MAX_ATTEMPTS="1",
    )
    assert lost.status == "partial" and lost.summary()["counts"].get("unknown") == 1
    counting = Counting()
    third = _run_through(tmp_path, small_hub, QUIET, counting)
    assert _read_the_domain(counting)
    assert ("POST", "/events", None) in counting.sent  # the open write, settled by a re-send
    assert third.reconciled and third.reconciled[0]["outcome"] == "resent"


def test_a_changed_canon_makes_the_run_plan(tmp_path: Path, small_hub: ReferenceHub) -> None:
    canon = tmp_path / "canon"
    shutil.copytree(CANON, canon)
    _first(tmp_path, small_hub, canon=canon)
    with (canon / "constitution.md").open("a", encoding="utf-8") as text:
        text.write("\nA new rule.\n")
    counting = Counting()
    second = _run_through(tmp_path, small_hub, QUIET, counting, canon=canon)
    assert second.status == "completed", second.message
    assert _read_the_domain(counting) and "prompt" in _kinds(tmp_path, second.run_id)


def test_a_changed_policy_makes_the_run_plan(tmp_path: Path, small_hub: ReferenceHub) -> None:
    _first(tmp_path, small_hub)
    counting = Counting()
    second = _run_through(tmp_path, small_hub, QUIET, counting, CUSTODIAN_MAX_FLAGS="3")
    assert second.status == "completed", second.message
    assert _read_the_domain(counting)


@pytest.mark.parametrize("kind", ["mode", "grant"])
def test_a_persons_mode_or_grant_made_since_makes_the_run_plan(
    tmp_path: Path, small_hub: ReferenceHub, kind: str
) -> None:
    _first(tmp_path, small_hub)
    store = StandingStore(tmp_path / "memory")
    if kind == "mode":
        entry: Entry = PolicySet(operation="create_task", mode="shadow", by="ana", reason="try")
    else:
        now = datetime.now(UTC)
        grant = Grant(
            id="grant-0123456789ab", domain="website", operation="create_task", max_uses=3,
            expires_at=now + timedelta(days=7), by="ana", reason="routine", hub_id="h",
            issued_at=now,
        )  # fmt: skip
        entry = GrantIssued(grant=grant.model_dump(mode="json"))
    assert store.record("website", entry) is None  # journaled at once: the domain is free
    counting = Counting()
    second = _run_through(tmp_path, small_hub, QUIET, counting)
    assert second.status == "completed", second.message
    assert _read_the_domain(counting) and "prompt" in _kinds(tmp_path, second.run_id)
    counting = Counting()
    third = _run_through(tmp_path, small_hub, QUIET, counting)  # nothing new since: skipped again
    assert third.status == "skipped", third.message
    assert not _read_the_domain(counting)


def test_past_the_maximum_age_the_run_reads_and_plans(
    tmp_path: Path, small_hub: ReferenceHub
) -> None:
    _first(tmp_path, small_hub)
    later = datetime.now(UTC) + timedelta(hours=25)
    counting = Counting()
    second = _run_through(tmp_path, small_hub, QUIET, counting, clock=lambda: later)
    assert second.status == "completed", second.message
    assert _read_the_domain(counting)
    assert all(asked is None for _, _, asked in counting.sent)


def test_the_maximum_age_is_the_skip_window_setting(
    tmp_path: Path, small_hub: ReferenceHub
) -> None:
    _first(tmp_path, small_hub)
    later = datetime.now(UTC) + timedelta(hours=3)
    counting = Counting()
    second = _run_through(
        tmp_path, small_hub, QUIET, counting, clock=lambda: later, CUSTODIAN_SKIP_WINDOW_HOURS="2"
    )
    assert second.status == "completed" and _read_the_domain(counting)


@pytest.mark.parametrize("force", [True, False])
def test_a_v11_hub_reads_as_before(tmp_path: Path, small_hub: ReferenceHub, force: bool) -> None:
    _first(tmp_path, small_hub, transport=Counting(v11=True))
    counting = Counting(v11=True)
    second = _run_through(tmp_path, small_hub, QUIET, counting, force=force)
    assert all(asked is None for _, _, asked in counting.sent)  # no conditional read
    assert _read_the_domain(counting)
    # Today's rule: skipped on an unchanged state digest, unless forced.
    assert second.status == ("completed" if force else "skipped"), second.message


def test_another_hub_at_the_same_revision_is_read_not_trusted(
    tmp_path: Path, small_hub: ReferenceHub
) -> None:
    _first(tmp_path, small_hub)
    db = tmp_path / "other.sqlite3"
    load_seed(db, small_dataset())
    with ReferenceHub(db) as other:
        counting = Counting()
        _run_through(tmp_path, other, QUIET, counting)
    assert _read_the_domain(counting)
    assert all(asked is None for _, _, asked in counting.sent)


def _completed(observed: dict[str, Any]) -> list[Any]:
    at = datetime(2026, 11, 29, 8, tzinfo=UTC)
    started = core_journal.make_record(None, "r-1", "website", "run_started", at, {})
    seen = core_journal.make_record(started, "r-1", "website", "observed", at, observed)
    return [
        started,
        seen,
        core_journal.make_record(seen, "r-1", "website", "finished", at, FINISHED),
    ]


FINISHED = {"status": "completed", "exit_code": 0, "counts": {}}


def test_the_previous_digests_come_from_the_journal_and_old_journals_from_the_snapshot(
    tmp_path: Path,
) -> None:
    summary = generated_summary(200, seed=5)
    store = SnapshotStore(tmp_path / "memory")
    expected = workstream_digests(summary)
    # A record that names the digests: no snapshot is opened (the store is empty).
    named = {"state_digest": "s" * 64, "snapshot": "s" * 64, "workstream_digests": expected}
    assert previous_digests(_completed(named), store) == expected
    # A record from before: the snapshot it names is unpacked, as it was.
    digest = store.put_summary(summary)
    old = {"state_digest": digest, "snapshot": digest, "generated_at": "2026-11-29T08:00:00Z"}
    assert previous_digests(_completed(old), store) == expected
