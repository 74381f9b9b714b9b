"""The pure journal: record building, the hash chain, the authority spine and run views.

The scenario builders it writes runs with are in support/journal.py, which the store, lock and
inspect tests build journals on disk with.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from custodian_runtime.core.digest import canonical_json, sha256_hex
from custodian_runtime.core.fold import api as core_journal
from custodian_runtime.core.journal.kinds import RulingRecord, read_as
from support.journal import (
    APPROVAL_AUTH,
    APPROVAL_RULING,
    AUTH0,
    DISP0,
    DOMAIN,
    ITEMS,
    RCPT0,
    T0,
    MemoryWriter,
    StepClock,
    build,
    completed,
    fingerprint,
    interrupted,
    key_of,
    messages,
    write_completed_run,
    write_interrupted_run,
    write_opening,
    write_reconciling_run,
)


def test_a_record_line_is_pinned() -> None:
    record = core_journal.make_record(
        None, "r1", DOMAIN, "plan", T0, {"status": "accepted", "items": 2}
    )
    assert record.line() == (
        '{"at":"2025-03-01T09:00:00.000000Z","data":{"items":2,"status":"accepted"},'
        f'"domain":"website","hash":"{record.hash}","kind":"plan","prev":"{"0" * 64}",'
        '"run_id":"r1","seq":1,"v":1}'
    )
    without_hash = record.model_dump(exclude={"hash"})
    assert record.hash == sha256_hex(canonical_json(without_hash))


def test_make_record_takes_seq_and_prev_from_the_previous_record() -> None:
    first = core_journal.make_record(None, "r1", DOMAIN, "run_started", T0, {})
    second = core_journal.make_record(first, "r1", DOMAIN, "finished", T0, {"counts": (1, 2)})
    assert (first.seq, first.prev) == (1, core_journal.GENESIS)
    assert (second.seq, second.prev) == (2, first.hash)
    assert second.data == {"counts": [1, 2]}  # plain JSON, so it hashes the same when read back
    assert core_journal.Record.model_validate(json.loads(second.line())) == second


def test_make_record_refuses_naive_times_unknown_kinds_and_mixed_domains() -> None:
    first = core_journal.make_record(None, "r1", DOMAIN, "run_started", T0, {})
    for call in (
        lambda: core_journal.make_record(
            None, "r1", DOMAIN, "run_started", datetime(2025, 3, 1), {}
        ),
        lambda: core_journal.make_record(None, "r1", DOMAIN, "launch_missiles", T0, {}),
        lambda: core_journal.make_record(first, "r1", "platform", "finished", T0, {}),
    ):
        try:
            call()
        except ValueError:
            continue
        raise AssertionError("make_record accepted bad input")


def test_a_realistic_run_verifies_clean() -> None:
    records = build(("r1", completed), ("r2", completed))
    assert [r.seq for r in records] == list(range(1, 29))
    assert core_journal.verify_chain(records) == []
    assert core_journal.verify_spine(records) == []


def test_a_changed_past_record_is_named_exactly() -> None:
    records = build(("r1", completed), ("r2", completed))
    ruling = records[7]
    forged = ruling.model_copy(update={"data": {**ruling.data, "outcome": "execute"}})
    records[7] = forged
    assert messages(core_journal.verify_chain(records)) == [
        "record 8 (ruling, run r1): hash mismatch (the record was changed after it was written)"
    ]


def test_a_rehashed_forgery_breaks_the_next_link() -> None:
    records = build(("r1", completed))
    fields = records[7].model_dump()
    fields["data"] = {**fields["data"], "reason": "forged"}
    fields["hash"] = core_journal.record_hash(fields)
    records[7] = core_journal.Record(**fields)
    assert messages(core_journal.verify_chain(records)) == [
        "record 9 (authorized, run r1): prev does not match the hash of record 8"
    ]


def test_a_deleted_record_breaks_seq_and_prev() -> None:
    records = build(("r1", completed))
    del records[9]
    assert messages(core_journal.verify_chain(records)) == [
        "record 11 (receipt, run r1): seq 11 follows record 9, expected 10",
        "record 11 (receipt, run r1): prev does not match the hash of record 9",
    ]


# --- the authority spine ----------------------------------------------------------------------


def test_an_interrupted_last_run_leaves_an_unfinished_item() -> None:
    records = build(("r1", completed), ("r2", interrupted))
    authorized = next(r for r in records if r.kind == "authorized" and r.run_id == "r2")
    assert messages(core_journal.verify_spine(records)) == [
        f"record {authorized.seq} (authorized, run r2): no receipt, failed or stale record "
        "and no later reconciliation (unfinished)"
    ]
    assert core_journal.unfinished_items(records) == [
        core_journal.PendingWrite(
            run_id="r2", index=0, operation="add_progress_event", params=dict(ITEMS[0][2]),
            idempotency_key=key_of("r2", 0), fingerprint=fingerprint(0),
            authorized_seq=authorized.seq, dispatched=True, authorized_at=authorized.at,
            ruling=read_as(
                next(r for r in records if r.kind == "ruling" and r.run_id == "r2"), RulingRecord
            ),
        )
    ]  # fmt: skip
    assert core_journal.interrupted_runs(records) == ["r2"]


def test_a_reconciling_run_closes_the_item_and_the_interrupted_run() -> None:
    records = build(("r1", completed), ("r2", interrupted))
    pending = core_journal.unfinished_items(records)
    clock = StepClock(T0 + timedelta(hours=1))
    w = MemoryWriter(records, "r3", clock)
    write_reconciling_run(w, pending)
    # Without a finished record for r2, the later run leaves r2 open.
    assert any(
        "run has no finished record" in m for m in messages(core_journal.verify_spine(records))
    )
    finished = {
        "status": "interrupted",
        "exit_code": None,
        "counts": core_journal.derived_counts(records, "r2"),
    }
    MemoryWriter(records, "r2", clock).append("finished", finished)
    assert core_journal.verify_chain(records) == []
    assert core_journal.verify_spine(records) == []
    assert core_journal.unfinished_items(records) == []


def test_a_reconciliation_without_a_receipt_is_still_unfinished() -> None:
    records = build(("r1", interrupted))
    w = MemoryWriter(records, "r2", StepClock(T0 + timedelta(hours=1)))
    w.append("reconciled", {
        "run_id_of_the_interrupted_run": "r1", "index": 0, "idempotency_key": key_of("r1", 0),
    })  # fmt: skip
    problems = messages(core_journal.verify_spine(records))
    assert any("reconciled by run r2 but still has no receipt" in m for m in problems)
    assert [p.run_id for p in core_journal.unfinished_items(records)] == ["r1"]


def _spine_of(*steps: tuple[str, dict[str, Any]]) -> list[str]:
    records: list[core_journal.Record] = []
    w = MemoryWriter(records, "r1", StepClock())
    write_opening(w)
    for kind, data in steps:
        w.append(kind, data)
    w.append("finished", {"status": "completed", "exit_code": 0, "counts": {}})
    return [m.split(": ", 1)[1] for m in messages(core_journal.verify_spine(records))]


def test_a_denied_ruling_has_no_authorized_record() -> None:
    auth = {**AUTH0, "index": 2, "fingerprint": fingerprint(2)}
    disp, rcpt = {**DISP0, "index": 2}, {**RCPT0, "index": 2}
    assert _spine_of(("authorized", auth), ("dispatched", disp), ("receipt", rcpt)) == [
        "authorized although the ruling at website:8 says deny"
    ]


def test_no_dispatch_or_receipt_without_authorization() -> None:
    assert _spine_of(("dispatched", DISP0), ("receipt", RCPT0)) == [
        "dispatched without an authorized record for item #0",
        "receipt without an authorized record for item #0",
    ]


def test_each_authorized_write_gets_one_dispatch_then_one_receipt_with_its_key() -> None:
    assert _spine_of(("authorized", AUTH0), ("receipt", RCPT0)) == [
        "receipt without a dispatched record before it in this run"
    ]
    wrong_key = {**DISP0, "idempotency_key": "other"}
    assert _spine_of(("authorized", AUTH0), ("dispatched", wrong_key), ("receipt", RCPT0)) == [
        "idempotency key differs from the authorized record at website:9"
    ]
    twice = _spine_of(
        ("authorized", AUTH0), ("dispatched", DISP0), ("receipt", RCPT0), ("receipt", RCPT0)
    )
    assert twice == ["receipt after the item was closed at website:11"]


def test_authorization_must_match_the_ruling() -> None:
    forged = {**AUTH0, "fingerprint": "f" * 64}
    assert _spine_of(("authorized", forged), ("dispatched", DISP0), ("receipt", RCPT0)) == [
        "fingerprint differs from the ruling at website:6"
    ]
    by_nobody = {**AUTH0, "by": "model"}
    assert _spine_of(("authorized", by_nobody), ("dispatched", DISP0), ("receipt", RCPT0)) == [
        "unknown authority 'model' (expected 'policy', 'person:<name>' or 'grant:<id>')"
    ]


def test_a_write_authorized_under_a_grant_needs_its_grant_used_record() -> None:
    granted = {**AUTH0, "by": "grant:grant-0123456789ab"}
    assert _spine_of(("authorized", granted), ("dispatched", DISP0), ("receipt", RCPT0)) == [
        "authorized by grant:grant-0123456789ab without a grant_used record for it"
    ]
    used = {"grant_id": "grant-0123456789ab", "index": 0, "operation": "x", "fingerprint": "y"}
    steps = (
        ("grant_used", used),
        ("authorized", granted),
        ("dispatched", DISP0),
        ("receipt", RCPT0),
    )
    # A grant the domain's journal does not record is refused.
    assert _spine_of(*steps) == [
        "uses grant grant-0123456789ab, which the domain's journal does not record (no "
        "grant_issued before it): a grant the journal does not record is refused"
    ]
    whole = {
        "id": "grant-0123456789ab", "domain": "website", "operation": "x", "max_uses": 1,
        "expires_at": "2026-05-02T00:00:00Z", "by": "ana", "reason": "r", "hub_id": "h",
        "issued_at": "2026-05-01T00:00:00Z",
    }  # fmt: skip
    assert _spine_of(("grant_issued", {"grant": whole}), *steps) == []
    elsewhere = {"grant": {**whole, "domain": "platform"}}
    assert len(_spine_of(("grant_issued", elsewhere), *steps)) == 1
    # A grant that is not whole is damage, named as such.
    [broken] = _spine_of(("grant_issued", {"grant": {"id": "grant-0123456789ab"}}), *steps)[:1]
    assert "(grant_issued) does not decode as a person's mode or grant" in broken


def test_a_queued_record_needs_a_queue_ruling() -> None:
    assert _spine_of(("queued", {"index": 0, "approval_id": "apr-1", "fingerprint": "x"})) == [
        "queued item #0 has no queue ruling in this run"
    ]


def test_run_structure_records_after_finished_and_missing_run_started() -> None:
    records = build(("r1", completed))
    w = MemoryWriter(records, "r1", StepClock(T0 + timedelta(hours=1)))
    w.append("note_written", {"path": "late.md", "sha256": "0" * 64})
    MemoryWriter(records, "r2", StepClock(T0 + timedelta(hours=2))).append("plan", {})
    assert messages(core_journal.verify_spine(records)) == [
        "record 15 (note_written, run r1): record after the run finished at website:14",
        "record 16 (plan, run r2): run begins without a run_started record",
    ]


def test_an_approval_run_authorizes_by_person() -> None:
    records = build(("r1", completed))
    w = MemoryWriter(records, "approval-apr-7", StepClock(T0 + timedelta(hours=1)))
    decided = {"approval_id": "apr-7", "decision": "approved", "by": "ana", "reason": None}
    w.append("approval_decided", decided)
    w.append("ruling", APPROVAL_RULING)
    w.append("authorized", APPROVAL_AUTH)
    w.append("dispatched", DISP0)
    w.append("receipt", RCPT0)
    assert core_journal.verify_spine(records) == []
    records[14] = core_journal.make_record(
        records[13],
        "approval-apr-7",
        DOMAIN,
        "approval_decided",
        T0,
        {**decided, "decision": "stale"},
    )
    assert "without an approved approval_decided" in messages(core_journal.verify_spine(records))[0]


def test_an_approval_run_needs_its_ruling_and_an_unedited_item() -> None:
    def approval(*steps: tuple[str, dict[str, Any]]) -> list[str]:
        records = build(("r1", completed))
        w = MemoryWriter(records, "approval-apr-7", StepClock(T0 + timedelta(hours=1)))
        w.append("approval_decided", {"approval_id": "apr-7", "decision": "approved", "by": "ana"})
        for kind, data in steps:
            w.append(kind, data)
        return [m.split(": ", 1)[1] for m in messages(core_journal.verify_spine(records))]

    chain = (("dispatched", DISP0), ("receipt", RCPT0))
    assert approval(("authorized", APPROVAL_AUTH), *chain) == [
        "authorized without an earlier ruling for item #0 in this run"
    ]
    edited = {**APPROVAL_RULING, "params": {**ITEMS[0][2], "summary": "edited"}}
    assert approval(("ruling", edited), ("authorized", APPROVAL_AUTH), *chain) == [
        "the approved item was edited: its fingerprint does not match its operation and params "
        "(edited after queuing)",
        "params differ from the ruling at website:16",
    ]
    emptied = {**APPROVAL_RULING, "outcome": "deny", "precondition": {}}
    assert approval(("ruling", emptied)) == [
        "the approved item was edited: it stores no precondition, but add_progress_event has a "
        "target whose state must be checked again"
    ]
    denied = {**APPROVAL_RULING, "outcome": "deny"}
    assert approval(("ruling", denied)) == []


# --- run views -----------------------------------------------------------------------------------


def test_last_completed_observation_skips_interrupted_and_skipped_runs() -> None:
    records: list[core_journal.Record] = []
    clock = StepClock()
    write_completed_run(MemoryWriter(records, "r1", clock), "r1", state_digest="1" * 64)
    write_interrupted_run(MemoryWriter(records, "r2", clock), "r2")
    assert core_journal.last_completed_observation([]) is None
    last = core_journal.last_completed_observation(records)
    assert last is not None
    finished_at, state_digest, summary = last.finished_at, last.state_digest, last.summary
    assert state_digest == "1" * 64
    assert finished_at == core_journal.parse_at(records[13].at) and records[13].kind == "finished"
    assert summary["domain"] == DOMAIN


def test_run_summaries_and_latest_run() -> None:
    records = build(("r1", completed), ("r2", interrupted))
    summaries = core_journal.run_summaries(records)
    assert [(s.run_id, s.status, s.first_seq, s.last_seq) for s in summaries] == [
        ("r1", "completed", 1, 14),
        ("r2", "no finished record", 15, 24),
    ]
    assert summaries[0].model == "offline (offline/rules-1)"
    assert core_journal.latest_run_id(records) == "r2"
    assert core_journal.latest_run_id([]) is None


_FIELDS = st.sampled_from(["seq", "run_id", "kind", "at", "data", "prev", "domain"])


@settings(max_examples=150, deadline=None, derandomize=True)
@given(position=st.integers(min_value=0, max_value=27), field=_FIELDS, salt=st.text(min_size=1))
def test_any_change_to_any_record_is_detected(position: int, field: str, salt: str) -> None:
    records = build(("r1", completed), ("r2", completed))
    fields = records[position].model_dump()
    changed = {
        "seq": fields["seq"] + 1,
        "data": {**fields["data"], "x": salt},
        "kind": "receipt" if fields["kind"] != "receipt" else "failed",
    }.get(field, f"{fields[field]}{salt}")
    records[position] = records[position].model_copy(update={field: changed})
    problems = core_journal.verify_chain(records)
    assert problems and problems[0].seq in (fields["seq"], fields["seq"] + 1)
