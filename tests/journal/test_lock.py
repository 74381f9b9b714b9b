"""One run per domain: an flock for the run's life; a killed holder's successor runs at once."""

from __future__ import annotations

import fcntl
import json
import signal
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from custodian_runtime.errors import RunLocked
from custodian_runtime.journal.lock import LeftLock, RunLock
from support.spine import (
    clean_env,
    custodian_events,
    finish,
    held_hub,
    run_argv,
    start_run,
    write_plan,
)
from support.spine import journal as journal_of

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
HOST = "runner-1"

HOLD_SCRIPT = """
import sys, time
from pathlib import Path
from custodian_runtime.journal.lock import RunLock
lock = RunLock(Path(sys.argv[1]), "website", run_id="r-old", host=sys.argv[2])
lock.acquire()
print("held", flush=True)
time.sleep(120)
"""


def _lock(memory: Path, pid: int, run_id: str = "r1", **kwargs: Any) -> RunLock:
    kwargs.setdefault("clock", lambda: T0)
    kwargs.setdefault("host", HOST)
    return RunLock(memory, "website", run_id=run_id, pid=pid, **kwargs)


def _hold_in_child(memory: Path, host: str) -> subprocess.Popen[str]:
    """A real process that takes the lock and keeps it until it is killed."""
    child = subprocess.Popen(
        [sys.executable, "-c", HOLD_SCRIPT, str(memory), host],
        stdout=subprocess.PIPE,
        text=True,
        env=clean_env(),
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "held"
    return child


def test_acquire_writes_the_holder_and_release_removes_it(tmp_path: Path) -> None:
    lock = _lock(tmp_path, pid=101)
    assert lock.acquire() is None
    holder = json.loads(lock.path.read_text("utf-8"))
    assert holder == {"pid": 101, "host": HOST, "started_at": T0.isoformat(), "run_id": "r1"}
    assert lock.release() is True
    assert not lock.path.exists()
    assert lock.release() is False


def test_a_second_acquire_while_the_holder_lives_raises_run_locked(tmp_path: Path) -> None:
    with _lock(tmp_path, pid=101), pytest.raises(RunLocked) as caught:
        _lock(tmp_path, pid=202, run_id="r2").acquire()
    error = caught.value
    assert error.exit_code == 75
    assert "pid 101 on runner-1, run r1, started 2025-03-01T09:00:00+00:00" in error.message
    assert "Do not delete the lock file" in error.message
    assert (error.fields["pid"], error.fields["host"]) == (101, HOST)
    assert not (tmp_path / "locks" / "website.lock").exists()  # released on exit


def test_the_words_in_the_file_decide_nothing(tmp_path: Path) -> None:
    """A file naming a live pid on this very host, but no flock behind it, is no lock at all."""
    path = tmp_path / "locks" / "website.lock"
    path.parent.mkdir(parents=True)
    ghost = {"pid": 1, "host": "pod-gone", "started_at": T0.isoformat(), "run_id": "r0"}
    path.write_text(json.dumps(ghost), "utf-8")
    lock = _lock(tmp_path, pid=101)
    left = lock.acquire()
    assert isinstance(left, LeftLock)
    assert left.previous is not None and left.previous.host == "pod-gone"
    assert "took over the lock left by pid 1 on pod-gone, run r0" in str(left)
    assert json.loads(lock.path.read_text("utf-8"))["run_id"] == "r1"
    lock.release()


def test_an_unreadable_left_lock_is_taken_over(tmp_path: Path) -> None:
    path = tmp_path / "locks" / "website.lock"
    path.parent.mkdir(parents=True)
    path.write_bytes(b'{"pid": 7, "ho')
    left = _lock(tmp_path, pid=101).acquire()
    assert left is not None and left.previous is None
    assert "an unreadable holder" in str(left)


def test_a_sigkilled_holder_on_another_host_frees_the_lock_at_once(tmp_path: Path) -> None:
    child = _hold_in_child(tmp_path, "pod-old")
    with pytest.raises(RunLocked, match="on pod-old, run r-old"):
        _lock(tmp_path, pid=101, host="pod-new").acquire()
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=10)
    assert json.loads((tmp_path / "locks" / "website.lock").read_text())["host"] == "pod-old"
    started = time.monotonic()
    lock = _lock(tmp_path, pid=101, host="pod-new")
    left = lock.acquire()
    assert time.monotonic() - started < 1.0
    assert left is not None and left.previous is not None
    assert (left.previous.pid, left.previous.host) == (child.pid, "pod-old")
    lock.release()


def test_the_lock_is_not_inherited_by_a_child_process(tmp_path: Path) -> None:
    """A model subprocess that outlives its run must not keep the domain locked."""
    with _lock(tmp_path, pid=101):
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        lock = _lock(tmp_path, pid=202)
        assert lock.acquire() is None
        lock.release()
    finally:
        child.kill()
        child.wait()


def test_the_context_manager_releases_on_error(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError), _lock(tmp_path, pid=101):
        raise RuntimeError("the run failed")
    assert not (tmp_path / "locks" / "website.lock").exists()


def _race_threads(memory: Path, contenders: int) -> list[str]:
    barrier = threading.Barrier(contenders)
    outcomes: list[str] = []
    locks: list[RunLock] = []

    def contend(pid: int) -> None:
        lock = _lock(memory, pid=pid, run_id=f"r{pid}")
        barrier.wait()
        try:
            lock.acquire()
            outcomes.append("won")
            locks.append(lock)
        except RunLocked:
            outcomes.append("locked")

    threads = [threading.Thread(target=contend, args=(1000 + i,)) for i in range(contenders)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for lock in locks:
        lock.release()
    return sorted(outcomes)


def test_concurrent_acquirers_in_threads_have_exactly_one_winner(tmp_path: Path) -> None:
    for round_ in range(15):
        assert _race_threads(tmp_path / f"round-{round_}", contenders=6) == ["locked"] * 5 + ["won"]


def test_an_acquirer_that_locked_a_released_file_tries_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Release removes the file: an acquirer that opened it just before must not win with it."""
    first = _lock(tmp_path, pid=101)
    first.acquire()
    third = _lock(tmp_path, pid=303, run_id="r3")
    real_flock = fcntl.flock
    raced: list[bool] = []

    def flock_after_a_release(fd: int, operation: int) -> None:
        if not raced:  # the second acquirer has opened the old file and is about to lock it
            raced.append(True)
            first.release()
            third.acquire()
        real_flock(fd, operation)

    monkeypatch.setattr(fcntl, "flock", flock_after_a_release)
    with pytest.raises(RunLocked, match="pid 303 on runner-1, run r3"):
        _lock(tmp_path, pid=202, run_id="r2").acquire()
    assert json.loads(third.path.read_text("utf-8"))["run_id"] == "r3"
    third.release()


def test_a_killed_runs_successor_on_another_host_runs_at_once(tmp_path: Path) -> None:
    """The real CLI: a SIGKILLed holder that named another host does not hold the next run up."""
    memory = tmp_path / "memory"
    child = _hold_in_child(memory, "custodian-website-28934-abcde")
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=10)
    llm = write_plan(tmp_path / "answer.md", {"observations": ["nothing to do"]})
    with held_hub(tmp_path, None) as hub:
        code, out, err = finish(start_run(tmp_path, run_argv(hub.url, llm, memory)))
        assert custodian_events(hub) == []
    assert code == 0, err
    assert json.loads(out)["status"] in ("completed", "skipped")
    assert "took over the lock left by pid" in err and "custodian-website-28934-abcde" in err
    assert {r.run_id for r in journal_of(memory)} == {json.loads(out)["run_id"]}
    assert not (memory / "locks" / "website.lock").exists()
