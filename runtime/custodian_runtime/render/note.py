"""The session note's Markdown: its own sections first, the model's prose after, all inert."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from custodian_runtime.core.inert import (
    code_span,
    for_markdown,
    for_prose,
    for_terminal_json,
    markdown_line,
)
from custodian_runtime.render.prompt import environment

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
    shadow: str | None = None  # shadow items a person did the same way on the hub
    narrowed: str | None = None  # grants suspended, classes held, by a person's reversal
    canon: Sequence[str] = ()  # the canon shown, one piece a line (core/journal/cited.py)
    canon_head: str | None = None
    earlier: str | None = None  # what became of the items the last note left waiting


_GROUPS = (
    ("executed", "Executed"),
    ("failed", "Authorized but failed"),
    ("unknown", "Sent, but no answer came (unknown: the next run settles it)"),
    ("stale", "Not written: the task changed under the run"),
    ("not_sent", "Authorized but not sent"),
    ("queued", "Queued for a person's approval"),
    # Denied in kind, but apart: a person's own decision of the task stands (held_deference).
    ("held", "Held in deference to a person"),
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
        "target": code_span(action.target) if action.target else None,
        "detail": markdown_line(action.detail, NOTE_LEVELS),
        "reason": markdown_line(action.reason, NOTE_LEVELS),
        "result": markdown_line(action.result, NOTE_LEVELS) if action.result else None,
        "title": markdown_line(action.title, NOTE_LEVELS) if action.title else None,
        "rationale": markdown_line(action.rationale, NOTE_LEVELS) if action.rationale else None,
    }


def _no_prose(status: str) -> str:
    """What the Reasoning section says when the note has no prose, true to how the run ended."""
    if status in ("completed", "partial"):
        return "_The model gave its plan without any reasoning._"
    if status == "skipped":
        return "_No model was asked on this run._"
    return "_The run ended before the model gave any reasoning._"


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
            no_prose=_no_prose(note.status),
            started_at=note.started_at.strftime("%Y-%m-%d %H:%M UTC"),
            headline=markdown_line(note.headline, NOTE_LEVELS),
            prose=_inert(for_markdown(note.prose.strip(), NOTE_LEVELS)),
            rulings=note.actions,
            action_groups=groups,
            observations=[markdown_line(o, NOTE_LEVELS) for o in note.observations],
            problem=for_markdown(note.problem, NOTE_LEVELS) if note.problem else None,
            raw_response=raw,
            shadow=for_markdown(note.shadow, NOTE_LEVELS) if note.shadow else None,
            narrowed=for_markdown(note.narrowed, NOTE_LEVELS) if note.narrowed else None,
            canon=[code_span(line) for line in note.canon],
            canon_head=note.canon_head,
            earlier=note.earlier,  # built inert, line by line (core/presentation/note_outcomes)
        )
    )
    return text.rstrip("\n") + "\n"
