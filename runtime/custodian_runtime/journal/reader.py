"""One read API of a domain's runs, for people: the review page, `inspect`'s listing, replay.

It reads the runs index (journal/_index.py) and only the journal's tail after it, so showing a
page of runs costs the rows shown, not the journal's length. It never writes: the index is saved
by each commit (a journal of an earlier release without one is read whole until its next run
saves it). A torn tail is reported, never set aside; rows carry no seals (`custodian inspect`
verifies, a run refuses), and one run's records are checked with the key the reader was given.
A journal the index cannot fold run by run (damage, a broken spine) is read whole, as before,
with its damage reported.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from custodian_runtime.core.digest import canonical_json
from custodian_runtime.core.fold.run_index import RunDigest, UseRow, digests_of, with_late
from custodian_runtime.core.journal.records import Record
from custodian_runtime.core.journal.seals import SealKey
from custodian_runtime.errors import JournalError
from custodian_runtime.journal._index import StaleIndex, current, rows
from custodian_runtime.journal._lines import record_of
from custodian_runtime.journal._segments import lines_from
from custodian_runtime.journal.store import JournalStore, ReadResult, parse_line

PAGE = 50


@dataclass(frozen=True)
class RunsPage:
    """One page of a domain's runs, newest first, how many there are, and what is wrong."""

    domain: str
    rows: tuple[RunDigest, ...]
    total: int
    size: int
    problems: tuple[str, ...] = ()

    @property
    def pages(self) -> int:
        """How many pages the runs fill (at least one)."""
        return max(1, -(-self.total // self.size))


@dataclass(frozen=True)
class _Whole:
    """A journal read whole: every run's row, and the store's damage and torn tail."""

    rows: list[RunDigest]
    problems: tuple[str, ...]


class JournalReader:
    """The journals under `<memory_dir>/journal/`, read through their runs index."""

    def __init__(self, memory_dir: Path, *, seal_key: SealKey | None = None):
        # With a key, the records of one run are refused without valid seals, as a run refuses.
        self.store = JournalStore(memory_dir, seal_key=seal_key)

    def domains(self) -> list[str]:
        """Domains that have a journal, sorted."""
        return self.store.domains()

    def runs(self, domain: str, page: int = 1, size: int = PAGE) -> RunsPage:
        """Page `page` (1 = newest) of the domain's runs, `size` a page, newest first."""
        try:
            return self._indexed_page(domain, page, size)
        except (StaleIndex, JournalError, ValueError):
            whole = self._whole(domain)
            newest = list(reversed(whole.rows))
            shown = newest[(page - 1) * size : page * size]
            return RunsPage(domain, tuple(shown), len(newest), size, whole.problems)

    def _indexed_page(self, domain: str, page: int, size: int) -> RunsPage:
        layout = self.store.layout(domain)
        indexed = current(layout, parse_line)
        end = max(0, indexed.total - (page - 1) * size)
        found = rows(layout, indexed, max(0, end - size), end)
        late = {(u.run_id, u.index): u for u in indexed.fold.late}
        shown = tuple(with_late(d, late) for d in reversed(found))
        problems = (f"{domain}.jsonl {indexed.torn}",) if indexed.torn else ()
        return RunsPage(domain, shown, indexed.total, size, problems)

    def every_run(self, domain: str) -> RunsPage:
        """Every run of the domain as one page, newest first, with what is wrong (rows only)."""
        return self.runs(domain, 1, sys.maxsize)

    def all_runs(self, domain: str) -> list[RunDigest]:
        """Every run of the domain, oldest first (the rows only, never the records)."""
        try:
            layout = self.store.layout(domain)
            indexed = current(layout, parse_line)
            found = rows(layout, indexed, 0, indexed.total)
        except (StaleIndex, JournalError, ValueError):
            return self._whole(domain).rows
        late = {(u.run_id, u.index): u for u in indexed.fold.late}
        return [with_late(d, late) for d in found]

    def grant_uses(self, domain: str) -> list[UseRow]:
        """Every write the domain's runs made under a grant, oldest first."""
        uses = [u for d in self.all_runs(domain) for u in d.uses]
        return sorted(uses, key=lambda u: (u.at, u.run_id, u.index))

    def notes(self, domain: str) -> dict[str, str]:
        """Run id -> the file name of its session note, for each run that wrote one."""
        return {d.run_id: d.note for d in self.all_runs(domain) if d.note}

    def find_run(self, run_id: str) -> str | None:
        """The domain whose journal holds the run `run_id`, or None."""
        for domain in self.domains():
            if any(d.run_id == run_id for d in self.all_runs(domain)):
                return domain
        return None

    def run_records(self, domain: str, run_id: str) -> list[Record]:
        """The records of one run, read from where it began (their seals checked with a key)."""
        row = next((d for d in self.all_runs(domain) if d.run_id == run_id), None)
        if row is None or row.place is None:
            return self.store.run_records(domain, run_id) if row is not None else []
        return self.store.checked(
            domain, [r for r in self._from(domain, row) if r.run_id == run_id]
        )

    def _from(self, domain: str, row: RunDigest) -> Iterator[Record]:
        assert row.place is not None
        segment, offset = row.place
        needle = canonical_json({"run_id": row.run_id})[1:-1].encode("utf-8")
        started = False
        for found in self.store.layout(domain).segments():
            started = started or found.first_seq == segment
            if not started:
                continue
            for _, raw in lines_from(found.path, offset if found.first_seq == segment else 0):
                record = record_of(raw) if needle in raw else None
                if record is not None:
                    yield record
                if record is not None and record.seq >= row.last_seq:
                    return

    def latest_run(self, domain: str) -> str | None:
        """The run that began last, preferring scheduled runs over a person's runs."""
        newest: str | None = None
        page, pages = 1, 1
        while page <= pages:
            shown = self.runs(domain, page)
            newest = newest or next((d.run_id for d in shown.rows), None)
            found = next((d.run_id for d in shown.rows if not d.approval), None)
            if found is not None:
                return found
            page, pages = page + 1, shown.pages
        return newest

    def _whole(self, domain: str) -> _Whole:
        result = self.store.scan(domain)
        return _Whole(digests_of(result.records), _problems(domain, result))


def _problems(domain: str, result: ReadResult) -> tuple[str, ...]:
    found = [f"{domain}.jsonl {damage}" for damage in result.damage]
    if result.torn_tail:
        found.append(f"{domain}.jsonl {result.torn_tail}")
    return tuple(found)
