"""The watch loop's own figures: passes, summary reads, runs started and finished, last pass."""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, field

from prometheus_client import CollectorRegistry, Gauge, generate_latest
from prometheus_client import Counter as PromCounter


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
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def count(self, **add: int) -> None:
        """Add to the named counters."""
        with self._lock:
            for name, n in add.items():
                setattr(self, name, getattr(self, name) + n)

    def ended(self, exit_code: int) -> None:
        """One run ended with `exit_code`."""
        with self._lock:
            self.finished[exit_code] += 1

    def exposition(self) -> str:
        """The Prometheus text of the loop's figures."""
        registry = CollectorRegistry(auto_describe=True)
        with self._lock:
            _counter(registry, "passes", "Passes over the watched domains.", self.passes)
            _counter(registry, "summary_reads", "GET /state/summary sent.", self.summary_reads)
            _counter(registry, "summary_read_failures", "GET /state/summary that failed.",
                     self.summary_failures)  # fmt: skip
            _counter(registry, "runs_started", "Runs started.", self.started)
            done = PromCounter("custodian_watch_runs_finished", "Runs finished, by exit code.",
                               ["exit_code"], registry=registry)  # fmt: skip
            for code, n in sorted(self.finished.items()):
                done.labels(exit_code=str(code)).inc(n)
            running = self.started - sum(self.finished.values())
            _gauge(registry, "runs_in_flight", "Runs started and not yet finished.", running)
            _gauge(registry, "domains", "Domains watched in the last pass.", self.watched)
            if self.last_pass is not None:
                _gauge(registry, "last_pass_timestamp_seconds", "When the last pass ended.",
                       self.last_pass)  # fmt: skip
        return generate_latest(registry).decode("utf-8")


def _counter(registry: CollectorRegistry, name: str, text: str, value: int) -> None:
    PromCounter(f"custodian_watch_{name}", text, registry=registry).inc(value)


def _gauge(registry: CollectorRegistry, name: str, text: str, value: float) -> None:
    Gauge(f"custodian_watch_{name}", text, registry=registry).set(value)
