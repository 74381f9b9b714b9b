"""What a run needs from the process: its id, the wall clock, and graceful stop on a signal."""

from __future__ import annotations

import secrets
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from types import FrameType


def utc_now() -> datetime:
    """The wall clock, in UTC."""
    return datetime.now(UTC)


def new_run_id(now: datetime) -> str:
    """A sortable, unique run id: `r20261130T081500Z-3fa9c2`."""
    return f"r{now.strftime('%Y%m%dT%H%M%SZ')}-{secrets.token_hex(3)}"


class StopFlag:
    """Set by SIGTERM/SIGINT: finish the write in flight, start no other."""

    def __init__(self) -> None:
        self.signal: int | None = None

    def __bool__(self) -> bool:
        return self.signal is not None

    def handler(self, signum: int, frame: FrameType | None) -> None:
        """Record the signal; the act loop checks the flag between writes."""
        self.signal = signum


@contextmanager
def stop_on_signals(stop: StopFlag) -> Iterator[None]:
    """Route SIGTERM and SIGINT to `stop` while the block runs (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.signal(s, stop.handler) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
