"""One run per domain: an flock(2) on `<memory>/locks/<domain>.lock`, held for the run's life.

Liveness is the kernel's business, not ours: the lock is an exclusive flock on the open lock
file, and the kernel drops it when the process ends, however it ends (SIGKILL and OOM included).
A run whose predecessor was killed takes the lock at once, on any host that shares the volume.
The pid, host, start time and run id written into the file are for people to read (and for the
"locked by" message); nothing decides on them.

The file is removed on release while the flock is still held. An acquirer that opened the old
file before it was removed may get its flock afterwards: it checks that the path still names the
file it locked, and tries again if not. The descriptor is never reopened while held: on NFS the
flock is emulated with a POSIX lock, which closing any descriptor of the file would release.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType

from custodian_runtime.clock import utc_now
from custodian_runtime.errors import RunLocked
from custodian_runtime.files.atomic import fsync_directory as fsync_dir
from custodian_runtime.journal._names import check_domain

ATTEMPTS = 8  # only a release racing with this acquire makes it try again


@dataclass(frozen=True)
class LockHolder:
    """What a lock file says about the run holding it (for people; never for deciding)."""

    pid: int
    host: str
    started_at: str
    run_id: str

    def describe(self) -> str:
        """`pid 12 on host-a, run R, started T`."""
        return f"pid {self.pid} on {self.host}, run {self.run_id or '?'}, started {self.started_at}"


@dataclass(frozen=True)
class LeftLock:
    """The lock file of a run that ended without releasing it; the run should log it."""

    previous: LockHolder | None

    def __str__(self) -> str:
        who = self.previous.describe() if self.previous else "an unreadable holder"
        return f"took over the lock left by {who}: that process has ended"


class RunLock:
    """Exclusive right to run a domain, held from acquire() to release(); a context manager."""

    def __init__(
        self,
        memory_dir: Path,
        domain: str,
        *,
        run_id: str = "",
        clock: Callable[[], datetime] = utc_now,
        host: str | None = None,
        pid: int | None = None,
    ) -> None:
        self.directory = Path(memory_dir) / "locks"
        self.path = self.directory / f"{check_domain(domain)}.lock"
        self.domain = domain
        self._clock = clock
        self._host = socket.gethostname() if host is None else host
        self._pid = os.getpid() if pid is None else pid
        self._run_id = run_id
        self._fd: int | None = None
        self.holder: LockHolder | None = None
        self.left: LeftLock | None = None

    def acquire(self) -> LeftLock | None:
        """Take the lock (reporting one a dead run left); RunLocked if a live run holds it."""
        if self._fd is not None:
            raise RuntimeError("this RunLock is already held")
        self.directory.mkdir(parents=True, exist_ok=True)
        for _ in range(ATTEMPTS):
            fd = self._open_locked()
            if fd is not None:
                break
        else:
            raise self._locked(None)
        me = LockHolder(
            self._pid, self._host, self._clock().astimezone(UTC).isoformat(), self._run_id
        )
        try:
            present, previous = _read(fd)
            _write(fd, me)
        except BaseException:
            os.close(fd)
            raise
        self._fd, self.holder = fd, me
        self.left = LeftLock(previous) if present else None
        return self.left

    def release(self) -> bool:
        """Remove the lock file and let the lock go; False if this object did not hold it."""
        fd, self._fd, self.holder = self._fd, None, None
        if fd is None:
            return False
        try:
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()  # while still locked: no one can be holding this file
            with contextlib.suppress(OSError):
                fsync_dir(self.directory)
        finally:
            os.close(fd)  # closing the descriptor drops the flock
        return True

    def __enter__(self) -> RunLock:
        self.acquire()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()

    def _open_locked(self) -> int | None:
        """A locked descriptor of the file at `path`; None if it was removed meanwhile."""
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            _, holder = _read(fd)
            os.close(fd)
            raise self._locked(holder) from None
        except BaseException:
            os.close(fd)
            raise
        if _same_file(fd, self.path):
            return fd
        os.close(fd)  # its holder released it and removed the file: lock the new one
        return None

    def _locked(self, holder: LockHolder | None) -> RunLocked:
        who = holder.describe() if holder is not None else "a run that has not named itself yet"
        return RunLocked(
            f"domain {self.domain!r} is locked by {who}; wait for that run to finish (the "
            "lock is the kernel's and ends with that process). Do not delete the lock file: "
            "that would not stop the run, only let a second one in beside it",
            pid=holder.pid if holder else None,
            host=holder.host if holder else None,
            started_at=holder.started_at if holder else None,
            path=str(self.path),
        )


def _same_file(fd: int, path: Path) -> bool:
    try:
        now = os.stat(path)
    except FileNotFoundError:
        return False
    mine = os.fstat(fd)
    return (mine.st_dev, mine.st_ino) == (now.st_dev, now.st_ino)


def _read(fd: int) -> tuple[bool, LockHolder | None]:
    """Whether the file names a holder at all, and the holder (None when unreadable)."""
    raw = os.pread(fd, 4096, 0)
    if not raw.strip():
        return False, None
    try:
        data = json.loads(raw)
        return True, LockHolder(
            pid=int(data["pid"]),
            host=str(data["host"]),
            started_at=str(data["started_at"]),
            run_id=str(data.get("run_id", "")),
        )
    except (ValueError, KeyError, TypeError):
        return True, None


def _write(fd: int, me: LockHolder) -> None:
    os.ftruncate(fd, 0)
    os.pwrite(fd, json.dumps(asdict(me), sort_keys=True).encode("utf-8"), 0)
    os.fsync(fd)
