"""Where a run's journal records go: the domain's journal on disk, or memory for a dry run."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, Protocol

from custodian_runtime.core.fold import api as core_journal
from custodian_runtime.core.journal.kinds import Entry, encode
from custodian_runtime.journal._writer import JournalWriter


class Journal(Protocol):
    """Where a run's records go: the domain's journal file, or memory for a dry run."""

    def append(self, kind: str, data: dict[str, Any]) -> core_journal.Record:
        """Append one record."""

    def write(self, entry: Entry) -> core_journal.Record:
        """Append the record of one typed entry (core/journal/kinds.py)."""

    def close_interrupted(self, history: list[core_journal.Record]) -> None:
        """Close the runs in `history` that never finished."""


class MemoryJournal:
    """Keeps records in memory: a dry run writes nothing to disk."""

    def __init__(self, run_id: str, domain: str, clock: Callable[[], datetime]) -> None:
        self.records: list[core_journal.Record] = []
        self._run_id, self._domain, self._clock = run_id, domain, clock

    def append(self, kind: str, data: dict[str, Any]) -> core_journal.Record:
        """Build the record as the disk journal would, and keep it."""
        prev = self.records[-1] if self.records else None
        record = core_journal.make_record(
            prev, self._run_id, self._domain, kind, self._clock(), data
        )
        self.records.append(record)
        return record

    def write(self, entry: Entry) -> core_journal.Record:
        """Append the record of one typed entry."""
        return self.append(*encode(entry))

    def close_interrupted(self, history: list[core_journal.Record]) -> None:
        """A dry run leaves earlier runs as they are."""


class DiskJournal:
    """The domain's journal on disk (each append is fsync'd before it returns)."""

    def __init__(self, writer: JournalWriter) -> None:
        self._writer = writer

    def append(self, kind: str, data: dict[str, Any]) -> core_journal.Record:
        """Append one record durably."""
        return self._writer.append(kind, data)

    def write(self, entry: Entry) -> core_journal.Record:
        """Append the record of one typed entry durably."""
        return self._writer.append(*encode(entry))

    def close_interrupted(self, history: list[core_journal.Record]) -> None:
        """Write `finished: interrupted` for earlier runs that were killed before finishing."""
        self._writer.close_interrupted(history)
