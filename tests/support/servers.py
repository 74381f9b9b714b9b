"""Servers the tests start on 127.0.0.1: a free port, a process serving until a block ends."""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any


def free_port() -> int:
    """A port on 127.0.0.1 nothing listens on (as the kernel chose it just now)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def wait_until_listening(
    name: str,
    port: int,
    server: subprocess.Popen[bytes],
    log: Path,
    deadline_s: float,
    poll_s: float,
) -> None:
    """Return once `port` takes a connection; fail with the end of `log` if `server` ends first."""
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if server.poll() is not None:
            raise RuntimeError(f"{name} ended: {log.read_text(errors='replace')[-2000:]}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(poll_s)
    raise RuntimeError(f"{name} did not listen on port {port} within {deadline_s} s")


@contextmanager
def serving(
    name: str,
    argv: Sequence[str],
    port: int,
    log: Path,
    deadline_s: float,
    poll_s: float = 0.05,
    **popen: Any,
) -> Iterator[None]:
    """`argv` running, its output in `log` (a file, not a pipe nobody reads: a full pipe stalls
    it), listening on `port` for the block; then terminated (killed after 10 s)."""
    with log.open("wb") as out:
        server = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, **popen)
    try:
        wait_until_listening(name, port, server, log, deadline_s, poll_s)
        yield
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
