"""Durable appends to one domain journal: one line per record, fsync'd before append returns."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from custodian_runtime.core.fold.api import Record, derived_counts, interrupted_runs, make_record
from custodian_runtime.core.fold.checkpoint import fold
from custodian_runtime.core.journal.kinds import Entry, Finished, encode
from custodian_runtime.core.journal.records import RUN_FIRST_KINDS
from custodian_runtime.core.journal.seals import SealKey, seal_record
from custodian_runtime.errors import JournalError
from custodian_runtime.journal._checkpoint import CheckpointFile, Opened, Position
from custodian_runtime.journal._segments import SEGMENT_BYTES, Layout, first_line_seq

Fsync = Callable[[int], None]
# A new run starts a new segment once the active one is past its size: segments hold whole runs.
ROTATE_BEFORE = RUN_FIRST_KINDS


def fsync_dir(directory: Path, fsync: Fsync = os.fsync) -> None:
    """Make a new entry in `directory` durable: fsync(2) on a file does not cover its name."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        fsync(fd)
    finally:
        os.close(fd)


T = TypeVar("T")


class JournalWriter:
    """Appends records for one run; after any write or fsync error it refuses to go on.

    The active segment is rotated out (renamed into `<domain>.d/`) when a new run begins on a
    file past `segment_bytes`, so a segment holds whole runs; the chain runs on across it.
    """

    def __init__(
        self,
        layout: Layout,
        run_id: str,
        clock: Callable[[], datetime],
        *,
        base: Opened,
        fsync: Fsync = os.fsync,
        seal_key: SealKey | None = None,
        segment_bytes: int = SEGMENT_BYTES,
    ) -> None:
        self.layout = layout
        self.path = layout.active
        self.domain = layout.domain
        self.run_id = run_id
        self._clock = clock
        self._base = base
        self._last = base.head
        self._size = self.path.stat().st_size if self.path.exists() else 0
        self._first_seq = first_line_seq(self.path) if self._size else None
        self._position = base.position
        self._segment_bytes = segment_bytes
        self._fsync = fsync
        self._broken: str | None = None
        self._seal_key = seal_key
        self.appended: list[Record] = []

    @property
    def last(self) -> Record | None:
        """The newest record in the journal (ours or the one we continued from)."""
        return self._last

    def checkpoint_file(self) -> CheckpointFile | None:
        """The checkpoint of the journal as it stands after this writer's appends."""
        if self._broken is not None or self._position is None:
            return None
        if not self.appended and self._base.rebuilt is None and not self._base.tail:
            return None  # the saved checkpoint already says this
        return CheckpointFile(
            checkpoint=fold(self._base.checkpoint, self.appended), position=self._position
        )

    def append(self, kind: str, data: Mapping[str, Any]) -> Record:
        """Write one record for this run and return once it is on disk."""
        return self._append(kind, data, self.run_id)

    def write(self, entry: Entry) -> Record:
        """Write the record of one typed entry (core/journal/kinds.py) for this run."""
        return self._append(*encode(entry), self.run_id)

    def close_interrupted(self, history: Sequence[Record]) -> list[Record]:
        """Append `finished` (status interrupted) for each earlier run that never wrote one."""
        closed = []
        for run_id in interrupted_runs(history):
            if run_id == self.run_id:
                continue
            counts = derived_counts(history, run_id)
            ended = Finished(
                status="interrupted", exit_code=None, counts=counts, closed_by=self.run_id
            )
            closed.append(self._append(*encode(ended), run_id))
        return closed

    def _append(self, kind: str, data: Mapping[str, Any], run_id: str) -> Record:
        if self._broken is not None:
            raise JournalError(
                f"journal {self.path.name} refuses further appends after: {self._broken}",
                path=str(self.path),
            )
        record = make_record(self._last, run_id, self.domain, kind, self._clock(), data)
        if self._seal_key is not None:
            record = seal_record(self._seal_key, record)
        line = (record.line() + "\n").encode("utf-8")
        if kind in ROTATE_BEFORE and self._size >= self._segment_bytes:
            self._rotate()
        self._write(line)
        self._first_seq = self._first_seq or record.seq
        self._position = Position(
            segment=self._first_seq, head_start=self._size, offset=self._size + len(line)
        )
        self._last = record
        self._size += len(line)
        self.appended.append(record)
        return record

    def _rotate(self) -> None:
        """Seal the active segment: rename it into the segment directory, fsync both."""
        first = self._first_seq or first_line_seq(self.path)
        if first is None:
            return
        target = self.layout.sealed_path(first)
        self._guard("mkdir", lambda: target.parent.mkdir(parents=True, exist_ok=True))
        self._guard("rename", lambda: os.replace(self.path, target))
        self._guard("fsync of the directory", lambda: fsync_dir(target.parent, self._fsync))
        self._guard("fsync of the directory", lambda: fsync_dir(self.path.parent, self._fsync))
        self._size, self._first_seq = 0, None

    def _write(self, line: bytes) -> None:
        created = not self.path.exists()
        if created:
            self._make_dirs()
        fd = self._guard(
            "open", lambda: os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        )
        try:
            size = os.fstat(fd).st_size
            if size != self._size:
                self._broken = f"the file is {size} bytes, expected {self._size}"
                raise JournalError(
                    f"journal {self.path.name} changed under the writer ({self._broken}): another "
                    "process writes it without taking the run lock",
                    path=str(self.path),
                )
            self._guard("write", lambda: _write_all(fd, line))
            self._guard("fsync", lambda: self._fsync(fd))
        finally:
            os.close(fd)
        if created:
            self._guard("fsync of the directory", lambda: fsync_dir(self.path.parent, self._fsync))

    def _make_dirs(self) -> None:
        missing = [p for p in (self.path.parent.parent, self.path.parent) if not p.exists()]
        self._guard("mkdir", lambda: self.path.parent.mkdir(parents=True, exist_ok=True))
        for directory in missing:
            self._guard("fsync of the directory", partial(fsync_dir, directory.parent, self._fsync))

    def _guard(self, step: str, action: Callable[[], T]) -> T:
        # An fsync error is fatal: the kernel may already have dropped the dirty pages, so a
        # retry could "succeed" over lost data. Stop, and let a person inspect the journal.
        try:
            return action()
        except OSError as exc:
            self._broken = f"{step} failed: {exc}"
            raise JournalError(
                f"journal {self.path}: {step} failed ({exc}); the last record may not be durable. "
                "Not retrying: stop the run and check the disk, then `custodian inspect`",
                path=str(self.path),
                step=step,
            ) from exc


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
