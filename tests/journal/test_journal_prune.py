"""`custodian journal prune`: old segments and their snapshots go, the chain left still verifies."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from custodian_runtime.core.fold.prune import parse_keep
from custodian_runtime.journal.snapshots import ContentStore
from custodian_runtime.journal.store import JournalStore
from support.journal import DOMAIN, StepClock, write_interrupted_run
from support.runs import CliResult, run_cli

OLD = datetime.now(UTC) - timedelta(days=200)


def _skipped_run(store: JournalStore, run_id: str, clock: StepClock, snapshot: str) -> None:
    """A skipped run that observed the snapshot `snapshot`; its checkpoint saved at the end."""
    writer = store.writer(DOMAIN, run_id, clock)
    writer.append("run_started", {"model_spec": "offline", "pad": "x" * 300})
    writer.append("observed", {"state_digest": snapshot, "snapshot": snapshot})
    writer.append("finished", {"status": "skipped", "exit_code": 0, "counts": {}})
    store.commit(writer)


def _history(memory: Path) -> tuple[JournalStore, dict[str, str]]:
    """Forty old runs on one snapshot, then ten recent ones on another; small segments."""
    store = JournalStore(memory, segment_bytes=4096)
    content = ContentStore(memory, "snapshots")
    old, new = content.put(DOMAIN, '{"old":1}'), content.put(DOMAIN, '{"new":1}')
    stray = content.put(DOMAIN, '{"named by nothing":1}')
    clock = StepClock(OLD, timedelta(minutes=20))
    for n in range(40):
        _skipped_run(store, f"r{n:03d}", clock, old)
    clock.now = datetime.now(UTC) - timedelta(days=2)
    for n in range(40, 50):
        _skipped_run(store, f"r{n:03d}", clock, new)
    return store, {"old": old, "new": new, "stray": stray}


def _prune(memory: Path, monkeypatch: pytest.MonkeyPatch, keep: str = "31d") -> CliResult:
    argv = ["journal", "prune", "--domain", DOMAIN, "--keep", keep, "--memory", str(memory)]
    return run_cli(argv, memory.parent, monkeypatch)


def _inspect(memory: Path, monkeypatch: pytest.MonkeyPatch) -> CliResult:
    argv = ["inspect", "--domain", DOMAIN, "--memory", str(memory)]
    return run_cli(argv, memory.parent, monkeypatch)


def test_prune_drops_old_segments_and_snapshots_and_the_rest_still_verifies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = tmp_path / "memory"
    store, digests = _history(memory)
    layout = store.layout(DOMAIN)
    before = sorted(layout.sealed_dir.glob("*.jsonl"))
    assert len(before) >= 4
    result = _prune(memory, monkeypatch)
    assert result.code == 0, result.stderr
    assert "dropped" in result.stdout and "the chain now starts after" in result.stdout
    assert len(sorted(layout.sealed_dir.glob("*.jsonl"))) < len(before)
    records = store.scan(DOMAIN).records
    assert records[0].seq > 1 and records[-1].seq == 150
    assert {f"r{n:03d}" for n in range(40, 50)} <= {r.run_id for r in records}
    assert layout.anchor.exists() and f'"seq":{records[0].seq - 1}' in layout.anchor.read_text()
    content = ContentStore(memory, "snapshots")
    kept = content.digests(DOMAIN)
    assert digests["new"] in kept and digests["stray"] not in kept
    # The chain left verifies from the anchor: inspect, a run's open and a full rebuild agree.
    inspected = _inspect(memory, monkeypatch)
    assert inspected.code == 0, inspected.stdout
    assert store.open(DOMAIN).rebuilt is None
    layout.checkpoint.unlink()
    rebuilt = store.open(DOMAIN)
    assert rebuilt.rebuilt is not None and rebuilt.head is not None and rebuilt.head.seq == 150


def test_a_deleted_old_segment_without_an_anchor_fails_inspect(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = tmp_path / "memory"
    store, _ = _history(memory)
    oldest = sorted(store.layout(DOMAIN).sealed_dir.glob("*.jsonl"))[0]
    oldest.unlink()
    inspected = _inspect(memory, monkeypatch)
    assert inspected.code == 6
    assert "follows the start of the journal" in inspected.stdout


def _files(memory: Path) -> list[str]:
    """The journal and snapshot files (the lock's own files aside)."""
    return sorted(str(p) for p in memory.rglob("*") if p.is_file() and "locks" not in p.parts)


def test_prune_refuses_to_drop_a_write_still_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = tmp_path / "memory"
    store = JournalStore(memory, segment_bytes=4096)
    clock = StepClock(OLD, timedelta(minutes=20))
    snapshot = ContentStore(memory, "snapshots").put(DOMAIN, "{}")
    for n in range(10):
        _skipped_run(store, f"r{n:03d}", clock, snapshot)
    write_interrupted_run(store.writer(DOMAIN, "killed", clock), "killed")
    for n in range(10, 30):
        _skipped_run(store, f"r{n:03d}", clock, snapshot)
    files = _files(memory)
    result = _prune(memory, monkeypatch)
    assert result.code == 2
    assert "is a write still open" in result.stderr
    assert _files(memory) == files


def test_nothing_newer_than_the_cutoff_is_pruned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = tmp_path / "memory"
    _history(memory)
    result = _prune(memory, monkeypatch, keep="400d")
    assert result.code == 0
    assert "nothing pruned (no segment is older than the cutoff)" in result.stdout


def test_keep_takes_hours_days_or_weeks() -> None:
    assert parse_keep("90d") == timedelta(days=90)
    assert parse_keep("12w") == timedelta(weeks=12)
    assert parse_keep("36h") == timedelta(hours=36)
    for bad in ("90", "0d", "-1d", "3m", "d"):
        with pytest.raises(ValueError, match=r"e\.g\. 90d"):
            parse_keep(bad)
