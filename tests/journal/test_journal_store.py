"""The journal on disk: durable appends, torn tails set aside, damage refused, fsync fatal."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from custodian_runtime.core.fold import api as core_journal
from custodian_runtime.errors import ConfigError, JournalError
from custodian_runtime.journal.store import JournalStore, parse_line
from support.journal import DOMAIN, T0, StepClock, write_completed_run, write_interrupted_run


def _journal_with_runs(memory: Path, *run_ids: str) -> JournalStore:
    store = JournalStore(memory, clock=lambda: T0)
    clock = StepClock()
    for run_id in run_ids:
        write_completed_run(store.writer(DOMAIN, run_id, clock), run_id)
    return store


def test_appends_are_visible_after_reopening(tmp_path: Path) -> None:
    _journal_with_runs(tmp_path, "r1", "r2")
    path = tmp_path / "journal" / "website.jsonl"
    raw = path.read_bytes()
    assert raw.endswith(b"\n") and raw.count(b"\n") == 28
    records = JournalStore(tmp_path).read(DOMAIN).records
    assert [r.seq for r in records] == list(range(1, 29))
    assert {r.run_id for r in records} == {"r1", "r2"}
    assert core_journal.verify_chain(records) == [] and core_journal.verify_spine(records) == []
    assert all(line == r.line() for line, r in zip(raw.decode().splitlines(), records, strict=True))


def test_a_new_writer_continues_the_chain(tmp_path: Path) -> None:
    store = _journal_with_runs(tmp_path, "r1")
    writer = store.writer(DOMAIN, "r2", StepClock(T0))
    assert writer.last is not None and writer.last.seq == 14
    record = writer.append("run_started", {"pid": 1})
    assert (record.seq, record.prev) == (15, store.read(DOMAIN).records[13].hash)


def test_a_torn_tail_is_set_aside_and_earlier_records_are_kept(tmp_path: Path) -> None:
    store = _journal_with_runs(tmp_path, "r1")
    path = store.path(DOMAIN)
    good = path.read_bytes()
    fragment = b'{"at":"2025-03-01T10:00:00.000000Z","data":{"index":0'
    path.write_bytes(good + fragment)
    result = store.read(DOMAIN)
    assert len(result.records) == 14
    assert result.torn_tail is not None and "line 15: torn tail" in result.torn_tail
    assert path.read_bytes() == good
    aside = tmp_path / "journal" / "website.jsonl.torn-20250301T090000000000Z"
    assert aside.read_bytes() == fragment
    assert result.torn_tail.endswith(aside.name)
    # The next writer continues after the last good record.
    record = store.writer(DOMAIN, "r2", StepClock(T0)).append("run_started", {})
    assert record.seq == 15
    assert core_journal.verify_chain(store.read(DOMAIN).records) == []


def test_a_bad_last_line_with_a_newline_is_torn_too(tmp_path: Path) -> None:
    store = _journal_with_runs(tmp_path, "r1")
    path = store.path(DOMAIN)
    good = path.read_bytes()
    path.write_bytes(good + b"\x00\x00\x00\n")
    path.with_name("website.jsonl.torn-20250301T090000000000Z").write_bytes(b"earlier")
    result = store.read(DOMAIN)
    assert result.torn_tail is not None and "not valid JSON" in result.torn_tail
    assert path.read_bytes() == good
    second = path.with_name("website.jsonl.torn-20250301T090000000000Z-2")
    assert second.read_bytes() == b"\x00\x00\x00\n"


def test_a_crash_at_any_byte_of_the_last_append_loses_only_that_record(tmp_path: Path) -> None:
    store = _journal_with_runs(tmp_path, "r1")
    path = store.path(DOMAIN)
    full = path.read_bytes()
    last_start = full.rstrip(b"\n").rfind(b"\n") + 1
    for cut in range(last_start, len(full) + 1, 7):
        path.write_bytes(full[:cut])
        records = store.read(DOMAIN).records
        assert len(records) == (14 if cut == len(full) else 13)
        assert path.read_bytes() == full[: last_start if cut < len(full) else len(full)]


def test_damage_in_the_middle_raises_and_is_not_repaired(tmp_path: Path) -> None:
    store = _journal_with_runs(tmp_path, "r1")
    path = store.path(DOMAIN)
    lines = path.read_bytes().split(b"\n")
    lines[4] = lines[4].replace(b'"data":', b'"data"#', 1)
    damaged = b"\n".join(lines)
    path.write_bytes(damaged)
    with pytest.raises(JournalError, match=r"damaged at line 5: not valid JSON") as caught:
        store.read(DOMAIN)
    assert caught.value.exit_code == 6
    assert path.read_bytes() == damaged
    assert list(tmp_path.joinpath("journal").iterdir()) == [path]
    scanned = store.scan(DOMAIN)
    column = lines[4].index(b"#") + 1
    assert scanned.damage == (
        f"line 5: not valid JSON (Expecting ':' delimiter at column {column})",
    )
    assert [r.seq for r in scanned.records] == [1, 2, 3, 4, *range(6, 15)]


def test_a_line_that_is_not_canonical_counts_as_edited(tmp_path: Path) -> None:
    store = _journal_with_runs(tmp_path, "r1")
    path = store.path(DOMAIN)
    lines = path.read_text("utf-8").split("\n")
    lines[2] = lines[2].replace('"kind":', '"kind": ')
    path.write_text("\n".join(lines), "utf-8")
    assert store.scan(DOMAIN).damage == (
        "line 3: not in canonical JSON form (the line was edited)",
    )


def test_read_only_access_reports_a_torn_tail_without_touching_it(tmp_path: Path) -> None:
    store = _journal_with_runs(tmp_path, "r1")
    path = store.path(DOMAIN)
    torn = path.read_bytes() + b'{"v":1'
    path.write_bytes(torn)
    for result in (store.scan(DOMAIN), store.read(DOMAIN, repair=False)):
        assert len(result.records) == 14 and result.torn_tail is not None
        assert "the next run sets it aside" in result.torn_tail
    assert path.read_bytes() == torn
    assert len(list(path.parent.iterdir())) == 1


class RecordingFsync:
    """Counts fsync calls on files and directories; fails from call number `fail_at` on."""

    def __init__(self, fail_at: int | None = None) -> None:
        self.files = 0
        self.dirs = 0
        self.fail_at = fail_at

    def __call__(self, fd: int) -> None:
        if self.fail_at is not None and self.files + self.dirs + 1 >= self.fail_at:
            raise OSError(errno.EIO, "Input/output error")
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            self.dirs += 1
        else:
            self.files += 1
        os.fsync(fd)


def test_each_append_is_fsynced_and_a_new_file_fsyncs_its_directory(tmp_path: Path) -> None:
    fsync = RecordingFsync()
    writer = JournalStore(tmp_path / "memory", fsync=fsync).writer(DOMAIN, "r1", StepClock())
    writer.append("run_started", {})
    assert (fsync.files, fsync.dirs) == (1, 3)  # memory/, journal/ and the new file's entry
    writer.append("finished", {"status": "completed"})
    assert (fsync.files, fsync.dirs) == (2, 3)


def test_an_fsync_error_is_fatal_and_never_retried(tmp_path: Path) -> None:
    fsync = RecordingFsync()
    store = JournalStore(tmp_path, fsync=fsync)
    writer = store.writer(DOMAIN, "r1", StepClock())
    writer.append("run_started", {})
    fsync.fail_at = fsync.files + fsync.dirs + 1
    with pytest.raises(JournalError, match=r"fsync failed .*Not retrying"):
        writer.append("observed", {})
    calls = fsync.files + fsync.dirs
    with pytest.raises(JournalError, match="refuses further appends after: fsync failed"):
        writer.append("finished", {})
    assert fsync.files + fsync.dirs == calls


def test_a_writer_notices_a_file_changed_behind_its_back(tmp_path: Path) -> None:
    store = JournalStore(tmp_path)
    first = store.writer(DOMAIN, "r1", StepClock())
    first.append("run_started", {})
    store.writer(DOMAIN, "r2", StepClock()).append("run_started", {})
    with pytest.raises(JournalError, match="changed under the writer"):
        first.append("observed", {})
    assert core_journal.verify_chain(store.read(DOMAIN).records) == []


def test_close_interrupted_writes_finished_for_a_killed_run(tmp_path: Path) -> None:
    store = JournalStore(tmp_path)
    clock = StepClock()
    write_interrupted_run(store.writer(DOMAIN, "r1", clock), "r1", dispatched=False)
    history = list(store.read(DOMAIN).records)
    writer = store.writer(DOMAIN, "r2", clock)
    writer.append("run_started", {})
    (closed,) = writer.close_interrupted(history)
    assert (closed.run_id, closed.kind) == ("r1", "finished")
    assert closed.data == {
        "status": "interrupted",
        "exit_code": None,
        "counts": {"executed": 0, "queued": 0, "denied": 1, "failed": 0, "stale": 0},
        "closed_by": "r2",
    }
    assert writer.close_interrupted(store.read(DOMAIN).records) == []


def test_domain_names_cannot_escape_the_journal_directory(tmp_path: Path) -> None:
    store = JournalStore(tmp_path)
    for bad in ("../etc", "a/b", "", ".hidden", "x" * 200):
        with pytest.raises(ConfigError, match="cannot name a journal file"):
            store.path(bad)
    assert store.domains() == []
    _journal_with_runs(tmp_path, "r1")
    assert store.domains() == [DOMAIN]
    assert store.find_run("r1") == DOMAIN and store.find_run("r9") is None


@settings(max_examples=300, deadline=None, derandomize=True)
@given(raw=st.binary(max_size=300))
def test_the_line_parser_never_raises(raw: bytes) -> None:
    assert isinstance(parse_line(raw), (str, core_journal.Record))
