"""A sleep that records instead of waiting, and a clock that the sleep advances."""

from __future__ import annotations


class FakeSleep:
    """Call it like `time.sleep`; it records each wait and advances `now` by it."""

    def __init__(self, start: float = 1000.0) -> None:
        self.calls: list[float] = []
        self.now = start

    def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)
        self.now += seconds

    def clock(self) -> float:
        """A monotonic clock that moves only when the fake sleeps."""
        return self.now
