"""Where a domain's journal lies on disk: sealed segments, the active file, the checkpoint.

    journal/<domain>.jsonl                     the active segment (appends go here)
    journal/<domain>.d/<first seq>.jsonl   sealed segments, oldest first, named by first seq
    journal/<domain>.checkpoint.json       the folded checkpoint and where its head ends
    journal/<domain>.anchor.json           after a prune: seq and hash of the last dropped record
    journal/<domain>.runs.json(l)          the runs index people read (journal/_index.py)

The hash chain runs on across segments: a segment's first record links to the last of the one
before. A journal from before segments is an active segment with no sealed ones.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

SEGMENT_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True)
class Segment:
    """One file of a domain's journal; `first_seq` is None for an empty active file."""

    first_seq: int | None
    path: Path
    active: bool


@dataclass(frozen=True)
class Layout:
    """The paths of one domain's journal."""

    journal_dir: Path
    domain: str

    @property
    def active(self) -> Path:
        """The file appends go to."""
        return self.journal_dir / f"{self.domain}.jsonl"

    @property
    def sealed_dir(self) -> Path:
        """Where rotated segments are kept."""
        return self.journal_dir / f"{self.domain}.d"

    @property
    def checkpoint(self) -> Path:
        """The checkpoint file."""
        return self.journal_dir / f"{self.domain}.checkpoint.json"

    @property
    def anchor(self) -> Path:
        """The anchor a prune leaves."""
        return self.journal_dir / f"{self.domain}.anchor.json"

    def sealed_path(self, first_seq: int) -> Path:
        """The name a segment gets when it is rotated out."""
        return self.sealed_dir / f"{first_seq:012d}.jsonl"

    def segments(self) -> list[Segment]:
        """Sealed segments oldest first, then the active file if it exists."""
        found: list[Segment] = []
        if self.sealed_dir.is_dir():
            for path in sorted(self.sealed_dir.glob("*.jsonl")):
                if path.stem.isdigit():
                    found.append(Segment(int(path.stem), path, active=False))
        if self.active.exists():
            found.append(Segment(first_line_seq(self.active), self.active, active=True))
        return found

    def exists(self) -> bool:
        """Whether the domain has any journal file."""
        return self.active.exists() or self.sealed_dir.is_dir()


def first_line_seq(path: Path) -> int | None:
    """The seq of a file's first record, read from its first line (None when there is none)."""
    with path.open("rb") as handle:
        line = handle.readline(1 << 20)
    marker = b'"seq":'
    at = line.find(marker)
    if at < 0:
        return None
    digits = line[at + len(marker) :].split(b",", 1)[0]
    return int(digits) if digits.isdigit() else None


def lines_from(path: Path, offset: int = 0) -> Iterator[tuple[int, bytes]]:
    """(start offset, raw line with its newline) from `offset` on; the last may lack one."""
    with path.open("rb") as handle:
        handle.seek(offset)
        at = offset
        for raw in handle:
            yield at, raw
            at += len(raw)


def read_range(path: Path, start: int, end: int) -> bytes:
    """The bytes [start, end) of a file (shorter if the file is)."""
    with path.open("rb") as handle:
        handle.seek(start)
        return handle.read(max(0, end - start))
