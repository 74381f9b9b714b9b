"""The pure rules of the revision skip, and digests computed once per observation."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from custodian_runtime.core.approvals.items import ApprovalItem, new_item
from custodian_runtime.core.contract import DomainSummary
from custodian_runtime.core.digest import (
    canonical_json,
    digest,
    sha256_hex,
    summary_digests,
    workstream_digests,
)
from custodian_runtime.core.fold import api as core_journal
from custodian_runtime.core.fold.runs import CompletedObservation
from custodian_runtime.core.skip.unchanged import (
    LocalWork,
    expiries_due,
    inputs_digest,
    not_modified_reason,
    not_modified_record,
    revision_to_ask,
    why_read,
)
from support.domaingen import NOW, generated_summary

WINDOW = timedelta(hours=24)


def _last(**changes: object) -> CompletedObservation:
    base = CompletedObservation(
        finished_at=NOW - timedelta(hours=1),
        state_digest="a" * 64,
        summary={},
        snapshot="a" * 64,
        generated_at="2026-11-29T07:00:00Z",
        run_id="r-1",
        revision=7,
        inputs_digest="i" * 64,
    )
    return base._replace(**changes)  # type: ignore[arg-type]


def test_an_unchanged_domain_with_nothing_waiting_asks_with_the_last_revision() -> None:
    assert revision_to_ask(_last(), NOW, WINDOW, LocalWork(), force=False) == 7


@pytest.mark.parametrize(
    "work",
    [
        LocalWork(open_writes=1),
        LocalWork(interrupted=1),
        LocalWork(decisions=1),
        LocalWork(expiries=1),
        LocalWork(inputs_changed=True),
    ],
)
def test_any_local_work_reads_the_domain(work: LocalWork) -> None:
    assert revision_to_ask(_last(), NOW, WINDOW, work, force=False) is None
    assert work.reason()


@pytest.mark.parametrize(
    "last",
    [
        None,
        _last(revision=None),  # a v1.1 hub, or a journal from before revisions
        _last(inputs_digest=None),
        _last(finished_at=NOW - WINDOW),  # the maximum age: look anyway
    ],
)
def test_without_a_revision_or_past_the_window_the_domain_is_read(
    last: CompletedObservation | None,
) -> None:
    assert revision_to_ask(last, NOW, WINDOW, LocalWork(), force=False) is None


def test_why_read_names_the_reason() -> None:
    assert why_read(None, NOW, WINDOW, LocalWork()) == "no completed run before this one"
    assert "v1.1 hub" in str(why_read(_last(revision=None), NOW, WINDOW, LocalWork()))
    assert "skip window" in str(why_read(_last(finished_at=NOW - WINDOW), NOW, WINDOW, LocalWork()))
    assert why_read(_last(), NOW, WINDOW, LocalWork(decisions=1)) == "1 decision(s) waiting"
    assert why_read(_last(), NOW, WINDOW, LocalWork()) is None


def test_force_always_reads() -> None:
    assert revision_to_ask(_last(), NOW, WINDOW, LocalWork(), force=True) is None


def test_the_reason_names_what_waits() -> None:
    work = LocalWork(open_writes=2, decisions=1, inputs_changed=True)
    assert work.reason() == (
        "2 open write(s), 1 decision(s) waiting, "
        "the canon, the policy, or a person's modes or grants changed"
    )
    assert LocalWork().reason() is None


def test_a_skip_says_since_which_run_and_journals_the_state_it_stands_for() -> None:
    last = _last()
    assert "unchanged since run r-1 (domain revision 7" in not_modified_reason(last, 7)
    record = not_modified_record(last, 7)
    assert record.state_digest == record.snapshot == "a" * 64
    assert record.not_modified is True and record.revision == 7


def test_expiries_due_are_those_that_fell_since_the_last_run() -> None:
    def item(days: int) -> ApprovalItem:
        return new_item(
            approval_id=f"apr-{days}",
            domain="website",
            operation="create_task",
            params={"title": "t"},
            rationale="why",
            run_id="r",
            fingerprint="f" * 64,
            precondition={},
            now=NOW,
            ttl_days=days,
        )

    since = NOW + timedelta(days=2)
    now = NOW + timedelta(days=4)
    items = [item(1), item(3), item(5)]  # expired before, between, after
    assert expiries_due(items, since, now) == 1


def test_inputs_digest_moves_with_the_canon_the_policy_the_grants_and_the_hub() -> None:
    base = inputs_digest({"constitution.md": "x"}, {"max_flags": 10})
    assert base == inputs_digest({"constitution.md": "x"}, {"max_flags": 10})
    assert base != inputs_digest({"constitution.md": "y"}, {"max_flags": 10})
    assert base != inputs_digest({"constitution.md": "x"}, {"max_flags": 11})
    assert base != inputs_digest({"constitution.md": "x"}, {"max_flags": 10}, grants=["g"])
    assert base != inputs_digest({"constitution.md": "x"}, {"max_flags": 10}, hub="http://b")


def _state_digest_as_before(summary: DomainSummary) -> str:
    """The state digest as it was computed before one dump gave it: without `generated_at`."""
    return digest(summary.model_dump(mode="json", exclude={"generated_at"}))


def _workstream_digests_as_before(summary: object) -> dict[str, str]:
    """The per-workstream digests as they were computed before: one dump per workstream."""
    result = {}
    for ws in summary.workstreams:  # type: ignore[attr-defined]
        flags = [f.model_dump(mode="json") for f in summary.open_flags if f.workstream_id == ws.id]  # type: ignore[attr-defined]
        events = [
            e.model_dump(mode="json")
            for e in summary.recent_events  # type: ignore[attr-defined]
            if e.workstream_id == ws.id
        ]
        result[ws.id] = digest(
            {"workstream": ws.model_dump(mode="json"), "flags": flags, "events": events}
        )
    return result


def test_one_dump_gives_the_same_digests_as_before() -> None:
    summary = generated_summary(300, seed=3)
    once = summary_digests(summary)
    assert once.state == _state_digest_as_before(summary) == sha256_hex(once.text)
    assert once.text == canonical_json(summary.model_dump(mode="json", exclude={"generated_at"}))
    assert once.workstreams == workstream_digests(summary) == _workstream_digests_as_before(summary)


def test_the_last_completed_observation_reads_the_new_fields_and_old_records_still() -> None:
    at = datetime(2026, 11, 29, 8, tzinfo=UTC)
    new = {
        "state_digest": "s",
        "revision": 4,
        "inputs_digest": "i",
        "workstream_digests": {"w": "d"},
    }
    old = {"state_digest": "s", "snapshot": "s", "generated_at": None, "overview": None}
    for data, expected in ((new, (4, "i", {"w": "d"})), (old, (None, None, None))):
        started = core_journal.make_record(None, "r-1", "website", "run_started", at, {})
        observed = core_journal.make_record(started, "r-1", "website", "observed", at, data)
        finished = core_journal.make_record(
            observed, "r-1", "website", "finished", at, {"status": "completed"}
        )
        last = core_journal.last_completed_observation([started, observed, finished])
        assert last is not None and last.run_id == "r-1"
        assert (last.revision, last.inputs_digest, last.workstream_digests) == expected
