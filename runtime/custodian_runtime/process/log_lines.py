"""Stderr as JSON lines: each line one object with severity, ts, run_id and domain, under 16 KiB.

With `CUSTODIAN_LOG_FORMAT=json` everything that reaches stderr goes through a `JsonLog`: the
phase lines, the CLI's own error lines, any other text written to stderr (one record per line),
Python warnings and `logging` records. Container runtimes split lines of 16 KiB and more, so
the longest fields of a record are cut, with a marker, until its line fits.
"""

from __future__ import annotations

import io
import logging
import threading
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any, TextIO

from custodian_runtime.core.inert import for_terminal, for_terminal_json

# With its newline, a line stays under 16 KiB.
MAX_LINE_BYTES = 16 * 1024 - 2
# Never cut: what a pipeline needs to place the line.
PLACE = ("severity", "ts", "run_id", "domain")
MIN_FIELD = 200  # a field shorter than this is dropped rather than cut further
TRIES = 64


def iso(moment: datetime) -> str:
    """UTC ISO-8601 with a `Z`."""
    return moment.isoformat().replace("+00:00", "Z")


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


def _cut(text: str, over: int) -> str:
    """`text` shortened by `over` bytes, or by half if that is less, with a marker.

    Halving the largest field each time shares the cut among several large fields.
    """
    raw = text.encode("utf-8")
    kept = raw[: max(0, len(raw) - over - 64, len(raw) // 2)].decode("utf-8", "ignore")
    return f"{kept}…[truncated {len(text) - len(kept)} chars]"


def fit_record(record: dict[str, Any]) -> str:
    """The record as one JSON line (no newline) under MAX_LINE_BYTES: long fields cut, marked."""
    fitted = dict(record)
    line = for_terminal_json(fitted, default=str)
    for _ in range(TRIES):
        over = _size(line) - MAX_LINE_BYTES
        if over <= 0:
            return line
        sizes = {k: _size(for_terminal_json(v, default=str)) for k, v in fitted.items()}
        key = max((k for k in fitted if k not in PLACE), key=lambda k: sizes[k], default=None)
        if key is None or sizes[key] < MIN_FIELD:
            break
        value = fitted[key]
        text = value if isinstance(value, str) else for_terminal_json(value, default=str)
        fitted[key] = _cut(text, over)
        line = for_terminal_json(fitted, default=str)
    # Still too long (thousands of small fields): keep where the line belongs, say it was cut.
    kept = {k: fitted.get(k) for k in PLACE}
    return for_terminal_json({**kept, "truncated": True}, default=str)


ENTRY_TEXT = 300  # a string inside a summary's list entry is cut to about this many characters


def fit_summary(summary: dict[str, Any]) -> str:
    """A run's `--json` summary as one JSON line under MAX_LINE_BYTES, its schema kept.

    Strings inside list entries are cut first; then the longest lists lose their last entries,
    and `truncated` says how many each lost (the note and the journal hold them all). Counts,
    ids and the status are never cut.
    """
    fitted: dict[str, Any] = dict(summary)
    line = for_terminal_json(fitted, default=str)
    if _size(line) <= MAX_LINE_BYTES:
        return line
    lists = [k for k, v in fitted.items() if isinstance(v, list)]
    fitted.update({k: [_short_entry(e) for e in fitted[k]] for k in lists})
    dropped: dict[str, int] = {}
    line = for_terminal_json(fitted, default=str)
    while _size(line) > MAX_LINE_BYTES:
        longest = max(lists, key=lambda k: _size(for_terminal_json(fitted[k], default=str)))
        entries = fitted[longest]
        if not entries:
            return fit_record(fitted)  # no list left to shorten: cut the long fields
        keep = len(entries) // 2
        dropped[longest] = dropped.get(longest, 0) + len(entries) - keep
        fitted[longest] = entries[:keep]
        fitted["truncated"] = dict(dropped)
        line = for_terminal_json(fitted, default=str)
    return line


def _short_entry(entry: Any) -> Any:
    if isinstance(entry, str) and len(entry) > ENTRY_TEXT:
        return _cut(entry, len(entry.encode("utf-8")) - ENTRY_TEXT)
    if isinstance(entry, dict):
        return {k: _short_entry(v) for k, v in entry.items()}
    return entry


def fit_text(line: str) -> str:
    """A plain text line (made inert) under MAX_LINE_BYTES, cut with a marker when longer."""
    text = for_terminal(line)
    while _size(text) > MAX_LINE_BYTES:
        text = _cut(text, _size(text) - MAX_LINE_BYTES)
    return text


class JsonLog:
    """Where JSON lines go: a stream, the run and domain they belong to (None until known)."""

    def __init__(self, target: TextIO, clock: Callable[[], datetime]) -> None:
        self.target = target
        self.clock = clock
        self.run_id: str | None = None
        self.domain: str | None = None
        self._lock = threading.Lock()

    def bind(self, run_id: str | None, domain: str | None) -> None:
        """From now on, lines belong to this run and domain."""
        self.run_id, self.domain = run_id, domain

    def emit(self, severity: str, fields: dict[str, Any], *, ts: datetime | None = None) -> None:
        """Write one record: severity, ts, run_id and domain first, then `fields`."""
        record = {
            "severity": severity,
            "ts": iso(ts or self.clock()),
            "run_id": self.run_id,
            "domain": self.domain,
            **fields,
        }
        line = fit_record(record)
        with self._lock:
            self.target.write(line + "\n")
            self.target.flush()


class LineStream(io.TextIOBase):
    """A text stream whose every line becomes one record of `log` (for text sent to stderr)."""

    def __init__(self, log: JsonLog, severity: str = "INFO") -> None:
        super().__init__()
        self.log = log
        self.severity = severity
        self._partial = ""
        self._lock = threading.Lock()

    def writable(self) -> bool:
        """Always: it is a stream to write to."""
        return True

    def write(self, s: str) -> int:
        """Buffer `s`; emit one record per complete line."""
        with self._lock:  # threads (a server's) write to stderr too
            *lines, self._partial = (self._partial + s).split("\n")
        for line in lines:
            self.log.emit(self.severity, {"message": line})
        return len(s)

    def close(self) -> None:
        """Emit what is left of an unfinished line."""
        if self._partial:
            self.log.emit(self.severity, {"message": self._partial})
            self._partial = ""
        super().close()


class _Handler(logging.Handler):
    """`logging` records as JSON lines: the level is the severity."""

    def __init__(self, log: JsonLog) -> None:
        super().__init__()
        self.log = log

    def emit(self, record: logging.LogRecord) -> None:
        fields: dict[str, Any] = {"logger": record.name, "message": record.getMessage()}
        if record.exc_info:
            fields["exception"] = logging.Formatter().formatException(record.exc_info)
        self.log.emit(record.levelname, fields)


@contextmanager
def python_logs_to(log: JsonLog) -> Iterator[None]:
    """While the block runs, Python warnings and `logging` records become lines of `log`."""

    def show(
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: TextIO | None = None,
        line: str | None = None,
    ) -> None:
        fields = {
            "logger": "py.warnings",
            "category": category.__name__,
            "message": str(message),
            "where": f"{filename}:{lineno}",
        }
        log.emit("WARNING", fields)

    handler = _Handler(log)
    root = logging.getLogger()
    previous = warnings.showwarning
    warnings.showwarning = show
    root.addHandler(handler)
    try:
        yield
    finally:
        root.removeHandler(handler)
        warnings.showwarning = previous
