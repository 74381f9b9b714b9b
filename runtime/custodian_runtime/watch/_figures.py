"""The watch loop's own figures: passes, summary reads, runs started and finished, last pass."""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, field

from custodian_runtime.clock import utc_now
from custodian_runtime.metrics.text import header, labelled, line, number


def _now() -> float:
    return utc_now().timestamp()


@dataclass
class LoopFigures:
    """Counted by the loop and its runs (a lock: runs end in worker threads)."""

    passes: int = 0
    summary_reads: int = 0
    summary_failures: int = 0
    started: int = 0
    finished: Counter[int] = field(default_factory=Counter)  # by exit code
    last_pass: float | None = None  # Unix time the last pass ended
    watched: int = 0
    run_cpu_s: float = 0.0  # CPU seconds the runs' threads spent in them
    unknown: int = 0  # listed domains the hub did not list in the last pass
    created: float = field(default_factory=_now)  # the counters' `_created`: the loop's start
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def count(self, **add: int) -> None:
        """Add to the named counters."""
        with self._lock:
            for name, n in add.items():
                setattr(self, name, getattr(self, name) + n)

    def ended(self, exit_code: int, cpu_s: float = 0.0) -> None:
        """One run ended with `exit_code`, after `cpu_s` seconds of CPU in its thread."""
        with self._lock:
            self.finished[exit_code] += 1
            self.run_cpu_s += cpu_s

    def exposition(self) -> str:
        """The Prometheus text of the loop's figures; each counter created when the loop was."""
        count = _Counters(number(self.created))
        with self._lock:
            running = self.started - sum(self.finished.values())
            finished = [({"exit_code": str(c)}, float(n)) for c, n in sorted(self.finished.items())]
            parts = [
                count("passes", "Passes over the watched domains.", [({}, self.passes)]),
                count("overview_reads", "GET /state/summary sent.", [({}, self.summary_reads)]),
                count(
                    "overview_read_failures",
                    "GET /state/summary that failed.",
                    [({}, self.summary_failures)],
                ),
                count("runs_started", "Runs started.", [({}, self.started)]),
                count("runs_finished", "Runs finished, by exit code.", finished),
                count(
                    "run_cpu_seconds",
                    "CPU time of the runs' threads, in their runs.",
                    [({}, self.run_cpu_s)],
                ),
                _gauge("runs_in_flight", "Runs started and not yet finished.", running),
                _gauge("domains", "Domains watched in the last pass.", self.watched),
                _gauge(
                    "unknown_domains",
                    "Listed domains the hub did not list in the last pass: never run.",
                    self.unknown,
                ),
            ]
            if self.last_pass is not None:
                parts.append(_gauge("last_pass_timestamp_seconds", "When the last pass ended.",
                                    self.last_pass))  # fmt: skip
        return "".join(parts)


@dataclass(frozen=True)
class _Counters:
    """Writes a counter's family and its `_created` family, created at the loop's start."""

    created: str

    def __call__(self, name: str, text: str, values: list[tuple[dict[str, str], float]]) -> str:
        full = f"custodian_watch_{name}"
        lines = [header(f"{full}_total", text, "counter")]
        lines += [line(f"{full}_total", labels, float(n)) for labels, n in values]
        lines += [header(f"{full}_created", text, "gauge")]
        lines += [f"{labelled(full + '_created', labels)} {self.created}\n" for labels, _ in values]
        return "".join(lines)


def _gauge(name: str, text: str, value: float) -> str:
    full = f"custodian_watch_{name}"
    return header(full, text, "gauge") + line(full, {}, float(value))
