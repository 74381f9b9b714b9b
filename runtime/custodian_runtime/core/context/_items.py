"""How each observed item is written for the model: one line per item.

A line starts with fixed columns separated by spaces (an id, a status, ages in days, the ids it
refers to), each a value the contract constrains or the runtime wrote, so none holds a space or a
`|`. The item's free text follows, each field after ` | ` and escaped by `inline`, so that it cannot
end the line, the field or the data block it sits in.

Every row comes in a full form and, where an item carries long text, a compact form without it,
so that a tight budget can still list the item.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime

from custodian_runtime.core._timestamps import activity_age, in_future
from custodian_runtime.core.context._sections import PROMPT_SECTIONS
from custodian_runtime.core.context.neutralize import inline, safe_domain, safe_id
from custodian_runtime.core.contract import (
    TEXT_LIMITS,
    Decision,
    DomainOverview,
    Flag,
    ProgressEvent,
    Task,
    WorkstreamWithTasks,
)
from custodian_runtime.core.operations import find as find_operation

NAME_LIMIT = 200  # owner, assignee, source, raised_by: the contract's limit on request bodies
_WORD = re.compile(r"^[a-z][a-z_]{0,63}$")
NONE = "-"
SUSPECT = "suspect"  # an age column whose time lies in the future

# The columns of each section's data block, as its opening marker names them.
COLUMNS: dict[str, str] = {s.key: s.columns for s in PROMPT_SECTIONS}


@dataclass(frozen=True)
class ApprovalBrief:
    """A queued proposal as the prompt shows it; `reason` says why it was rejected."""

    id: str
    operation: str
    target: str
    summary: str
    status: str
    reason: str | None = None


@dataclass(frozen=True)
class Piece:
    """One item as a line: `full`, and `compact` (None when the full form is already short)."""

    full: str
    compact: str | None = None


def rfc3339(moment: datetime) -> str:
    """A timestamp as RFC 3339 in UTC with a `Z`; a naive datetime is a programming error."""
    if moment.tzinfo is None:
        raise ValueError(f"timestamp {moment.isoformat()} has no time zone; pass an aware datetime")
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def days_between(earlier: datetime, later: datetime) -> int:
    """Whole days from `earlier` to `later`, never negative (clocks disagree)."""
    return max(0, (later - earlier).days)


def _row(fixed: list[str], texts: list[str], long_text: list[str] | None = None) -> Piece:
    # Trailing empty free-text fields are left off: the columns are positional from the left.
    def line(fields: list[str]) -> str:
        while fields and not fields[-1]:
            fields = fields[:-1]
        return " | ".join([" ".join(fixed), *fields])

    if not long_text or not any(long_text):
        return Piece(line(texts))
    return Piece(line(texts + long_text), line(texts))


def _text(value: str | None, field: str) -> str:
    return inline(value or "", TEXT_LIMITS.get(field, NAME_LIMIT))


def workstream_piece(ws: WorkstreamWithTasks) -> Piece:
    """A workstream: id, status, its task counts by status, owner and title."""
    counts = {s: 0 for s in ("todo", "in_progress", "blocked", "done", "cancelled")}
    for task in ws.tasks:
        counts[task.status] = counts.get(task.status, 0) + 1
    fixed = [safe_id(ws.id), ws.status, *(str(n) for n in counts.values())]
    return _row(fixed, [_text(ws.owner, "owner"), _text(ws.title, "title")])


def task_piece(
    task: Task,
    now: datetime,
    last_event: datetime | None,
    flag_id: str | None,
    stale_after_days: int | None = None,
) -> Piece:
    """An open task's line; with `stale_after_days`, a `stale` column for in-progress tasks.

    A time from the future shows as `suspect` in its age column and never counts as activity
    (core/_timestamps.py).
    """
    fixed = [safe_id(task.id), safe_id(task.workstream_id), _age(task.touched_at, now)]
    fixed.append(NONE if last_event is None else _age(last_event, now))
    if stale_after_days is not None:
        age = activity_age(task.touched_at, task.created_at, last_event, now)
        fixed.append("stale" if age.stale(stale_after_days) else NONE)
    fixed.append(task.due.isoformat() if task.due is not None else NONE)
    fixed.append(NONE if flag_id is None else safe_id(flag_id))
    texts = [_text(task.assignee, "assignee"), _text(task.title, "title")]
    return _row(fixed, texts, [_text(task.description, "description")])


def _age(moment: datetime, now: datetime) -> str:
    return SUSPECT if in_future(moment, now) else str(days_between(moment, now))


def closed_task_piece(task: Task) -> Piece:
    """A done or cancelled task: status and title."""
    return _row([safe_id(task.id), task.status], [_text(task.title, "title")])


def flag_piece(flag: Flag, now: datetime) -> Piece:
    """An open flag: its task and workstream, age, who raised it, and its note."""
    fixed = [safe_id(flag.id), safe_id(flag.task_id) if flag.task_id else NONE]
    fixed += [safe_id(flag.workstream_id), _age(flag.created_at, now)]
    return _row(fixed, [_text(flag.raised_by, "raised_by"), _text(flag.note, "note")])


def decision_piece(decision: Decision, now: datetime) -> Piece:
    """An open decision: workstream, age, title, then context and numbered options."""
    ws = safe_id(decision.workstream_id) if decision.workstream_id else NONE
    fixed = [safe_id(decision.id), ws, _age(decision.created_at, now)]
    options = " ".join(
        f"({n}) {_text(option, 'option')}" for n, option in enumerate(decision.options[:20], 1)
    )
    return _row(
        fixed, [_text(decision.title, "title")], [_text(decision.context, "context"), options]
    )


def event_piece(event: ProgressEvent, now: datetime) -> Piece:
    """A progress event: age, type, workstream, task, source and summary."""
    fixed = [safe_id(event.id), _age(event.created_at, now), event.event_type]
    fixed += [safe_id(event.workstream_id), safe_id(event.task_id) if event.task_id else NONE]
    return _row(fixed, [_text(event.source, "source"), _text(event.summary, "summary")])


def approval_piece(brief: ApprovalBrief) -> Piece:
    """A queued or rejected proposal: operation, target, summary and rationale or reason."""
    # Only an operation Custodian knows stands in the fixed column; any other name came from the
    # model, and goes into the summary text field, escaped like all text.
    known = find_operation(brief.operation) is not None
    operation = brief.operation if known else "unknown"
    summary = brief.summary if known else f"operation {brief.operation}; {brief.summary}"
    limit = TEXT_LIMITS["summary"]
    texts = [inline(v or "", limit) for v in (brief.target, summary, brief.reason)]
    return _row([safe_id(brief.id), operation], texts)


def overview_table(
    domains: tuple[DomainOverview, ...],
    current: str,
    rest: tuple[int, DomainOverview | None] = (0, None),
) -> tuple[str, ...]:
    """The cross-domain overview as a compact Markdown table, one row per domain, by name;
    `rest`: how many domains were left out, and their counts summed, shown as one last row."""
    rows = [
        "| domain | workstreams active/paused/done | todo | in_progress | blocked | done "
        "| cancelled | open flags | open decisions | last event |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for item in sorted(domains, key=lambda d: d.domain):
        name = safe_domain(item.domain)
        rows.append(_overview_row(f"{name} (this run)" if item.domain == current else name, item))
    left_out, summed = rest
    if left_out and summed is not None:
        rows.append(_overview_row(f"{left_out} more domains, summed", summed))
    return tuple(rows)


def _overview_row(label: str, item: DomainOverview) -> str:
    ws, t = item.workstreams, item.tasks
    last = rfc3339(item.last_event_at) if item.last_event_at else "never"
    return (
        f"| {label} | {ws.active}/{ws.paused}/{ws.done} | {t.todo} | {t.in_progress} "
        f"| {t.blocked} | {t.done} | {t.cancelled} | {item.open_flags} "
        f"| {item.open_decisions} | {last} |"
    )
