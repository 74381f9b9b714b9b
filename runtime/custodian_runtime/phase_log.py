"""What a run or a command tells those watching it: one line per phase on stderr."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any, TextIO

from custodian_runtime.core.inert import for_terminal, for_terminal_json


class PhaseLog:
    """One line per phase on stderr: JSON for a cluster's log pipeline, or plain text."""

    def __init__(
        self,
        stream: TextIO,
        *,
        fmt: str,
        run_id: str,
        domain: str,
        clock: Callable[[], datetime],
        monotonic: Callable[[], float],
    ) -> None:
        self._stream = stream
        self._fmt = fmt
        self._run_id = run_id
        self._domain = domain
        self._clock = clock
        self._monotonic = monotonic

    def line(self, phase: str, outcome: str, duration_ms: int | None = None, **detail: Any) -> None:
        """Write one phase line."""
        if self._fmt == "json":
            record = {
                "ts": self._clock().isoformat().replace("+00:00", "Z"),
                "run_id": self._run_id,
                "domain": self._domain,
                "phase": phase,
                "outcome": outcome,
                "duration_ms": duration_ms,
                **detail,
            }
            self._stream.write(for_terminal_json(record, default=str) + "\n")
        else:
            extra = " ".join(f"{k}={v}" for k, v in detail.items() if v is not None)
            took = f" ({duration_ms} ms)" if duration_ms is not None else ""
            line = f"custodian: {phase}: {outcome}{took} {extra}".rstrip()
            self._stream.write(for_terminal(line) + "\n")
        self._stream.flush()

    @contextmanager
    def phase(self, name: str) -> Iterator[dict[str, Any]]:
        """Time a phase; the body may add detail to the yielded dict; errors log as failed."""
        detail: dict[str, Any] = {}
        start = self._monotonic()
        try:
            yield detail
        except BaseException as exc:
            took = int((self._monotonic() - start) * 1000)
            self.line(name, "failed", took, error=str(exc)[:500], **detail)
            raise
        outcome = detail.pop("outcome", "ok")
        self.line(name, outcome, int((self._monotonic() - start) * 1000), **detail)


def retry_reporter(log: PhaseLog, who: str) -> Callable[[int, int, str, float], None]:
    """A retry progress callback that writes `hub: attempt 2/5 failed: ...; next in 3.2 s`."""

    def report(attempt: int, max_attempts: int, reason: str, wait_s: float) -> None:
        log.line(who, f"attempt {attempt}/{max_attempts} failed: {reason}; next in {wait_s:.1f} s")

    return report
