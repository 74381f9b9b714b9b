"""The quick skip's appender: one record a line at the journal's end, fsync'd, as the writer does.

Light on purpose: the records' fields, hash, seal and line come from core/journal/chain.py and
core/journal/seal_key.py, which the typed writer (journal/_writer.py) builds on too.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from custodian_runtime.core.journal.chain import chain_fields, fields_hash, record_line
from custodian_runtime.core.journal.seal_key import RECORD_PREFIX
from custodian_runtime.journal.skip_facts import JournalEnd
from custodian_runtime.settings import Settings

Clock = Callable[[], datetime]


class Appender:
    """Appends one run's records to the active file, as journal/_writer.JournalWriter does:
    one line each, fsync'd before the next; the file must be the size the last one left."""

    def __init__(
        self, path: Path, settings: Settings, run_id: str, head: JournalEnd, clock: Clock
    ) -> None:
        assert settings.domain is not None
        self.path, self.domain, self.run_id = path, settings.domain, run_id
        self.key, self.clock, self.head = settings.seal_key, clock, head

    def append(self, kind: str, data: Mapping[str, Any]) -> int:
        """Write one record; where its line starts."""
        fields = chain_fields((self.head.seq, self.head.hash), self.run_id, self.domain, kind,
                              self.clock(), data)  # fmt: skip
        fields["hash"] = fields_hash(fields)
        if self.key is not None:
            fields["seal"] = self.key.mac(RECORD_PREFIX, fields["hash"])
        line = (record_line(fields) + "\n").encode("utf-8")
        start = self.head.offset
        _append_line(self.path, line, start)
        self.head = JournalEnd(fields["seq"], fields["hash"], start + len(line))
        return start


def _append_line(path: Path, line: bytes, expected: int) -> None:
    """One whole line at the end of `path`, on disk before this returns."""
    from custodian_runtime.errors import JournalError

    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    try:
        if os.fstat(fd).st_size != expected:
            raise JournalError(
                f"journal {path.name} changed under the writer: another process writes it "
                "without taking the run lock",
                path=str(path),
            )
        view = memoryview(line)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)
