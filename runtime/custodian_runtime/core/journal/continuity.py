"""Continuity across runs: which note the next prompt feeds forward, chosen from the journal.

Every note a run writes is journaled (`note_written`: its file name, the run's status, whether a
model wrote its prose, and the problem when the run failed). The next run picks the last run's
note by the time its run started, never by file name, and the newest note whose prose a model
wrote, so that a failed run does not hide the last real reasoning. The checkpoint keeps both
records (core/fold/checkpoint.py), so no run reads the whole journal for them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from custodian_runtime.core.journal.kinds import NoteWritten, read_as
from custodian_runtime.core.journal.records import Record, parse_at

_FILE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,200}\.md$")
PROBLEM_LIMIT = 500  # characters of a failed run's problem kept in its note_written record

# The note's prose sits between these markers; the note template writes them, continuity reads them.
PROSE_START = "<!-- custodian:prose -->"
PROSE_END = "<!-- /custodian:prose -->"


# The outcomes a note's front matter records its actions under (render/note.py's groups).
OUTCOMES = frozenset({"executed", "failed", "unknown", "stale", "not_sent", "queued", "held",
                      "denied", "would_execute", "would_queue"})  # fmt: skip
_WORD = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$")


@dataclass(frozen=True)
class LastAction:
    """One item of a run, as its note's front matter records it: what became of it, its
    operation and its target (`-` when it named none). The next prompt shows these, not prose."""

    outcome: str
    operation: str
    target: str


def note_actions(text: str) -> tuple[LastAction, ...] | None:
    """The actions a note's front matter records (`actions`); None when it records none.

    Only words that are ids survive: anything else in a field becomes `?`, so what the note
    holds is facts, never text that reads as instructions.
    """
    lines = text.split("\n")
    if not lines or lines[0] != "---" or "---" not in lines[1:]:
        return None
    front = lines[1 : lines.index("---", 1)]
    raw = next((line[len("actions: ") :] for line in front if line.startswith("actions: ")), None)
    try:
        rows = json.loads(raw) if raw is not None else None
    except ValueError:
        return None
    if not isinstance(rows, list):
        return None
    return tuple(_action(row) for row in rows if isinstance(row, list) and len(row) == 3)


def _action(row: list[object]) -> LastAction:
    outcome, operation, target = (_word(v) for v in row)
    return LastAction(outcome if outcome in OUTCOMES else "?", operation, target)


def _word(value: object) -> str:
    if value is None:
        return "-"
    return value if isinstance(value, str) and _WORD.fullmatch(value) else "?"


def prose_of(text: str) -> str | None:
    """The reasoning between a note's prose markers; None if absent or empty."""
    start, end = text.find(PROSE_START), text.find(PROSE_END)
    if start != -1 and end > start:
        return text[start + len(PROSE_START) : end].strip() or None
    return None


@dataclass(frozen=True)
class NoteRef:
    """One note a run wrote, as its `note_written` record names it."""

    run_id: str
    started_at: str
    first_seq: int  # journal order breaks a tie between runs started in the same instant
    file: str
    status: str
    prose: bool
    problem: str | None = None


@dataclass(frozen=True)
class Continuity:
    """The last run's note, and the newest note whose prose a model wrote (None if none)."""

    last: NoteRef | None = None
    reasoning: NoteRef | None = None


def note_data(file: str, sha256: str, status: str, prose: str, problem: str | None) -> NoteWritten:
    """The `note_written` record."""
    return NoteWritten(
        path=file,
        sha256=sha256,
        status=status,
        prose=bool(prose.strip()),
        problem=problem[:PROBLEM_LIMIT] if problem else None,
    )


def continuity(records: Sequence[Record]) -> Continuity:
    """The notes to feed forward, by the start time of the runs that wrote them."""
    refs = _refs(records)
    if not refs:
        return Continuity()
    last = max(refs, key=_order)
    with_prose = [ref for ref in refs if ref.prose]
    return Continuity(last, max(with_prose, key=_order) if with_prose else None)


def note_records(records: Sequence[Record]) -> list[Record]:
    """The `note_written` records `continuity` needs: the checkpoint keeps exactly these."""
    chosen = continuity(records)
    wanted = {(ref.run_id, ref.file) for ref in (chosen.last, chosen.reasoning) if ref is not None}
    return [
        r
        for r in records
        if r.kind == "note_written" and (r.run_id, str(read_as(r, NoteWritten).path)) in wanted
    ]


def _order(ref: NoteRef) -> tuple[float, int]:
    return (parse_at(ref.started_at).timestamp(), ref.first_seq)


def _refs(records: Sequence[Record]) -> list[NoteRef]:
    started: dict[str, Record] = {}
    refs: list[NoteRef] = []
    for r in records:
        started.setdefault(r.run_id, r)  # a run's first record is its start
        if r.kind != "note_written":
            continue
        note = read_as(r, NoteWritten)
        file = note.path
        if file is None or not _FILE.fullmatch(file):
            continue  # a name that is not a plain file of the notes directory is never read
        refs.append(
            NoteRef(
                run_id=r.run_id,
                started_at=started[r.run_id].at,
                first_seq=started[r.run_id].seq,
                file=file,
                status=note.status or "unknown",
                # A record from before `prose` was kept: its note may hold a model's prose.
                prose=note.prose,
                problem=note.problem,
            )
        )
    return refs
