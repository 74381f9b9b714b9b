"""What a run or a command tells those watching it: one line per phase on stderr."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any, TextIO

from custodian_runtime.process.log_lines import JsonLog, LineStream, fit_text

# Outcomes a person or an alert should notice although the run goes on.
WARNING_OUTCOMES = frozenset(
    {"retry", "taken over", "torn_tail", "rebuilt", "checkpoint_not_saved", "not_pushed"}
)


# The lines that say how a run is configured: `custodian watch` says them once at its start,
# and its runs leave them out (`PhaseLog(omit=...)`).
CONFIG_LINES = frozenset(
    {("hub", "configured"), ("hub", "embedded"), ("hub", "identified"), ("model", "selected"),
     ("seals", "unsealed"), ("canon", "packaged")}
)  # fmt: skip


def severity_of(phase: str, outcome: str, exit_code: object = None) -> str:
    """INFO, WARNING or ERROR for a phase line."""
    if outcome == "failed" or (phase == "finish" and exit_code not in (None, 0)):
        return "WARNING" if outcome == "interrupted" else "ERROR"
    return "WARNING" if outcome in WARNING_OUTCOMES or outcome == "interrupted" else "INFO"


def json_log_of(stream: TextIO, clock: Callable[[], datetime]) -> JsonLog:
    """The JSON log behind `stream`: the CLI's, if stderr was routed through one; else a new one."""
    return stream.log if isinstance(stream, LineStream) else JsonLog(stream, clock)


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
        omit: frozenset[tuple[str, str]] = frozenset(),
    ) -> None:
        self._stream = stream
        self._omit = omit  # (phase, outcome) lines the caller has said already
        self._fmt = fmt
        self._clock = clock
        self._monotonic = monotonic
        self._json: JsonLog | None = None
        if fmt == "json":
            self._json = json_log_of(stream, clock)
            # Every later line of the process (a warning, the final line) belongs to this run.
            self._json.bind(run_id, domain)

    def line(self, phase: str, outcome: str, duration_ms: int | None = None, **detail: Any) -> None:
        """Write one phase line; its severity follows from the phase and outcome."""
        if (phase, outcome) in self._omit:
            return
        if self._json is not None:
            level = severity_of(phase, outcome, detail.get("exit_code"))
            fields = {"phase": phase, "outcome": outcome, "duration_ms": duration_ms, **detail}
            self._json.emit(level, fields, ts=self._clock())
            return
        extra = " ".join(f"{k}={v}" for k, v in detail.items() if v is not None)
        took = f" ({duration_ms} ms)" if duration_ms is not None else ""
        line = f"custodian: {phase}: {outcome}{took} {extra}".rstrip()
        self._stream.write(fit_text(line) + "\n")
        self._stream.flush()

    def retry(self, who: str, attempt: int, max_attempts: int, cause: str, wait_s: float) -> None:
        """A failed attempt and the wait before the next: fields in JSON, one sentence in text."""
        if self._json is None:
            self.line(
                who, f"attempt {attempt}/{max_attempts} failed: {cause}; next in {wait_s:.1f} s"
            )
            return
        self.line(
            who,
            "retry",
            attempt=attempt,
            max_attempts=max_attempts,
            wait_s=round(wait_s, 3),
            cause=cause,
        )

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
        log.retry(who, attempt, max_attempts, reason, wait_s)

    return report
