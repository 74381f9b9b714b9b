"""How each observed item is written for the model: one piece of text per item.

Untrusted fields go into data blocks.

Every piece comes in a full form and, where an item carries long text, a compact form without it,
so that a tight budget can still list the item.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime

from custodian.core.contract import (
    TEXT_LIMITS,
    Decision,
    DomainOverview,
    Flag,
    ProgressEvent,
    Task,
    WorkstreamWithTasks,
)
from custodian.core.neutralize import data_block, safe_domain, safe_id

NAME_LIMIT = 200  # owner, assignee, source, raised_by: the contract's limit on request bodies
_WORD = re.compile(r"^[a-z][a-z_]{0,63}$")


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
    """One item as text: `full`, and `compact` (None when the full form is already short)."""

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


def _days(n: int) -> str:
    return "1 day" if n == 1 else f"{n} days"


def _block(item_id: str, field: str, text: str) -> str:
    return data_block(item_id, field, text, TEXT_LIMITS.get(field, NAME_LIMIT))


def workstream_piece(ws: WorkstreamWithTasks) -> Piece:
    """A workstream: id, status, owner, title and its task counts."""
    counts: dict[str, int] = {}
    for task in ws.tasks:
        counts[task.status] = counts.get(task.status, 0) + 1
    tally = ", ".join(f"{n} {status}" for status, n in sorted(counts.items())) or "no tasks"
    owner = _block(ws.id, "owner", ws.owner) if ws.owner else "none"
    head = f"- {safe_id(ws.id)} {ws.status}, owner {owner}, tasks: {tally}"
    return Piece(f"{head}\n  {_block(ws.id, 'title', ws.title)}")


def task_piece(
    task: Task,
    now: datetime,
    last_event: datetime | None,
    flag_id: str | None,
    stale_after_days: int | None = None,
) -> Piece:
    """An open task: status, workstream, age, assignee, due date, flag, title and description.

    With `stale_after_days`, a task with no update or event for longer than that is tagged STALE.
    """
    parts = [f"- {safe_id(task.id)} {task.status}, workstream {safe_id(task.workstream_id)}"]
    parts.append(f"updated {_days(days_between(task.updated_at, now))} ago")
    if last_event is not None:
        parts.append(f"last event {_days(days_between(last_event, now))} ago")
    if stale_after_days is not None:
        idle = days_between(max(task.updated_at, last_event or task.updated_at), now)
        if idle > stale_after_days:
            parts.append(f"STALE: no activity for {_days(idle)}")
    if task.assignee:
        parts.append(f"assignee {_block(task.id, 'assignee', task.assignee)}")
    if task.due is not None:
        parts.append(f"due {task.due.isoformat()}")
    if flag_id is not None:
        parts.append(f"open flag {safe_id(flag_id)}")
    head = ", ".join(parts) + f"\n  {_block(task.id, 'title', task.title)}"
    if not task.description.strip():
        return Piece(head)
    return Piece(f"{head}\n  {_block(task.id, 'description', task.description)}", head)


def closed_task_piece(task: Task) -> Piece:
    """A done or cancelled task: title only."""
    return Piece(f"- {safe_id(task.id)} {task.status}: {_block(task.id, 'title', task.title)}")


def flag_piece(flag: Flag) -> Piece:
    """An open flag: where it is, who raised it, since when, and its note."""
    target = f"task {safe_id(flag.task_id)}, " if flag.task_id else ""
    head = (
        f"- {safe_id(flag.id)} on {target}workstream {safe_id(flag.workstream_id)}, "
        f"open since {rfc3339(flag.created_at)}, raised by "
        f"{_block(flag.id, 'raised_by', flag.raised_by)}"
    )
    return Piece(f"{head}\n  {_block(flag.id, 'note', flag.note)}")


def decision_piece(decision: Decision) -> Piece:
    """An open decision: title, context and options."""
    scope = f", workstream {safe_id(decision.workstream_id)}" if decision.workstream_id else ""
    head = (
        f"- {safe_id(decision.id)} open since {rfc3339(decision.created_at)}{scope}\n"
        f"  {_block(decision.id, 'title', decision.title)}"
    )
    lines = [head]
    if decision.context.strip():
        lines.append(f"  {_block(decision.id, 'context', decision.context)}")
    for number, option in enumerate(decision.options[:20], start=1):
        lines.append(f"  {data_block(decision.id, f'option{number}', option, NAME_LIMIT)}")
    full = "\n".join(lines)
    return Piece(full, head if full != head else None)


def event_piece(event: ProgressEvent) -> Piece:
    """A progress event: when, what kind, where, from whom, and its summary."""
    task = f", task {safe_id(event.task_id)}" if event.task_id else ""
    head = (
        f"- {safe_id(event.id)} {rfc3339(event.created_at)} {event.event_type}, "
        f"workstream {safe_id(event.workstream_id)}{task}, source "
        f"{_block(event.id, 'source', event.source)}"
    )
    return Piece(f"{head}\n  {_block(event.id, 'summary', event.summary)}")


def overview_table(domains: tuple[DomainOverview, ...], current: str) -> tuple[str, ...]:
    """The cross-domain overview as a compact Markdown table, one row per domain, by name."""
    rows = [
        "| domain | workstreams active/paused/done | todo | in_progress | blocked | done "
        "| cancelled | open flags | open decisions | last event |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for item in sorted(domains, key=lambda d: d.domain):
        name = safe_domain(item.domain)
        label = f"{name} (this run)" if item.domain == current else name
        ws, t = item.workstreams, item.tasks
        last = rfc3339(item.last_event_at) if item.last_event_at else "never"
        rows.append(
            f"| {label} | {ws.active}/{ws.paused}/{ws.done} | {t.todo} | {t.in_progress} "
            f"| {t.blocked} | {t.done} | {t.cancelled} | {item.open_flags} "
            f"| {item.open_decisions} | {last} |"
        )
    return tuple(rows)


def approval_piece(brief: ApprovalBrief) -> Piece:
    """A queued or rejected proposal: its operation, target, summary and (if rejected) reason."""
    lines = [f"- {safe_id(brief.id)} {_word(brief, 'status')} {_word(brief, 'operation')}"]
    for name, value in (
        ("target", brief.target),
        ("summary", brief.summary),
        ("reason", brief.reason),
    ):
        if value:
            lines.append(f"  {data_block(brief.id, name, value, TEXT_LIMITS['summary'])}")
    return Piece("\n".join(lines))


def _word(brief: ApprovalBrief, field: str) -> str:
    # Operation names and statuses are written by the runtime, but an unknown operation came from
    # the model: anything that is not a plain lower-case word is shown as data.
    value: str = getattr(brief, field)
    if _WORD.fullmatch(value):
        return value
    return data_block(brief.id, field, value, NAME_LIMIT)
