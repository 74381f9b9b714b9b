"""A domain's shadow records read back for `policy report`: segment by segment, in bounded memory.

Only the `shadowed` and `shadow_matched` records (core/standing/shadow.py) since a time are kept;
every other line is skipped before it is parsed. Read-only: a torn or bad line is skipped (the
next run sets a torn tail aside, and `custodian inspect` names damage).
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from custodian_runtime.core.authority.refusals import HELD_NO, held_class
from custodian_runtime.core.journal.api import Record, parse_at
from custodian_runtime.core.journal.kinds import RulingRecord, read_as
from custodian_runtime.core.standing.shadow import SHADOW_KINDS
from custodian_runtime.journal.store import JournalStore, lines_from, parse_line


def shadow_log(memory_dir: Path, domain: str, since: datetime) -> list[Record]:
    """The domain's shadow records journaled at or after `since`, in journal order."""
    found: list[Record] = []
    for segment in JournalStore(memory_dir).layout(domain).segments():
        for _, raw in lines_from(segment.path):
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
    for segment in JournalStore(memory_dir).layout(domain).segments():
        for _, raw in lines_from(segment.path):
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
    for segment in JournalStore(memory_dir).layout(domain).segments():
        for _, raw in lines_from(segment.path):
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
