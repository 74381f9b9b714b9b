"""One run per domain: the lock file, stale locks broken safely, exactly one winner in a race."""

from __future__ import annotations

import json
import multiprocessing
import subprocess
import sys
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from custodian.errors import RunLocked
from custodian.memory.lock import BrokenLock, RunLock

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
HOST = "runner-1"


def _lock(memory: Path, pid: int, run_id: str = "r1", **kwargs: Any) -> RunLock:
    kwargs.setdefault("pid_alive", lambda p: True)
    kwargs.setdefault("clock", lambda: T0)
    kwargs.setdefault("host", HOST)
    return RunLock(memory, "website", run_id=run_id, pid=pid, **kwargs)


def _write_lock(memory: Path, **holder: Any) -> Path:
    path = memory / "locks" / "website.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(holder), "utf-8")
    return path


def _dead_pid() -> int:
    """A pid that belonged to a process which has exited and been reaped."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_acquire_writes_the_holder_and_release_removes_it(tmp_path: Path) -> None:
    lock = _lock(tmp_path, pid=101)
    assert lock.acquire() is None
    holder = json.loads(lock.path.read_text("utf-8"))
    assert holder == {"pid": 101, "host": HOST, "started_at": T0.isoformat(), "run_id": "r1"}
    assert lock.release() is True
    assert not lock.path.exists()


def test_a_second_acquire_while_the_holder_lives_raises_run_locked(tmp_path: Path) -> None:
    with _lock(tmp_path, pid=101), pytest.raises(RunLocked) as caught:
        _lock(tmp_path, pid=202, run_id="r2").acquire()
    error = caught.value
    assert error.exit_code == 75
    assert "pid 101 on runner-1, run r1, started 2025-03-01T09:00:00+00:00" in error.message
    assert (error.fields["pid"], error.fields["host"]) == (101, HOST)
    assert error.fields["started_at"] == T0.isoformat()
    assert not (tmp_path / "locks" / "website.lock").exists()  # released on exit


def test_the_lock_of_a_dead_process_is_broken_and_reported(tmp_path: Path) -> None:
    dead = _dead_pid()
    _write_lock(tmp_path, pid=dead, host="me", started_at=T0.isoformat(), run_id="r0")
    lock = RunLock(tmp_path, "website", run_id="r1", host="me", clock=lambda: T0)
    broken = lock.acquire()
    assert isinstance(broken, BrokenLock)
    assert broken.previous is not None and broken.previous.pid == dead
    assert broken.reason == f"pid {dead} on me is gone"
    assert str(broken).startswith("broke a stale run lock")
    assert (tmp_path / "locks" / broken.aside).exists()
    assert json.loads(lock.path.read_text("utf-8"))["run_id"] == "r1"
    assert lock.broken == broken


def test_a_lock_from_another_host_is_broken_only_after_the_max_age(tmp_path: Path) -> None:
    _write_lock(tmp_path, pid=7, host="elsewhere", started_at=T0.isoformat(), run_id="r0")
    young = _lock(tmp_path, pid=101, clock=lambda: T0 + timedelta(hours=5, minutes=59))
    with pytest.raises(RunLocked, match="pid 7 on elsewhere"):
        young.acquire()
    old = _lock(tmp_path, pid=101, clock=lambda: T0 + timedelta(hours=6))
    broken = old.acquire()
    assert broken is not None and "held by host elsewhere for 6:00:00" in broken.reason
    assert json.loads(old.path.read_text("utf-8"))["pid"] == 101


def test_the_max_age_is_configurable(tmp_path: Path) -> None:
    _write_lock(tmp_path, pid=7, host="elsewhere", started_at=T0.isoformat(), run_id="r0")
    later = T0 + timedelta(minutes=2)
    lock = _lock(tmp_path, pid=101, clock=lambda: later, max_age=timedelta(minutes=1))
    assert lock.acquire() is not None


def test_an_unreadable_lock_is_left_over_from_a_crash_and_is_broken(tmp_path: Path) -> None:
    path = tmp_path / "locks" / "website.lock"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"")
    broken = _lock(tmp_path, pid=101).acquire()
    assert broken is not None and broken.previous is None
    assert "unreadable" in broken.reason


def test_release_leaves_a_lock_that_someone_else_now_holds(tmp_path: Path) -> None:
    first = _lock(tmp_path, pid=101)
    first.acquire()
    second = _lock(tmp_path, pid=202, run_id="r2", pid_alive=lambda p: p != 101)
    assert second.acquire() is not None
    assert first.release() is False
    assert json.loads(second.path.read_text("utf-8"))["pid"] == 202
    assert second.release() is True


def test_the_context_manager_releases_on_error(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError), _lock(tmp_path, pid=101):
        raise RuntimeError("the run failed")
    assert not (tmp_path / "locks" / "website.lock").exists()


def _race_threads(memory: Path, contenders: int) -> list[str]:
    """Contenders that all see the stale lock of pid 99 and try to break it at the same moment."""
    barrier = threading.Barrier(contenders)
    outcomes: list[str] = []

    def contend(pid: int) -> None:
        lock = _lock(memory, pid=pid, run_id=f"r{pid}", pid_alive=lambda p: p != 99)
        barrier.wait()
        try:
            lock.acquire()
            outcomes.append("won")
        except RunLocked:
            outcomes.append("locked")

    threads = [threading.Thread(target=contend, args=(1000 + i,)) for i in range(contenders)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sorted(outcomes)


def test_concurrent_breakers_in_threads_have_exactly_one_winner(tmp_path: Path) -> None:
    for round_ in range(15):
        memory = tmp_path / f"round-{round_}"
        _write_lock(memory, pid=99, host=HOST, started_at=T0.isoformat(), run_id="r0")
        assert _race_threads(memory, contenders=6) == ["locked"] * 5 + ["won"]


def _contend_in_process(memory: str, barrier: Any, done: Any, results: Any) -> None:
    lock = RunLock(Path(memory), "website", run_id="proc", host="me")
    barrier.wait()
    try:
        lock.acquire()
        results.put("won")
    except RunLocked:
        results.put("locked")
    done.wait()  # hold the lock until every contender has tried
    lock.release()


def test_concurrent_breakers_in_processes_have_exactly_one_winner(tmp_path: Path) -> None:
    _write_lock(tmp_path, pid=_dead_pid(), host="me", started_at=T0.isoformat(), run_id="r0")
    ctx = multiprocessing.get_context("fork")
    contenders = 4
    barrier, done, results = ctx.Barrier(contenders), ctx.Barrier(contenders), ctx.Queue()
    procs = [
        ctx.Process(target=_contend_in_process, args=(str(tmp_path), barrier, done, results))
        for _ in range(contenders)
    ]
    for proc in procs:
        proc.start()
    outcomes = sorted(results.get(timeout=20) for _ in range(contenders))
    for proc in procs:
        proc.join(timeout=20)
    assert outcomes == ["locked"] * (contenders - 1) + ["won"]
    assert not (tmp_path / "locks" / "website.lock").exists()
