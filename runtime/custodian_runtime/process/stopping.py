"""A stop that cuts every wait: SIGTERM/SIGINT set a flag that every sleep, read and child polls.

A signal handler only records the signal (setting a `threading.Event` from a handler can deadlock
the thread it interrupted); every wait polls the flag in short slices instead, so SIGINT or
SIGTERM ends a sleep, a subprocess or an HTTP read within a fraction of a second.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

from custodian_runtime.errors import Interrupted

# How often a wait looks at the stop flag.
POLL_S = 0.05

# Retry progress: (attempt that failed, attempts allowed, why it failed, seconds until the next).
OnRetry = Callable[[int, int, str, float], None]


class StopFlag:
    """Set by SIGTERM/SIGINT: finish the write in flight, start no other, cut every other wait."""

    def __init__(self) -> None:
        self.signal: int | None = None

    def __bool__(self) -> bool:
        return self.signal is not None

    def handler(self, signum: int, frame: FrameType | None) -> None:
        """Record the signal; waits and the act loop look at the flag."""
        self.signal = signum

    def check(self, doing: str = "the run") -> None:
        """Raise Interrupted if a signal came: nothing new starts after one."""
        if self.signal is not None:
            raise interrupted(self.signal, doing)

    def sleep(self, seconds: float) -> None:
        """Sleep like `time.sleep`, but raise Interrupted as soon as a signal comes."""
        end = time.monotonic() + seconds
        while True:
            self.check("a retry wait")
            left = end - time.monotonic()
            if left <= 0:
                return
            time.sleep(min(POLL_S, left))


def interrupted(signum: int, doing: str) -> Interrupted:
    """The error for a wait that a signal cut short."""
    try:
        name = signal.Signals(signum).name
    except ValueError:
        name = f"signal {signum}"
    return Interrupted(f"stopped by {name} during {doing}; nothing more was started", signum=signum)


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
