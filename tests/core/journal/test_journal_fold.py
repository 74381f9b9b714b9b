"""The checkpoint fold is pure: folding in chunks equals folding all at once, and a run's views
(open writes, interrupted runs and their counts, the last completed observation) read the same
from the checkpoint as from the whole journal."""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from custodian_runtime.core.fold import api as core_journal
from custodian_runtime.core.fold.checkpoint import (
    Checkpoint,
    compact,
    empty,
    fold,
    link_problems,
    own_problems,
)
from custodian_runtime.journal import verify as journal_verify
from custodian_runtime.journal.store import JournalStore
from support.journal import (
    DOMAIN,
    MemoryWriter,
    StepClock,
    write_completed_run,
    write_interrupted_run,
    write_receipt,
)


def _approval(w: MemoryWriter, run_id: str, finish: bool) -> None:
    w.append("approval_decided", {"approval_id": run_id, "decision": "approved", "by": "ann"})
    w.append("ruling", {"index": 0, "operation": "create_task", "params": {"title": "x"},
                        "fingerprint": "f" * 64, "outcome": "execute",
                        "reason": "approved"})  # fmt: skip
    w.append("authorized", {"index": 0, "operation": "create_task", "params": {"title": "x"},
                            "fingerprint": "f" * 64, "idempotency_key": f"k-{run_id}",
                            "by": "person:ann"})  # fmt: skip
    w.append("dispatched", {"index": 0, "idempotency_key": f"k-{run_id}"})
    if finish:
        write_receipt(w, 0, "t-1")


def _reconcile(w: MemoryWriter, records: list[core_journal.Record]) -> None:
    w.append("run_started", {"model_spec": "offline"})
    for p in core_journal.unfinished_items(records):
        marker = {"reconciles": p.run_id}
        w.append("reconciled", {"run_id_of_the_interrupted_run": p.run_id, "index": p.index,
                                "idempotency_key": p.idempotency_key})  # fmt: skip
        w.append("dispatched", {"index": p.index, "idempotency_key": p.idempotency_key, **marker})
        write_receipt(w, p.index, "ev-9", **marker)
    w.close_interrupted(records)  # type: ignore[attr-defined]
    w.append("finished", {"status": "skipped", "exit_code": 0, "counts": {}})


class _Writer(MemoryWriter):
    def close_interrupted(self, records: list[core_journal.Record]) -> None:
        for run_id in core_journal.interrupted_runs(records):
            if run_id != self.run_id:
                counts = core_journal.derived_counts(records, run_id)
                prev = self.records[-1]
                data = {"status": "interrupted", "exit_code": None, "counts": counts}
                self.records.append(
                    core_journal.make_record(prev, run_id, DOMAIN, "finished", self.clock(), data)
                )


def journal_of(kinds: list[int]) -> list[core_journal.Record]:
    """A journal of runs: 0 completed, 1 killed, 2 reconciling, 3 approval, 4 killed approval."""
    records: list[core_journal.Record] = []
    clock = StepClock()
    for number, kind in enumerate(kinds):
        run_id = f"r{number:03d}"
        w = _Writer(records, run_id, clock)
        if kind == 0:
            write_completed_run(w, run_id, state_digest=f"{number:064d}")
        elif kind == 1:
            write_interrupted_run(w, run_id, dispatched=number % 2 == 0)
        elif kind == 2:
            _reconcile(w, records)
        else:
            _approval(w, f"approval-{run_id}", finish=kind == 3)
    return records


def views(records: list[core_journal.Record]) -> dict[str, Any]:
    """Everything a run reads from its history."""
    interrupted = core_journal.interrupted_runs(records)
    return {
        "unfinished": core_journal.unfinished_items(records),
        "interrupted": interrupted,
        "counts": [core_journal.derived_counts(records, r) for r in interrupted],
        "last_completed": core_journal.last_completed_observation(records),
    }


RUNS = st.lists(st.integers(min_value=0, max_value=4), min_size=1, max_size=12)


@settings(max_examples=60, deadline=None)
@given(kinds=RUNS, cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=4))
def test_folding_in_chunks_equals_folding_all_at_once(kinds: list[int], cuts: list[int]) -> None:
    records = journal_of(kinds)
    whole = fold(empty(DOMAIN), records)
    bounds = sorted({0, len(records), *(c % (len(records) + 1) for c in cuts)})
    checkpoint = empty(DOMAIN)
    for start, end in itertools.pairwise(bounds):
        checkpoint = fold(checkpoint, records[start:end])
    assert checkpoint == whole
    # It survives its file form unchanged.
    assert Checkpoint.model_validate_json(checkpoint.model_dump_json()) == whole


@settings(max_examples=60, deadline=None)
@given(kinds=RUNS)
def test_a_run_reads_the_same_from_the_checkpoint_as_from_the_whole_journal(
    kinds: list[int],
) -> None:
    records = journal_of(kinds)
    checkpoint = fold(empty(DOMAIN), records)
    assert views(list(checkpoint.records)) == views(records)
    assert (checkpoint.head.seq, checkpoint.head.hash) == (records[-1].seq, records[-1].hash)
    assert own_problems(checkpoint) == []


def test_the_checkpoint_stays_small_however_long_the_history() -> None:
    short = fold(empty(DOMAIN), journal_of([0] * 3))
    long = fold(empty(DOMAIN), journal_of([0] * 60))
    assert len(long.records) == len(short.records)
    # Custodian's own writes are kept for the rules across runs, and only for RETAIN (31 days).
    assert len(long.writes) == 60 and len(short.writes) == 3
    without = long.model_copy(update={"writes": ()})
    assert len(without.model_dump_json()) < len(short.model_dump_json()) + 200


def test_an_open_write_keeps_the_records_that_prove_it_until_it_closes() -> None:
    records = journal_of([0, 1])
    kept = compact(records)
    authorized = [r for r in kept if r.kind == "authorized"]
    assert [r.run_id for r in authorized] == ["r001"]
    assert any(r.kind == "ruling" and r.run_id == "r001" for r in kept)
    closed = compact(journal_of([0, 1, 2, 0]))
    assert core_journal.unfinished_items(list(closed)) == []
    assert not any(r.run_id == "r001" and r.kind == "authorized" for r in closed)


def test_link_problems_name_a_tail_that_does_not_continue_the_head() -> None:
    records = journal_of([0, 0])
    checkpoint = fold(empty(DOMAIN), records[:14])
    assert link_problems(checkpoint.head, records[14:], DOMAIN) == []
    skipped = link_problems(checkpoint.head, records[15:], DOMAIN)
    assert "seq 16 follows record 14, expected 15" in str(skipped[0])
    forged = records[14].model_copy(update={"data": {"forged": True}})
    assert "hash mismatch" in str(link_problems(checkpoint.head, [forged], DOMAIN)[-1])


def test_a_checkpoint_with_an_edited_record_is_not_trusted() -> None:
    checkpoint = fold(empty(DOMAIN), journal_of([0, 1]))
    edited = [r.model_copy(update={"data": {}}) if r.kind == "authorized" else r
              for r in checkpoint.records]  # fmt: skip
    broken = checkpoint.model_copy(update={"records": tuple(edited)})
    assert any("hash mismatch" in p for p in own_problems(broken))


def _tamper(records: list[core_journal.Record], at: int) -> list[core_journal.Record]:
    """The journal with record `at` changed after it was written (its hash no longer fits)."""
    changed = records[at].model_copy(update={"data": {**records[at].data, "edited": True}})
    return [*records[:at], changed, *records[at + 1 :]]


@settings(max_examples=30, deadline=None)
@given(kinds=RUNS, window=st.integers(min_value=1, max_value=40), at=st.integers(min_value=0))
def test_verifying_window_by_window_finds_what_a_whole_replay_finds(
    tmp_path_factory: Any, kinds: list[int], window: int, at: int
) -> None:
    records = journal_of(kinds)
    if at % 3 == 0:
        records = _tamper(records, at % len(records))
    memory = tmp_path_factory.mktemp("memory")
    store = JournalStore(memory)
    store.path(DOMAIN).parent.mkdir(parents=True)
    store.path(DOMAIN).write_text("".join(r.line() + "\n" for r in records), encoding="utf-8")
    whole = core_journal.replay_problems(records)
    original = journal_verify.WINDOW
    journal_verify.WINDOW = window
    try:
        report = journal_verify.verify_domain(store.layout(DOMAIN))
    finally:
        journal_verify.WINDOW = original
    assert report.problem_lines() == whole
    assert [s.brief() for s in report.summaries] == [
        s.brief() for s in core_journal.run_summaries(records)
    ]
