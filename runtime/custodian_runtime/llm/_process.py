"""One child process for a model call: stdin in, stdout capped, a deadline, killed on a signal.

The child runs in its own session (its own process group), so a terminal's Ctrl-C does not reach
it; whatever ends the wait (the deadline, the size cap, SIGINT or SIGTERM to the run) kills the
whole group. Output is read by threads in chunks: stdout up to the cap, stderr only its tail.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from custodian_runtime.net.bounded_http import Stoppable
from custodian_runtime.process.stopping import POLL_S, interrupted

CHUNK = 64 * 1024
STDERR_KEEP = 64 * 1024  # stderr is only quoted in errors; keep its end


class ChildTimeout(Exception):
    """The child did not finish by the deadline and was killed."""

    def __init__(self, stderr: str) -> None:
        super().__init__("timeout")
        self.stderr = stderr


class ChildTooLarge(Exception):
    """The child wrote more than the cap to stdout and was killed."""

    def __init__(self, limit: int, stderr: str) -> None:
        super().__init__("too large")
        self.limit = limit
        self.stderr = stderr


@dataclass(frozen=True)
class ChildFinished:
    """A child that exited on its own."""

    returncode: int
    stdout: bytes
    stderr: bytes


@dataclass
class _Sink:
    """What one reader thread collected."""

    limit: int
    keep_tail: bool = False
    parts: list[bytes] = field(default_factory=list)
    size: int = 0
    over: bool = False

    def take(self, chunk: bytes) -> bool:
        """Keep `chunk`; False once the cap is passed (stdout) so reading stops."""
        self.size += len(chunk)
        self.parts.append(chunk)
        if self.keep_tail:
            self.parts = [b"".join(self.parts)[-self.limit :]]
            return True
        self.over = self.size > self.limit
        return not self.over

    def data(self) -> bytes:
        """Everything kept so far."""
        return b"".join(self.parts)


def run_child(
    argv: list[str],
    stdin: bytes,
    *,
    env: Mapping[str, str],
    timeout_s: float,
    max_stdout: int,
    stop: Stoppable | None = None,
    cwd: Path | None = None,
) -> ChildFinished:
    """Run `argv` to completion; raise ChildTimeout, ChildTooLarge, Interrupted, or OSError."""
    if stop is not None and stop.signal is not None:
        raise interrupted(stop.signal, f"the model call ({argv[0]})")
    process = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=cwd,
        env=dict(env),
        start_new_session=True,  # its own process group, so one kill ends all of it
    )
    out, err = _Sink(max_stdout), _Sink(STDERR_KEEP, keep_tail=True)
    assert process.stdin and process.stdout and process.stderr
    threads = [
        _thread(_feed, process.stdin, stdin),
        _thread(_drain, process.stdout, out),
        _thread(_drain, process.stderr, err),
    ]
    try:
        _wait(process, threads, out, err, timeout_s, stop, argv[0])
    finally:
        # Closed once their readers are done (at EOF after a kill), so no fd is read after reuse.
        for pipe, reader in zip((process.stdout, process.stderr), threads[1:], strict=True):
            reader.join(POLL_S * 4)
            if not reader.is_alive():
                with contextlib.suppress(OSError):
                    pipe.close()
    return ChildFinished(process.returncode, out.data(), err.data())


def _wait(
    process: subprocess.Popen[bytes],
    threads: list[threading.Thread],
    out: _Sink,
    err: _Sink,
    timeout_s: float,
    stop: Stoppable | None,
    name: str,
) -> None:
    """Until the child exits and its output is read; killed on a signal, the cap or the deadline."""
    deadline = time.monotonic() + timeout_s
    while process.poll() is None or any(t.is_alive() for t in threads[1:]):
        if stop is not None and stop.signal is not None:
            _kill(process)
            raise interrupted(stop.signal, f"the model call ({name})")
        if out.over:
            _kill(process)
            raise ChildTooLarge(out.limit, _text(err))
        if time.monotonic() >= deadline:
            _kill(process)
            raise ChildTimeout(_text(err))
        threads[1].join(POLL_S)


def _thread(target: Callable[..., None], *args: object) -> threading.Thread:
    thread = threading.Thread(target=target, args=args, daemon=True)
    thread.start()
    return thread


def _feed(pipe: IO[bytes], data: bytes) -> None:
    # A child that exits without reading all of its stdin is not an error here.
    with contextlib.suppress(BrokenPipeError, OSError):
        pipe.write(data)
    with contextlib.suppress(BrokenPipeError, OSError):
        pipe.close()


def _drain(pipe: IO[bytes], sink: _Sink) -> None:
    with contextlib.suppress(OSError, ValueError):
        while chunk := os.read(pipe.fileno(), CHUNK):
            if not sink.take(chunk):
                return


def _kill(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL the child's whole process group and reap the child."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=2)


def _text(sink: _Sink) -> str:
    return sink.data().decode("utf-8", "replace")
