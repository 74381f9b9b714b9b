"""The per-domain journal on disk: `<memory>/journal/<domain>.jsonl`, one fsync'd record a line.

Reading parses every line back into a `Record`. Only the last line can be torn by a crash (each
append writes exactly one line and returns only after fsync), so a bad last line is set aside and
the file truncated to the last good newline; a bad line anywhere else is damage, never repaired.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from custodian_runtime.clock import utc_now
from custodian_runtime.core.digest import canonical_json
from custodian_runtime.core.fold.api import Record
from custodian_runtime.core.journal.seals import SealKey, verify_seals
from custodian_runtime.core.names import is_domain
from custodian_runtime.errors import JournalError, SealError
from custodian_runtime.journal._checkpoint import (
    CheckpointFile,
    Opened,
    Torn,
    save_checkpoint,
    sealed,
)
from custodian_runtime.journal._index import refresh
from custodian_runtime.journal._lines import (
    Parsed,
    parse_data,
    parse_line,
    record_of,
    torn_report,
)
from custodian_runtime.journal._names import check_domain as check_domain
from custodian_runtime.journal._open import Access, open_journal
from custodian_runtime.journal._segments import SEGMENT_BYTES, Layout, lines_from
from custodian_runtime.journal._torn import set_aside
from custodian_runtime.journal._writer import Fsync, JournalWriter, fsync_dir

Clock = Callable[[], datetime]


@dataclass(frozen=True)
class ReadResult:
    """The records of one domain journal, what happened to a torn tail, and any damage found."""

    records: tuple[Record, ...]
    torn_tail: str | None = None
    damage: tuple[str, ...] = ()
    size: int = 0


class JournalStore:
    """The journals under `<memory_dir>/journal/` (layout: journal/_segments.py)."""

    def __init__(
        self,
        memory_dir: Path,
        *,
        fsync: Fsync = os.fsync,
        clock: Clock = utc_now,
        segment_bytes: int = SEGMENT_BYTES,
        seal_key: SealKey | None = None,
    ):
        self.memory_dir = Path(memory_dir)
        self.journal_dir = self.memory_dir / "journal"
        self._fsync = fsync
        self._clock = clock
        self._segment_bytes = segment_bytes
        # With a key, every read refuses a record without a valid seal and every append seals.
        self._seal_key = seal_key

    @property
    def seal_key(self) -> SealKey | None:
        """The seal key reads check and appends use (None: no seals)."""
        return self._seal_key

    @property
    def directory(self) -> Path:
        """Where the journals live (`<memory_dir>/journal`)."""
        return self.journal_dir

    def path(self, domain: str) -> Path:
        """The active journal file of `domain`."""
        return self.layout(domain).active

    def layout(self, domain: str) -> Layout:
        """The paths of `domain`'s journal."""
        return Layout(self.journal_dir, check_domain(domain))

    def domains(self) -> list[str]:
        """Domains that have a journal, sorted."""
        if not self.journal_dir.is_dir():
            return []
        active = {p.name[: -len(".jsonl")] for p in self.journal_dir.glob("*.jsonl")}
        sealed = {p.name[: -len(".d")] for p in self.journal_dir.glob("*.d") if p.is_dir()}
        # Any other file there is no domain's journal (no run could have written it).
        return sorted(name for name in active | sealed if is_domain(name))

    def scan(self, domain: str) -> ReadResult:
        """Read-only: parse every segment, report a torn tail and damage, change nothing."""
        result = self._read_all(domain)
        self._check_seals(domain, result.records)
        return result

    def read(self, domain: str, *, repair: bool = True) -> ReadResult:
        """Every record; a torn last line is set aside, damage elsewhere raises JournalError.

        With repair=False a torn tail is only reported (in `torn_tail`), never touched. This
        reads the whole journal: a run opens it with `open` instead.
        """
        result = self._read_all(domain)
        if result.damage:
            path = self.path(domain)
            raise JournalError(
                f"journal {path.name} is damaged at {result.damage[0]}"
                f"{f' (and {len(result.damage) - 1} more)' if len(result.damage) > 1 else ''}; "
                f"records after it cannot be trusted. Run `custodian inspect --domain {domain}` "
                "and move the file aside by hand to start a new journal",
                path=str(path),
                damage=result.damage,
            )
        self._check_seals(domain, result.records)
        if result.torn_tail is None or not repair:
            return result
        path = self.path(domain)
        data = path.read_bytes()
        parsed = parse_data(data)
        return ReadResult(result.records, self._set_aside(path, data, parsed), (), result.size)

    def checked(self, domain: str, records: list[Record]) -> list[Record]:
        """`records` of `domain`, once their seals are checked (with a key; SealError if not)."""
        self._check_seals(domain, records)
        return records

    def _check_seals(self, domain: str, records: Sequence[Record]) -> None:
        if self._seal_key is None:
            return
        problems = verify_seals(records, self._seal_key)
        if not problems:
            return
        path = self.path(domain)
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise SealError(
            f"journal {path.name}, domain {domain}: {problems[0]}{more}. CUSTODIAN_SEAL_KEY is "
            "set, so every record must carry a valid seal; nothing was done. If the key was "
            "just rotated, set CUSTODIAN_SEAL_KEY_PREVIOUS to the old key (then `custodian "
            "journal reseal`); if the journal was written before any key was set, move it aside "
            "to start a new sealed journal (`custodian inspect` reads the old one with the key "
            "unset); otherwise someone without the key wrote to the memory volume: keep a copy "
            "and find out who",
            path=str(path),
            seq=problems[0].seq,
            kind=problems[0].kind,
        )

    def _read_all(self, domain: str) -> ReadResult:
        records: list[Record] = []
        damage: list[str] = []
        torn, size = None, 0
        for segment in self.layout(domain).segments():
            data = segment.path.read_bytes()
            parsed = parse_data(data)
            name = "" if segment.active else f"{segment.path.parent.name}/{segment.path.name} "
            records.extend(parsed.records)
            damage.extend(f"{name}{d}" for d in parsed.damage)
            if parsed.torn and not segment.active:
                damage.append(f"{name}line {parsed.torn_line}: {parsed.torn_reason}")
            elif parsed.torn:
                torn = torn_report(parsed)
            size = parsed.good_end
        return ReadResult(tuple(records), torn, tuple(damage), size)

    def _set_aside(self, path: Path, data: bytes, parsed: Parsed) -> str:
        aside = set_aside(path, parsed.torn, len(data), parsed.good_end, self._clock, self._fsync)
        return (
            f"line {parsed.torn_line}: torn tail, {len(parsed.torn)} byte(s), "
            f"{parsed.torn_reason}; set aside to {aside.name}"
        )

    def _set_aside_torn(self, path: Path, torn: Torn) -> str:
        assert torn.at is not None
        expected = torn.at + len(torn.raw)
        aside = set_aside(path, torn.raw, expected, torn.at, self._clock, self._fsync)
        return (
            f"torn tail at byte {torn.at}, {len(torn.raw)} byte(s), {torn.reason}; "
            f"set aside to {aside.name}"
        )

    def find_run(self, run_id: str) -> str | None:
        """The domain whose journal holds `run_id` (read-only, line by line), or None."""
        for domain in self.domains():
            if any(True for _ in self._lines_of(domain, run_id)):
                return domain
        return None

    def run_records(self, domain: str, run_id: str) -> list[Record]:
        """The records of one run, read line by line (their seals checked with a key)."""
        records = [r for r in (record_of(raw) for raw in self._lines_of(domain, run_id)) if r]
        self._check_seals(domain, records)
        return records

    def _lines_of(self, domain: str, run_id: str) -> Iterator[bytes]:
        needle = canonical_json({"run_id": run_id})[1:-1].encode("utf-8")
        for segment in self.layout(domain).segments():
            for _, raw in lines_from(segment.path):
                record = record_of(raw) if needle in raw else None
                if record is not None and record.run_id == run_id:
                    yield raw

    def open(self, domain: str, *, repair: bool = True) -> Opened:
        """What a run needs: the checkpoint with the tail folded in (see journal_open.py)."""
        layout = self.layout(domain)
        access = Access(
            parse=parse_line,
            check=lambda records: self._check_seals(domain, records),
            set_aside=(lambda torn: self._set_aside_torn(layout.active, torn)) if repair else None,
            key=self._seal_key,
        )
        return open_journal(layout, access)

    def writer(
        self, domain: str, run_id: str, clock: Clock, opened: Opened | None = None
    ) -> JournalWriter:
        """An appender for `run_id` that continues the domain's chain (hold the run lock)."""
        opened = opened if opened is not None else self.open(domain)
        return JournalWriter(
            self.layout(domain),
            run_id,
            clock,
            base=opened,
            fsync=self._fsync,
            segment_bytes=self._segment_bytes,
            seal_key=self._seal_key,
        )

    def commit(self, writer: JournalWriter) -> CheckpointFile | None:
        """Save the checkpoint of everything the writer's journal holds now (atomically); the
        checkpoint saved (None: the saved one already says it, or the writer broke)."""
        saved = writer.checkpoint_file()
        if saved is not None:
            save_checkpoint(writer.layout, sealed(self._seal_key, saved))
            refresh(writer.layout, parse_line)  # the runs index people read (journal/_index.py)
        return saved


__all__ = [
    "CheckpointFile",
    "JournalStore",
    "JournalWriter",
    "Opened",
    "ReadResult",
    "check_domain",
    "fsync_dir",
    "lines_from",
    "parse_line",
]
