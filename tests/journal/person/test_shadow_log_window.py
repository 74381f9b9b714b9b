"""`policy report` reads back only the journal segments that can hold a record of its window:
the cost follows the window, not the history (runtime/custodian_runtime/standing/shadow_log.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from custodian_runtime.core.digest import canonical_json
from custodian_runtime.journal.person.shadow_log import shadow_log, window
from custodian_runtime.journal.store import JournalStore

DOMAIN = "website"
START = datetime(2026, 3, 1, 9, tzinfo=UTC)


def _line(seq: int, at: datetime, kind: str = "shadowed") -> str:
    record = {"v": 1, "seq": seq, "run_id": "run-1", "domain": DOMAIN, "kind": kind,
              "at": at.isoformat().replace("+00:00", "Z"), "data": {}, "prev": "0" * 64,
              "hash": "0" * 64}  # fmt: skip
    return canonical_json(record) + "\n"


def _journal(memory: Path) -> None:
    """Three sealed segments of ten days each, and the active file: one shadow record a day."""
    layout = JournalStore(memory).layout(DOMAIN)
    layout.sealed_dir.mkdir(parents=True)
    for part in range(4):
        days = range(part * 10, part * 10 + 10)
        text = "".join(_line(d + 1, START + timedelta(days=d)) for d in days)
        path = layout.active if part == 3 else layout.sealed_path(part * 10 + 1)
        path.write_text(text, "utf-8")


def test_only_the_segments_of_the_window_are_read(tmp_path: Path) -> None:
    _journal(tmp_path)
    layout = JournalStore(tmp_path).layout(DOMAIN)
    since = START + timedelta(days=25)
    assert window(tmp_path, DOMAIN, since) == [layout.sealed_path(21), layout.active]
    records = shadow_log(tmp_path, DOMAIN, since)
    assert [r.seq for r in records] == list(range(26, 41))
    # A window older than the history reads it all; one past its first record, from there.
    assert len(window(tmp_path, DOMAIN, START - timedelta(days=1))) == 4
    assert window(tmp_path, DOMAIN, START + timedelta(days=35)) == [layout.active]
