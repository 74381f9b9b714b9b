"""A domain's shadow records read back for `policy report`: segment by segment, in bounded memory.

Only the `shadowed` and `shadow_matched` records (core/standing/shadow.py) since a time are kept;
every other line is skipped before it is parsed. Only the segments that can hold a record since
that time are read (`window`): segments are in journal order, so the newest one whose first
record is older than the time is the last one read; the cost follows the window, not the
history. Read-only: a torn or bad line is skipped (the next run sets a torn tail aside, and
`custodian inspect` names damage).
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from custodian_runtime.core.authority.refusals import HELD_NO, held_class
from custodian_runtime.core.fold.api import Record, parse_at
from custodian_runtime.core.journal.kinds import RulingRecord, read_as
from custodian_runtime.core.standing.shadow import SHADOW_KINDS
from custodian_runtime.journal.store import JournalStore, lines_from, parse_line


def window(memory_dir: Path, domain: str, since: datetime) -> list[Path]:
    """The domain's journal files that can hold a record at or after `since`, oldest first."""
    found: list[Path] = []
    for segment in reversed(JournalStore(memory_dir).layout(domain).segments()):
        found.append(segment.path)
        first = _first_at(segment.path)
        if first is not None and first < since:
            break  # every older segment's records came before this one's first
    return found[::-1]


def _first_at(path: Path) -> datetime | None:
    """When a file's first record was journaled (None: none, or it does not parse)."""
    for _, raw in lines_from(path):
        parsed = parse_line(raw.rstrip(b"\n"))
        return parse_at(parsed.at) if isinstance(parsed, Record) else None
    return None


def shadow_log(memory_dir: Path, domain: str, since: datetime) -> list[Record]:
    """The domain's shadow records journaled at or after `since`, in journal order."""
    found: list[Record] = []
    for path in window(memory_dir, domain, since):
        for _, raw in lines_from(path):
            if b'"shadow' not in raw or not raw.endswith(b"\n"):
                continue  # not a shadow record (each kind's name starts so), or a torn tail
            parsed = parse_line(raw.rstrip(b"\n"))
            if not isinstance(parsed, Record) or parsed.kind not in SHADOW_KINDS:
                continue
            if parse_at(parsed.at) >= since:
                found.append(parsed)
    return found


def held_count(memory_dir: Path, domain: str, since: datetime) -> int:
    """How many writes the domain's runs held in deference to a person at or after `since`."""
    found = 0
    for path in window(memory_dir, domain, since):
        for _, raw in lines_from(path):
            if b'"held_deference"' not in raw or not raw.endswith(b"\n"):
                continue  # not a held ruling (only those carry the code), or a torn tail
            parsed = parse_line(raw.rstrip(b"\n"))
            if isinstance(parsed, Record) and parsed.kind == "ruling":
                found += parse_at(parsed.at) >= since
    return found


def standing_nos(memory_dir: Path, domain: str, since: datetime) -> dict[str, tuple[int, str]]:
    """Per class a person's standing "no" held (core/authority/refusals.py), at or after `since`:
    how many proposals it held, and the newest one's sentence (the person's reasons)."""
    found: dict[str, tuple[int, str]] = {}
    needle = HELD_NO.encode()
    for path in window(memory_dir, domain, since):
        for _, raw in lines_from(path):
            if needle not in raw or not raw.endswith(b"\n"):
                continue  # no standing "no" in it, or a torn tail
            parsed = parse_line(raw.rstrip(b"\n"))
            if not isinstance(parsed, Record) or parsed.kind != "ruling":
                continue
            reason = str(read_as(parsed, RulingRecord).reason or "")
            label = held_class(reason)
            if label is not None and parse_at(parsed.at) >= since:
                count, _ = found.get(label, (0, ""))
                found[label] = (count + 1, reason[reason.index(HELD_NO) :])
    return found
