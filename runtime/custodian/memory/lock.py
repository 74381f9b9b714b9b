"""One run per domain: `<memory>/locks/<domain>.lock` names its holder (pid, host, start, run id).

The lock file is created with O_CREAT|O_EXCL, so only one process can make it. A lock whose holder
is gone (same host, pid not alive) or that is older than `max_age` (another host, whose pids we
cannot check) is broken: renamed aside, then re-created with O_EXCL. Every acquire, break and
release also holds an flock on `<domain>.guard` so the read-judge-break sequence is atomic
between processes on this host; the kernel drops that flock if its holder dies.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import TracebackType

from custodian.errors import RunLocked
from custodian.memory.journal_store import check_domain
from custodian.memory.journal_writer import fsync_dir

DEFAULT_MAX_AGE = timedelta(hours=6)


def pid_alive(pid: int) -> bool:
    """True when a process with `pid` exists on this host (signal 0 checks without sending)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, owned by someone else
        return True
    return True


def _utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class LockHolder:
    """What a lock file says about the run holding it."""

    pid: int
    host: str
    started_at: str
    run_id: str


@dataclass(frozen=True)
class BrokenLock:
    """A stale lock this acquire broke; the run should log it."""

    previous: LockHolder | None
    reason: str
    aside: str

    def __str__(self) -> str:
        return f"broke a stale run lock ({self.reason}); the old lock was moved to {self.aside}"


class RunLock:
    """Exclusive right to run a domain, held from acquire() to release(); a context manager."""

    def __init__(
        self,
        memory_dir: Path,
        domain: str,
        *,
        run_id: str = "",
        pid_alive: Callable[[int], bool] = pid_alive,
        clock: Callable[[], datetime] = _utc_now,
        max_age: timedelta = DEFAULT_MAX_AGE,
        host: str | None = None,
        pid: int | None = None,
    ) -> None:
        self.directory = Path(memory_dir) / "locks"
        self.path = self.directory / f"{check_domain(domain)}.lock"
        self._guard_path = self.directory / f"{domain}.guard"
        self.domain = domain
        self._pid_alive = pid_alive
        self._clock = clock
        self._max_age = max_age
        self._me = LockHolder(
            pid=os.getpid() if pid is None else pid,
            host=socket.gethostname() if host is None else host,
            started_at="",
            run_id=run_id,
        )
        self.holder: LockHolder | None = None
        self.broken: BrokenLock | None = None

    def acquire(self) -> BrokenLock | None:
        """Take the lock, breaking a stale one (returned); RunLocked if a live run holds it."""
        self.directory.mkdir(parents=True, exist_ok=True)
        me = LockHolder(**{**asdict(self._me), "started_at": _iso(self._clock())})
        with self._guard():
            if self._create(me):
                self.holder, self.broken = me, None
                return None
            broken = self._break_if_stale()
            if not self._create(me):
                raise self._locked(self._read())
        self.holder, self.broken = me, broken
        return broken

    def release(self) -> bool:
        """Remove the lock if it is still ours; False if someone broke it meanwhile."""
        if self.holder is None:
            return False
        with self._guard():
            mine = self._read() == self.holder
            if mine:
                self.path.unlink()
                fsync_dir(self.directory)
        self.holder = None
        return mine

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

    @contextlib.contextmanager
    def _guard(self) -> Iterator[None]:
        fd = os.open(self._guard_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing the descriptor drops the flock

    def _create(self, me: LockHolder) -> bool:
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            return False
        try:
            os.write(fd, json.dumps(asdict(me), sort_keys=True).encode("utf-8"))
            os.fsync(fd)
        except BaseException:
            self.path.unlink()  # a half-written lock must not outlive this failed acquire
            raise
        finally:
            os.close(fd)
        fsync_dir(self.directory)
        return True

    def _read(self) -> LockHolder | None:
        """The holder named in the lock file; None when it is missing or unreadable."""
        try:
            raw = json.loads(self.path.read_text("utf-8"))
            return LockHolder(
                pid=int(raw["pid"]),
                host=str(raw["host"]),
                started_at=str(raw["started_at"]),
                run_id=str(raw.get("run_id", "")),
            )
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def _break_if_stale(self) -> BrokenLock | None:
        if not self.path.exists():
            return None
        holder = self._read()
        reason = self._stale_reason(holder)
        if reason is None:
            raise self._locked(holder)
        aside = self.path.with_name(f"{self.path.name}.stale-{os.getpid()}-{_stamp(self._clock())}")
        try:
            os.rename(self.path, aside)
        except FileNotFoundError:  # its holder released it meanwhile
            return None
        fsync_dir(self.directory)
        return BrokenLock(previous=holder, reason=reason, aside=aside.name)

    def _stale_reason(self, holder: LockHolder | None) -> str | None:
        if holder is None:
            # Contents are fsync'd before the guard is let go, so only a crash mid-create leaves
            # an unreadable lock behind.
            return "the lock file is unreadable (its creator crashed while writing it)"
        if holder.host == self._me.host:
            if self._pid_alive(holder.pid):
                return None
            return f"pid {holder.pid} on {holder.host} is gone"
        age = self._clock() - _parse(holder.started_at)
        if age >= self._max_age:
            return f"held by host {holder.host} for {age}, longer than the {self._max_age} limit"
        return None

    def _locked(self, holder: LockHolder | None) -> RunLocked:
        who = (
            f"pid {holder.pid} on {holder.host}, run {holder.run_id or '?'}, "
            f"started {holder.started_at}"
            if holder is not None
            else "an unknown holder"
        )
        return RunLocked(
            f"domain {self.domain!r} is locked by {who}; wait for that run to finish "
            f"(a lock from another host expires after {self._max_age}), or remove {self.path} "
            "if you are sure no run is active",
            pid=holder.pid if holder else None,
            host=holder.host if holder else None,
            started_at=holder.started_at if holder else None,
            path=str(self.path),
        )


def _iso(at: datetime) -> str:
    return at.astimezone(UTC).isoformat()


def _stamp(at: datetime) -> str:
    return at.astimezone(UTC).strftime("%Y%m%dT%H%M%S%fZ")


def _parse(text: str) -> datetime:
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return datetime.min.replace(tzinfo=UTC)  # unreadable start: treat as very old
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
