"""What the model sees: the observed state under a token budget, untrusted text neutralized.

`build_view` is pure and deterministic. Items go in by priority (open flags, blocked tasks,
in-progress tasks with the stale ones first, open decisions, recent events, the approval queue,
todo tasks, then done or cancelled tasks by title); whatever does not fit is counted per category
and the count is shown to the model, so nothing is dropped silently.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from types import MappingProxyType
from typing import TypeVar

from custodian.core.context_items import (
    ApprovalBrief,
    Piece,
    approval_piece,
    closed_task_piece,
    decision_piece,
    event_piece,
    flag_piece,
    overview_table,
    rfc3339,
    task_piece,
    workstream_piece,
)
from custodian.core.contract import DomainSummary, StateSummary, Task
from custodian.core.neutralize import data_block, safe_domain

__all__ = [
    "CATEGORIES",
    "DEFAULT_CAPS",
    "NOTE_LIMIT",
    "ApprovalBrief",
    "PromptInputs",
    "PromptView",
    "Section",
    "build_view",
    "estimate_tokens",
    "omitted_sentence",
]

DEFAULT_CAPS: Mapping[str, int] = MappingProxyType(
    {"events": 20, "status_updates": 20, "flags": 10, "queued": 10}
)
NOTE_LIMIT = 6000  # characters of the last session note shown for continuity

# (key, heading, singular, plural), in the order items are selected and shown.
CATEGORIES: tuple[tuple[str, str, str, str], ...] = (
    ("workstreams", "Workstreams", "workstream", "workstreams"),
    ("flags", "Open flags", "open flag", "open flags"),
    ("blocked", "Blocked tasks", "blocked task", "blocked tasks"),
    ("in_progress", "In-progress tasks (least recent activity first)", "in-progress task",
     "in-progress tasks"),
    ("decisions", "Open decisions", "open decision", "open decisions"),
    ("events", "Recent events (newest first)", "event", "events"),
    ("pending", "Pending approvals (waiting for a person; do not propose these again)",
     "pending approval", "pending approvals"),
    ("rejected", "Recently rejected proposals (do not propose these again)",
     "rejected proposal", "rejected proposals"),
    ("todo", "Todo tasks", "todo task", "todo tasks"),
    ("closed", "Done or cancelled tasks (titles only)", "done or cancelled task",
     "done or cancelled tasks"),
)  # fmt: skip
T = TypeVar("T")
_DETAILS = ("details", "long text (descriptions, contexts)", "long text")


@dataclass(frozen=True)
class PromptInputs:
    """Everything the prompt is rendered from; `now` must be time-zone aware."""

    domain: str
    now: datetime
    overview: StateSummary
    summary: DomainSummary
    constitution: str
    domain_guidance: str | None
    last_note_prose: str | None
    pending: tuple[ApprovalBrief, ...] = ()
    rejected: tuple[ApprovalBrief, ...] = ()
    token_budget: int = 24000
    stale_after_days: int = 14
    caps: Mapping[str, int] = field(default_factory=lambda: dict(DEFAULT_CAPS))


@dataclass(frozen=True)
class Section:
    """One heading of the observed state and the items shown under it."""

    key: str
    heading: str
    items: tuple[str, ...]
    omitted: int = 0


@dataclass(frozen=True)
class PromptView:
    """The observed state as the user prompt shows it; `tokens` estimates the selected items."""

    domain: str
    now: str
    overview: tuple[str, ...]
    sections: tuple[Section, ...]
    omitted: Mapping[str, int]
    omitted_text: str | None
    last_note: str | None
    tokens: int


def estimate_tokens(text: str) -> int:
    """A provider-neutral token estimate: one token per four characters, rounded up."""
    return -(-len(text) // 4)


def build_view(inputs: PromptInputs, reserved_tokens: int = 0) -> PromptView:
    """Select what the model sees within `token_budget - reserved_tokens` for the items."""
    now = rfc3339(inputs.now)  # first: a naive `now` is refused before any arithmetic with it
    candidates = _candidates(inputs)
    room = inputs.token_budget - reserved_tokens
    chosen: dict[str, list[str]] = {key: [] for key, *_ in CATEGORIES}
    omitted: dict[str, int] = {}
    used, full = 0, False
    for key, render in candidates:
        piece = None if full else render()
        text = None if piece is None else _fit(piece, room - used)
        if piece is None or text is None:
            full = True  # keep priority strict: nothing of lower rank once something did not fit
            omitted[key] = omitted.get(key, 0) + 1
            continue
        if text != piece.full:
            omitted[_DETAILS[0]] = omitted.get(_DETAILS[0], 0) + 1
        chosen[key].append(text)
        used += _cost(text)
    ordered = {k: omitted[k] for k in [c[0] for c in CATEGORIES] + [_DETAILS[0]] if k in omitted}
    return PromptView(
        domain=safe_domain(inputs.domain),
        now=now,
        overview=overview_table(inputs.overview.domains, inputs.domain),
        sections=tuple(
            Section(k, h, tuple(chosen[k]), ordered.get(k, 0)) for k, h, *_ in CATEGORIES
        ),
        omitted=MappingProxyType(ordered),
        omitted_text=omitted_sentence(ordered),
        last_note=_note(inputs.last_note_prose),
        tokens=used,
    )


def _cost(text: str) -> int:
    # Each item is followed by a newline in the rendered prompt; per-item rounding up keeps the
    # sum an upper bound of the estimate of the whole.
    return estimate_tokens(text + "\n")


def _fit(piece: Piece, room: int) -> str | None:
    if _cost(piece.full) <= room:
        return piece.full
    if piece.compact is not None and _cost(piece.compact) <= room:
        return piece.compact
    return None


def _note(prose: str | None) -> str | None:
    if prose is None or not prose.strip():
        return None
    return data_block("last-note", "prose", prose, NOTE_LIMIT)


def omitted_sentence(omitted: Mapping[str, int]) -> str | None:
    """'12 todo tasks and 30 events not shown for space.' — or None when nothing was left out."""
    labels = {key: (one, many) for key, _, one, many in CATEGORIES}
    labels[_DETAILS[0]] = (_DETAILS[2], _DETAILS[1])
    parts = [
        f"{n} {labels[key][0] if n == 1 else labels[key][1]}"
        for key, n in omitted.items()
        if n > 0 and key != _DETAILS[0]
    ]
    sentence = ""
    if parts:
        listed = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
        sentence = f"{listed} not shown for space."
    details = omitted.get(_DETAILS[0], 0)
    if details:
        sentence += f" {details} items are shown without their long text for space."
    return sentence.strip() or None


def _candidates(inputs: PromptInputs) -> list[tuple[str, Callable[[], Piece]]]:
    summary, now = inputs.summary, inputs.now
    tasks = [task for ws in summary.workstreams for task in ws.tasks]
    last_event = _last_event_by_task(summary)
    open_flags = sorted(summary.open_flags, key=lambda f: (f.created_at, f.id))
    flagged = {f.task_id: f.id for f in open_flags if f.task_id}

    def open_task(stale: int | None) -> Callable[[Task], Piece]:
        return lambda t: task_piece(t, now, last_event.get(t.id), flagged.get(t.id), stale)

    def activity(t: Task) -> tuple[datetime, str]:
        return (max(t.updated_at, last_event.get(t.id, t.updated_at)), t.id)

    by_status = {s: [t for t in tasks if t.status == s] for s in ("todo", "in_progress", "blocked")}
    closed = [t for t in tasks if t.status in ("done", "cancelled")]
    return [
        *_tagged("workstreams", sorted(summary.workstreams, key=lambda w: w.id), workstream_piece),
        *_tagged("flags", open_flags, flag_piece),
        *_tagged("blocked", sorted(by_status["blocked"], key=activity), open_task(None)),
        *_tagged("in_progress", sorted(by_status["in_progress"], key=activity),
                 open_task(inputs.stale_after_days)),
        *_tagged("decisions", sorted(summary.open_decisions, key=lambda d: (d.created_at, d.id)),
                 decision_piece),
        *_tagged("events", sorted(summary.recent_events, key=lambda e: (e.created_at, e.id),
                                  reverse=True), event_piece),
        *_tagged("pending", inputs.pending, approval_piece),
        *_tagged("rejected", inputs.rejected, approval_piece),
        *_tagged("todo", sorted(by_status["todo"], key=_todo_order), open_task(None)),
        *_tagged("closed", sorted(closed, key=lambda t: (-t.updated_at.timestamp(), t.id)),
                 closed_task_piece),
    ]  # fmt: skip


def _tagged(
    key: str, items: Iterable[T], render: Callable[[T], Piece]
) -> list[tuple[str, Callable[[], Piece]]]:
    # Rendering (and neutralizing) waits until an item is considered: what is left out costs
    # only its count.
    return [(key, partial(render, item)) for item in items]


def _todo_order(task: Task) -> tuple[int, str, datetime, str]:
    # Tasks with a due date first, soonest first; then oldest first.
    due = task.due.isoformat() if task.due else ""
    return (0 if task.due else 1, due, task.created_at, task.id)


def _last_event_by_task(summary: DomainSummary) -> dict[str, datetime]:
    latest: dict[str, datetime] = {}
    for event in summary.recent_events:
        if event.task_id and (
            event.task_id not in latest or event.created_at > latest[event.task_id]
        ):
            latest[event.task_id] = event.created_at
    return latest
