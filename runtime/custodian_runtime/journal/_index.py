"""The runs index on disk: a domain's runs as rows, kept beside its journal like the checkpoint.

    journal/<domain>.runs.jsonl   one line per run whose row is final, oldest first (append-only)
    journal/<domain>.runs.json    the fold's state (core/fold/run_index.py): where it stands in
                                  the chain, the open rows, and the byte offset of every
                                  STRIDE-th row line, so a page of rows is read with one seek

It is a view for people (the review page, `inspect`'s listing), never read by a run or the
authority. Like the checkpoint, it is saved by each commit (folding in the records after it: a
run's own) and rebuilt by one full scan when it is missing, of another version, of another start
(a prune moved the anchor), or does not match the journal; a journal it cannot fold run by run is
marked so, and no later commit scans it again. `update` saves it under an flock of its own on the
rows file (skipped when taken), so a commit and a prune never interleave their writes. Readers
never write: one folds the tail after it in memory, or the whole journal when it is missing.
Each row line names the index's generation and its own number, so a row read across a rebuild
is detected, not trusted.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import secrets
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from custodian_runtime.core.digest import canonical_json, strict_loads
from custodian_runtime.core.fold.checkpoint import EMPTY_HEAD, Head
from custodian_runtime.core.fold.run_index import (
    INDEX_VERSION,
    Place,
    RunDigest,
    RunsFold,
    fold_runs,
)
from custodian_runtime.core.journal.records import Record
from custodian_runtime.errors import JournalError
from custodian_runtime.files.atomic import atomic_write_bytes
from custodian_runtime.journal._checkpoint import (
    Parse,
    Position,
    Torn,
    chunks,
    iter_records,
    later_segments,
    load_anchor,
    segment_of,
)
from custodian_runtime.journal._segments import Layout, Segment, read_range

STRIDE = 64  # a row line's offset is kept for every 64th row


class IndexFile(BaseModel):
    """The state file: the fold, where its head lies, and where the row lines are."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    fold: RunsFold
    position: Position | None = None
    gen: str
    rows_bytes: int = 0
    marks: tuple[int, ...] = ()
    # Why this journal cannot be folded run by run (damage, a broken spine), so that no commit
    # scans it again: its readers read it whole. A prune (a new start) tries again.
    unfoldable: str | None = None


class RowLine(BaseModel):
    """One line of the rows file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    gen: str
    n: int
    row: RunDigest


class StaleIndex(Exception):
    """A row line is not the one the state file promised (a rebuild ran meanwhile)."""


@dataclass
class Indexed:
    """The index with the tail folded in: rows on disk, rows made final since, the open rows."""

    fold: RunsFold
    saved: IndexFile | None  # the state file the on-disk rows belong to (None: none used)
    fresh: list[RunDigest] = field(default_factory=list)  # final rows not on disk yet
    position: Position | None = None
    torn: str | None = None

    @property
    def total(self) -> int:
        """How many runs the journal holds."""
        return self.fold.rows + len(self.fold.loose)


def state_path(layout: Layout) -> Path:
    """The index's state file."""
    return layout.journal_dir / f"{layout.domain}.runs.json"


def rows_path(layout: Layout) -> Path:
    """The index's rows file."""
    return layout.journal_dir / f"{layout.domain}.runs.jsonl"


def _start(layout: Layout) -> Head:
    """Where the journal's chain starts: after the anchor of a prune, or at the beginning."""
    anchor = load_anchor(layout)  # unsealed read: a view for people, like the page's reads
    return EMPTY_HEAD if anchor is None else anchor.head()


def load(layout: Layout, parse: Parse) -> IndexFile | None:
    """The saved index, if it is of this release, this domain and start, and matches the chain."""
    try:
        saved = IndexFile.model_validate(strict_loads(state_path(layout).read_bytes()))
    except (OSError, ValueError, ValidationError):
        return None
    fold = saved.fold
    if fold.v != INDEX_VERSION or fold.domain != layout.domain or fold.start != _start(layout).seq:
        return None
    if saved.unfoldable is not None:
        return saved  # an append-only journal stays so: kept until a prune moves its start
    if saved.position is None:
        return saved if fold.head.seq == fold.start else None
    if _head_record(layout, saved, parse) is None:
        return None
    return saved


def _head_record(layout: Layout, saved: IndexFile, parse: Parse) -> Record | None:
    """The index's head record where the state file says it ends (None if it is not there)."""
    assert saved.position is not None
    segment = segment_of(layout, saved.position.segment)
    if segment is None:
        return None
    raw = read_range(segment.path, saved.position.head_start, saved.position.offset)
    record = parse(raw[:-1]) if raw.endswith(b"\n") else None
    head = saved.fold.head
    if not isinstance(record, Record) or (record.seq, record.hash) != (head.seq, head.hash):
        return None
    return record


def current(layout: Layout, parse: Parse) -> Indexed:
    """The index with the tail after it folded in (read-only); one full scan in memory without
    one; StaleIndex when the journal cannot be folded run by run."""
    return _current(layout, parse, load(layout, parse))


def _current(layout: Layout, parse: Parse, saved: IndexFile | None) -> Indexed:
    if saved is not None and saved.unfoldable is not None:
        raise StaleIndex(saved.unfoldable)
    if saved is not None:
        found = _resume(layout, saved, parse)
        if found is not None:
            return found
    return _rebuild(layout, parse)


def _resume(layout: Layout, saved: IndexFile, parse: Parse) -> Indexed | None:
    if saved.position is None:
        segments, offset = layout.segments(), 0
    else:
        segments, offset = later_segments(layout, saved.position.segment), saved.position.offset
    return _folded(segments, offset, saved.fold, saved, parse, saved.position)


def _rebuild(layout: Layout, parse: Parse) -> Indexed:
    start = _start(layout)
    fold = RunsFold(domain=layout.domain, start=start.seq, head=start)
    found = _folded(layout.segments(), 0, fold, None, parse, None)
    if found is None:
        raise StaleIndex("the journal's runs cannot be folded one by one")
    return found


def _folded(
    segments: list[Segment], offset: int, fold: RunsFold, saved: IndexFile | None, parse: Parse,
    position: Position | None,
) -> Indexed | None:  # fmt: skip
    torn, where = Torn(), [0, 0, 0]
    places: dict[int, Place] = {}
    fresh: list[RunDigest] = []
    for batch in chunks(_placed(iter_records(segments, offset, parse, torn, where), where, places)):
        result = fold_runs(fold, batch, places)
        if result is None:
            return None
        fold, done = result
        fresh.extend(done)
        places.clear()
        position = Position(segment=where[0], head_start=where[1], offset=where[2])
    why = None
    if torn.at is not None:
        why = f"torn tail at byte {torn.at}, {len(torn.raw)} byte(s), {torn.reason}"
    return Indexed(fold, saved, fresh, position, why)


def _placed(
    records: Iterator[Record], where: list[int], places: dict[int, Place]
) -> Iterator[Record]:
    for record in records:
        places[record.seq] = (where[0], where[1])
        yield record


def rows(layout: Layout, indexed: Indexed, first: int, end: int) -> list[RunDigest]:
    """Rows `first` to `end` (0 = the oldest run), from the rows file, the fresh and open rows."""
    on_disk = indexed.saved.fold.rows if indexed.saved is not None else 0
    found = _disk_rows(layout, indexed.saved, first, min(end, on_disk)) if first < on_disk else []
    later = [*indexed.fresh, *indexed.fold.loose]
    found.extend(later[max(first, on_disk) - on_disk : max(end, on_disk) - on_disk])
    return found


def _disk_rows(layout: Layout, saved: IndexFile | None, first: int, end: int) -> list[RunDigest]:
    if saved is None or first >= end:
        return []
    mark = first // STRIDE
    if mark >= len(saved.marks):
        raise StaleIndex(f"no mark for row {first}")
    found: list[RunDigest] = []
    with rows_path(layout).open("rb") as handle:
        handle.seek(saved.marks[mark])
        n = mark * STRIDE
        for raw in handle:
            if n >= end:
                break
            if n >= first:
                found.append(_row_of(raw, saved.gen, n))
            n += 1
    if len(found) != end - first:
        raise StaleIndex("the rows file ends before the rows its state names")
    return found


def _row_of(raw: bytes, gen: str, n: int) -> RunDigest:
    try:
        line = RowLine.model_validate(strict_loads(raw))
    except (ValueError, ValidationError) as exc:
        raise StaleIndex(f"row {n} cannot be read") from exc
    if line.gen != gen or line.n != n:
        raise StaleIndex(f"row {n} is of another index")
    return line.row


def update(layout: Layout, parse: Parse) -> None:
    """Bring the saved index up to the journal's end, under the index's own lock (skipped when
    another writer holds it: the records it leaves are the next one's tail)."""
    if not layout.exists():
        return
    fd = os.open(rows_path(layout), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return
        saved = load(layout, parse)
        if saved is not None and saved.unfoldable is not None:
            return
        try:
            indexed = _current(layout, parse, saved)
        except (StaleIndex, JournalError, ValueError) as exc:
            _save_unfoldable(layout, fd, str(exc))
            return
        _save(layout, fd, indexed)
    finally:
        os.close(fd)


def refresh(layout: Layout, parse: Parse) -> None:
    """`update`, for a writer that holds the run lock (a commit, a prune): an index that cannot
    be saved is left to its readers, which fold the tail or read the journal whole."""
    with contextlib.suppress(OSError):
        update(layout, parse)


def _save_unfoldable(layout: Layout, fd: int, why: str) -> None:
    os.ftruncate(fd, 0)
    start = _start(layout)
    fold = RunsFold(domain=layout.domain, start=start.seq, head=start)
    state = IndexFile(fold=fold, gen=secrets.token_hex(6), unfoldable=why or "unfoldable")
    atomic_write_bytes(state_path(layout), canonical_json(state.model_dump(mode="json")).encode())


def _save(layout: Layout, fd: int, indexed: Indexed) -> None:
    saved = indexed.saved
    if saved is not None and not indexed.fresh and saved.fold == indexed.fold:
        return
    gen = saved.gen if saved is not None else secrets.token_hex(6)
    size = saved.rows_bytes if saved is not None else 0
    marks = list(saved.marks) if saved is not None else []
    n = saved.fold.rows if saved is not None else 0
    lines: list[bytes] = []
    for row in indexed.fresh:
        if n % STRIDE == 0:
            marks.append(size + sum(len(x) for x in lines))
        lines.append((canonical_json(RowLine(gen=gen, n=n, row=row).model_dump()) + "\n").encode())
        n += 1
    os.ftruncate(fd, size)
    os.lseek(fd, size, os.SEEK_SET)
    for line in lines:
        os.write(fd, line)
    os.fsync(fd)
    state = IndexFile(
        fold=indexed.fold, position=indexed.position, gen=gen,
        rows_bytes=size + sum(len(x) for x in lines), marks=tuple(marks),
    )  # fmt: skip
    atomic_write_bytes(state_path(layout), canonical_json(state.model_dump(mode="json")).encode())
