"""A run opens its journal from the checkpoint and the tail after it; rotation keeps the chain."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from custodian_runtime.core.fold import api as core_journal
from custodian_runtime.core.fold.checkpoint import empty, fold
from custodian_runtime.core.journal.seals import SealKey
from custodian_runtime.errors import JournalError
from custodian_runtime.journal._checkpoint import load_checkpoint
from custodian_runtime.journal.store import JournalStore
from support.journal import (
    DOMAIN,
    T0,
    StepClock,
    write_completed_run,
    write_interrupted_run,
)


def _runs(store: JournalStore, *run_ids: str, clock: StepClock | None = None) -> None:
    """Complete runs, each saving its checkpoint at the end as a run does."""
    clock = clock or StepClock()
    for run_id in run_ids:
        writer = store.writer(DOMAIN, run_id, clock)
        write_completed_run(writer, run_id)
        store.commit(writer)


def _killed(store: JournalStore, run_id: str) -> None:
    """A run killed after authorizing its write: records on disk, no checkpoint saved."""
    write_interrupted_run(store.writer(DOMAIN, run_id, StepClock(T0)), run_id)


def _every_read(store: JournalStore, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The journal lines read, by file name, while the test runs."""
    seen: list[str] = []
    import custodian_runtime.journal._checkpoint as checkpoint_module

    real = checkpoint_module.lines_from

    def spy(path: Path, offset: int = 0):  # type: ignore[no-untyped-def]
        for at, raw in real(path, offset):
            seen.append(f"{path.name}@{at}")
            yield at, raw

    monkeypatch.setattr(checkpoint_module, "lines_from", spy)
    return seen


def test_a_run_after_a_killed_run_reads_the_checkpoint_and_only_the_tail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = JournalStore(tmp_path)
    _runs(store, "r1", "r2", "r3")
    _killed(store, "r4")
    seen = _every_read(store, monkeypatch)
    opened = store.open(DOMAIN)
    assert opened.rebuilt is None and opened.tail == 10
    assert len(seen) == 10  # the killed run's lines, not the 42 before them
    pending = core_journal.unfinished_items(opened.history)
    assert [(p.run_id, p.index, p.dispatched) for p in pending] == [("r4", 0, True)]
    assert core_journal.interrupted_runs(opened.history) == ["r4"]
    whole = store.read(DOMAIN).records
    assert core_journal.unfinished_items(list(whole)) == pending
    assert opened.checkpoint == fold(empty(DOMAIN), whole)


def test_a_missing_checkpoint_costs_one_full_scan_that_rebuilds_it(tmp_path: Path) -> None:
    store = JournalStore(tmp_path)
    _runs(store, "r1", "r2")
    saved, _ = load_checkpoint(store.layout(DOMAIN))
    store.layout(DOMAIN).checkpoint.unlink()
    opened = store.open(DOMAIN)
    assert opened.rebuilt == "no checkpoint" and opened.head is not None
    assert saved is not None and opened.checkpoint == saved.checkpoint
    writer = store.writer(DOMAIN, "r3", StepClock(T0), opened)
    store.commit(writer)  # nothing appended, but the rebuilt checkpoint is saved
    assert store.open(DOMAIN).rebuilt is None


def test_a_tampered_record_before_the_checkpoint_is_caught_by_inspect_not_read_by_the_run(
    tmp_path: Path,
) -> None:
    store = JournalStore(tmp_path)
    _runs(store, "r1", "r2")
    path = store.path(DOMAIN)
    lines = path.read_bytes().split(b"\n")
    lines[2] = lines[2].replace(b"You are Custodian", b"You are Kustodian")
    path.write_bytes(b"\n".join(lines))
    opened = store.open(DOMAIN)  # the run relies on the checkpoint, which was verified
    assert opened.rebuilt is None
    problems = core_journal.replay_problems(store.scan(DOMAIN).records)
    assert any("record 3 (prompt, run r1): hash mismatch" in p for p in problems)


def test_a_tampered_tail_fails_the_run_closed(tmp_path: Path) -> None:
    store = JournalStore(tmp_path)
    _runs(store, "r1")
    _killed(store, "r2")
    path = store.path(DOMAIN)
    data = path.read_bytes()
    at = data.rindex(b'"kind":"dispatched"')
    forged = data[:at] + data[at:].replace(b'"kind":"dispatched"', b'"kind":"dispatcheD"', 1)
    path.write_bytes(forged)
    with pytest.raises(JournalError, match=r"does not verify \(record 24 \(dispatcheD, run r2"):
        store.open(DOMAIN)


def test_a_truncated_journal_fails_closed(tmp_path: Path) -> None:
    store = JournalStore(tmp_path)
    _runs(store, "r1", "r2")
    path = store.path(DOMAIN)
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:20]))  # a whole-line cut: the chain alone looks fine
    with pytest.raises(JournalError, match="ends at record 20, but its checkpoint saw record 28"):
        store.open(DOMAIN)


def test_a_rewritten_head_fails_closed(tmp_path: Path) -> None:
    store = JournalStore(tmp_path)
    _runs(store, "r1", "r2")
    path = store.path(DOMAIN)
    data = path.read_bytes()
    path.write_bytes(data[:-40] + data[-40:].replace(b'"v":1', b'"v":1 ', 1))
    with pytest.raises(JournalError):
        store.open(DOMAIN)


def test_segments_rotate_at_a_run_boundary_and_the_chain_runs_across_them(
    tmp_path: Path,
) -> None:
    store = JournalStore(tmp_path, segment_bytes=4096)
    _runs(store, *(f"r{n}" for n in range(1, 9)))
    layout = store.layout(DOMAIN)
    sealed = sorted(layout.sealed_dir.glob("*.jsonl"))
    assert len(sealed) >= 2
    records = store.read(DOMAIN).records
    assert [r.seq for r in records] == list(range(1, 8 * 14 + 1))
    assert core_journal.verify_chain(records) == [] and core_journal.verify_spine(records) == []
    for segment in sealed:  # each segment begins with a run's first record
        first = segment.read_bytes().split(b"\n", 1)[0]
        assert b'"kind":"run_started"' in first
    opened = store.open(DOMAIN)
    assert opened.rebuilt is None and opened.head is not None and opened.head.seq == 112
    layout.checkpoint.unlink()
    rebuilt = store.open(DOMAIN)
    assert rebuilt.rebuilt is not None and rebuilt.checkpoint == opened.checkpoint


def test_a_killed_run_after_a_rotation_is_still_found_in_the_tail(tmp_path: Path) -> None:
    store = JournalStore(tmp_path, segment_bytes=2048)
    _runs(store, "r1", "r2")
    _killed(store, "r3")  # rotates the active file before its run_started
    opened = store.open(DOMAIN)
    assert opened.rebuilt is None and opened.tail == 10
    assert [p.run_id for p in core_journal.unfinished_items(opened.history)] == ["r3"]


def test_a_single_file_journal_from_before_checkpoints_is_read_and_migrated(
    tmp_path: Path,
) -> None:
    store = JournalStore(tmp_path)
    clock = StepClock()
    for run_id in ("r1", "r2"):  # written without ever saving a checkpoint
        write_completed_run(store.writer(DOMAIN, run_id, clock), run_id)
    assert not store.layout(DOMAIN).checkpoint.exists()
    opened = store.open(DOMAIN)
    assert opened.rebuilt == "no checkpoint" and opened.head is not None
    writer = store.writer(DOMAIN, "r3", clock, opened)
    write_completed_run(writer, "r3")
    store.commit(writer)
    assert store.open(DOMAIN).rebuilt is None


KEY = SealKey("k" * 40)


def test_with_a_seal_key_an_edited_checkpoint_is_not_trusted_and_the_scan_decides(
    tmp_path: Path,
) -> None:
    store = JournalStore(tmp_path, seal_key=KEY)
    _runs(store, "r1")
    _killed(store, "r2")
    writer = store.writer(DOMAIN, "r3", StepClock(T0))
    store.commit(writer)  # the killed run's open write is in the sealed checkpoint now
    path = store.layout(DOMAIN).checkpoint
    saved = json.loads(path.read_text())
    assert saved["seal"] and any(r["kind"] == "authorized" for r in saved["checkpoint"]["records"])
    # Someone without the key drops the open write from the checkpoint, so no run would resend it.
    saved["checkpoint"]["records"] = [
        r for r in saved["checkpoint"]["records"] if r["run_id"] != "r2"
    ]
    path.write_text(json.dumps(saved))
    opened = store.open(DOMAIN)
    assert opened.rebuilt == "checkpoint carries no valid seal"
    assert [p.run_id for p in core_journal.unfinished_items(opened.history)] == ["r2"]
    unsealed = JournalStore(tmp_path)  # without the key the seal is not checked
    assert unsealed.open(DOMAIN).rebuilt is None


def test_with_a_seal_key_an_anchor_without_a_valid_seal_fails_closed(tmp_path: Path) -> None:
    store = JournalStore(tmp_path, seal_key=KEY)
    _runs(store, "r1")
    layout = store.layout(DOMAIN)
    layout.anchor.write_text(json.dumps({"domain": DOMAIN, "seq": 3, "hash": "0" * 64}))
    layout.checkpoint.unlink()
    with pytest.raises(JournalError, match="carries no valid seal"):
        store.open(DOMAIN)


def test_a_torn_line_after_the_checkpoint_is_set_aside_and_the_tail_before_it_kept(
    tmp_path: Path,
) -> None:
    store = JournalStore(tmp_path, clock=lambda: T0)
    _runs(store, "r1")
    _killed(store, "r2")
    path = store.path(DOMAIN)
    whole = path.read_bytes()
    path.write_bytes(whole + b'{"at":"2025-03-01T10:00:00.000000Z","da')
    read_only = store.open(DOMAIN, repair=False)
    assert read_only.torn is not None and "no trailing newline" in read_only.torn
    assert path.read_bytes() != whole  # only reported
    opened = store.open(DOMAIN)
    assert opened.tail == 10 and opened.torn is not None and "set aside to" in opened.torn
    assert path.read_bytes() == whole
    aside = tmp_path / "journal" / "website.jsonl.torn-20250301T090000000000Z"
    assert aside.read_bytes() == b'{"at":"2025-03-01T10:00:00.000000Z","da'
