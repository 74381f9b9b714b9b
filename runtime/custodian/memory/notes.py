"""Session notes under `memory/working/`: what a person reads after a run."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from custodian.core.inert import (
    code_span,
    for_markdown,
    for_prose,
    for_terminal_json,
    markdown_line,
)
from custodian.memory.files import atomic_write_text
from custodian.prompt import environment

PROSE_START = "<!-- custodian:prose -->"
PROSE_END = "<!-- /custodian:prose -->"
# The note's own headings use levels 1 to 3; model and hub text never reaches them.
NOTE_LEVELS = 3


@dataclass(frozen=True)
class NoteAction:
    """One proposed item as the note shows it."""

    outcome: str
    operation: str
    target: str
    detail: str
    reason: str
    result: str | None = None
    title: str | None = None  # what the hub calls the target
    rationale: str | None = None  # the model's, for an item a person decides on


@dataclass(frozen=True)
class SessionNote:
    """Everything a note shows; rendered by `render_note`."""

    run_id: str
    domain: str
    status: str
    started_at: datetime
    finished_at: datetime
    headline: str
    front: Mapping[str, Any]
    prose: str = ""
    actions: Sequence[NoteAction] = ()
    observations: Sequence[str] = ()
    problem: str | None = None
    raw_response: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)


_GROUPS = (
    ("executed", "Executed"),
    ("failed", "Authorized but failed"),
    ("stale", "Not written: the task changed under the run"),
    ("not_sent", "Authorized but not sent"),
    ("queued", "Queued for a person's approval"),
    ("denied", "Denied"),
    ("would_execute", "Would execute (dry run)"),
    ("would_queue", "Would queue (dry run)"),
)


def front_matter(values: Mapping[str, Any]) -> str:
    """YAML front matter; every value is written as JSON, which YAML reads as is."""
    lines = ["---"]
    lines += [f"{key}: {for_terminal_json(value)}" for key, value in values.items()]
    lines.append("---")
    return "\n".join(lines) + "\n"


def _inert(prose: str) -> str:
    # The model's prose must not be able to fake the markers we read continuity from.
    return prose.replace("<!-- custodian:", "<!-- custodian :").replace(
        "<!-- /custodian:", "<!-- /custodian :"
    )


def _shown(action: NoteAction) -> dict[str, str | None]:
    # Every field may hold model or hub text: one line each, controls escaped, no headings.
    return {
        "operation": code_span(action.operation),
        "target": code_span(action.target),
        "detail": markdown_line(action.detail, NOTE_LEVELS),
        "reason": markdown_line(action.reason, NOTE_LEVELS),
        "result": markdown_line(action.result, NOTE_LEVELS) if action.result else None,
        "title": markdown_line(action.title, NOTE_LEVELS) if action.title else None,
        "rationale": markdown_line(action.rationale, NOTE_LEVELS) if action.rationale else None,
    }


def render_note(note: SessionNote) -> str:
    """The note's Markdown text: its own sections first, model prose after them, all inert."""
    groups = [
        {"title": title, "entries": [_shown(a) for a in note.actions if a.outcome == key]}
        for key, title in _GROUPS
    ]
    raw = for_prose(note.raw_response).replace("~~~~~~~~", "~ ~ ~ ~") if note.raw_response else None
    text = (
        environment()
        .get_template("note.md.j2")
        .render(
            front_matter=front_matter(note.front),
            domain=markdown_line(note.domain, NOTE_LEVELS),
            started_at=note.started_at.strftime("%Y-%m-%d %H:%M UTC"),
            headline=markdown_line(note.headline, NOTE_LEVELS),
            prose=_inert(for_markdown(note.prose.strip(), NOTE_LEVELS)),
            rulings=note.actions,
            action_groups=groups,
            observations=[markdown_line(o, NOTE_LEVELS) for o in note.observations],
            problem=for_markdown(note.problem, NOTE_LEVELS) if note.problem else None,
            raw_response=raw,
        )
    )
    return text.rstrip("\n") + "\n"


def note_path(working_dir: Path, domain: str, started_at: datetime) -> Path:
    """`memory/working/<UTC timestamp>-<domain>.md`, unique within the directory."""
    stamp = started_at.strftime("%Y%m%dT%H%M%SZ")
    path = working_dir / f"{stamp}-{domain}.md"
    counter = 2
    while path.exists():
        path = working_dir / f"{stamp}-{domain}.{counter}.md"
        counter += 1
    return path


def write_note(working_dir: Path, note: SessionNote) -> tuple[Path, str]:
    """Render and write the note atomically; return its path and text."""
    text = render_note(note)
    path = note_path(working_dir, note.domain, note.started_at)
    atomic_write_text(path, text)
    return path, text


def note_prose(working_dir: Path, file: str) -> str | None:
    """The reasoning a note holds, by its file name in `working_dir`; None if absent or empty."""
    path = working_dir / Path(file).name
    if not path.is_file():
        return None
    return _prose_of(path.read_text(encoding="utf-8", errors="replace"))


def _prose_of(text: str) -> str | None:
    start, end = text.find(PROSE_START), text.find(PROSE_END)
    if start != -1 and end > start:
        return text[start + len(PROSE_START) : end].strip() or None
    return None


def last_note_prose(working_dir: Path, domain: str) -> str | None:
    """The reasoning of the newest note for `domain` by its name's time and counter.

    Only for a journal that names no note (core/continuity.py chooses by the run's start time).
    """
    if not working_dir.is_dir():
        return None
    named = [(_note_order(p.name, domain), p) for p in working_dir.glob(f"*-{domain}*.md")]
    notes = sorted((order, p) for order, p in named if order is not None)
    for _, path in reversed(notes):
        prose = _prose_of(path.read_text(encoding="utf-8", errors="replace"))
        if prose is not None:
            return prose
    return None


def _note_order(name: str, domain: str) -> tuple[str, int] | None:
    match = re.match(r"^(?P<stamp>\d{8}T\d{6}Z)-(?P<domain>[a-z0-9-]+?)(\.(?P<n>\d+))?\.md$", name)
    if match is None or match.group("domain") != domain:
        return None
    return (match.group("stamp"), int(match.group("n") or 1))
