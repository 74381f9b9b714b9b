"""What the model sees: the observed state under a token budget, untrusted text neutralized.

`build_view` is pure and deterministic. Each section (workstreams, in-progress tasks, blocked,
todo, open decisions, open flags, recent events, pending and rejected approvals, done or cancelled
titles) is one data block with one line per item, and gets a fair share of the budget
(core/context/_select.py). Within a section, what a person would look at first comes first: the
in-progress task idle longest, the task blocked longest, the todo task due soonest, the oldest
open decision and flag, the newest event. What a section leaves out is counted and shown to the
model, so nothing is dropped silently.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from types import MappingProxyType
from typing import TypeVar

from custodian_runtime.core._timestamps import activity_age
from custodian_runtime.core.canon.sections import CanonFile, CanonSection, entry
from custodian_runtime.core.context._items import (
    COLUMNS,
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
from custodian_runtime.core.context._sections import PROMPT_SECTIONS
from custodian_runtime.core.context._select import Candidates, select
from custodian_runtime.core.context.choose import Fitted
from custodian_runtime.core.context.neutralize import (
    data_block,
    data_close,
    data_open,
    safe_domain,
    safe_id,
)
from custodian_runtime.core.context.overview import bounded
from custodian_runtime.core.context.tokens import estimate_tokens
from custodian_runtime.core.contract import DomainSummary, StateSummary, Task
from custodian_runtime.core.journal.continuity import LastAction, NoteRef
from custodian_runtime.core.journal.records import parse_at
from custodian_runtime.core.limits import DEFAULT
from custodian_runtime.core.plan.answer import answer_keys

__all__ = [
    "CATEGORIES",
    "FORMS",
    "MAX_LAST_ACTIONS",
    "SECTIONS",
    "ApprovalBrief",
    "PromptInputs",
    "PromptView",
    "Section",
    "build_view",
    "estimate_tokens",
    "omitted_sentence",
    "section_items",
]

MAX_LAST_ACTIONS = 40  # the last run's actions shown as data; the rest are counted
# The prompt's forms: `full`, or `compact` for a small context window (no overview of the other
# domains, no closed tasks, the system prompt's explanations in brief).
FORMS = ("full", "compact")

# (key, heading, singular, plural), in the order the sections are shown (core/context/_sections.py).
CATEGORIES: tuple[tuple[str, str, str, str], ...] = tuple(
    (s.key, s.heading, s.singular, s.plural) for s in PROMPT_SECTIONS
)
SECTIONS: tuple[str, ...] = tuple(key for key, *_ in CATEGORIES)
T = TypeVar("T")
_DETAILS = ("details", "long text (descriptions, contexts)", "long text")
_MORE = "more "  # "(3 more not shown for space)": the frame is measured without it


@dataclass(frozen=True)
class PromptInputs:
    """Everything the prompt is rendered from; `now` must be time-zone aware."""

    domain: str
    now: datetime
    overview: StateSummary
    summary: DomainSummary
    constitution: str
    domain_guidance: str | None
    # This run's data-marker nonce, drawn by the shell (secrets.token_hex):
    # core/context/neutralize.py. Shown in the user prompt only, so that the system prompt is
    # the same for every run of a domain (a server's prefix cache can keep it).
    nonce: str
    # From the journal (core/journal/continuity.py): the last run's note, and the actions its
    # front matter records (None: it records none). The facts go forward; its prose never does.
    last_run: NoteRef | None = None
    last_actions: tuple[LastAction, ...] | None = None
    pending: tuple[ApprovalBrief, ...] = ()
    rejected: tuple[ApprovalBrief, ...] = ()
    # The run's Limits fills these (run/orient.py); the defaults are the limits'.
    token_budget: int = DEFAULT.token_budget
    stale_after_days: int = DEFAULT.stale_after_days
    caps: Mapping[str, int] = field(default_factory=DEFAULT.prompt_caps)
    # Operations this run cannot perform, with why (a read-only canon): not offered to the model.
    unavailable: Mapping[str, str] = field(default_factory=dict)
    # How the answer is written: Markdown with one ```json block (`fenced`), or one JSON object
    # in the plan's schema with the prose in its `prose` field (`json`: structured output).
    answer_form: str = "fenced"
    form: str = "full"  # one of FORMS
    # The canon beyond the constitution and the guidance (core/canon/): library files pinned for
    # this domain, shown whole in the system prompt; the sections retrieved for this state, best
    # first, of which render/prompt.py shows what fits in the canon's share of the budget; and how
    # many sections this domain's library holds in all.
    canon_pinned: tuple[CanonFile, ...] = ()
    canon_ranked: tuple[CanonSection, ...] = ()
    canon_sections: int = 0
    canon_share_percent: int = DEFAULT.canon_share_percent


@dataclass(frozen=True)
class Section:
    """One section of the observed state: its data block's opening line and one line per item."""

    key: str
    heading: str
    opening: str
    items: tuple[str, ...]
    omitted: int = 0
    total: int = 0


@dataclass(frozen=True)
class PromptView:
    """The observed state as the user prompt shows it; `tokens` estimates the selected items."""

    domain: str
    now: str
    overview: tuple[str, ...]
    sections: tuple[Section, ...]
    omitted: Mapping[str, int]
    omitted_text: str | None
    tokens: int
    data_close: str
    last_run: str | None = None
    # The last run's actions, one data line each, under their opening marker.
    last_actions: tuple[str, ...] = ()
    last_actions_opening: str = ""
    data_open: str = ""
    code: str = ""  # this run's nonce, named once at the top of the user prompt
    answer_form: str = "fenced"
    answer_keys: tuple[str, ...] = ()
    # The canon's sections retrieved for this run, each as the prompt shows it, and a sentence
    # saying how many of how many (empty, None: the canon has no sections to retrieve).
    canon: tuple[str, ...] = ()
    canon_text: str | None = None


def block_opening(key: str, nonce: str) -> str:
    """The opening marker of a section's data block, naming its columns."""
    return f"{data_open(nonce)} {key}: {COLUMNS[key]}>>>"


def build_view(
    inputs: PromptInputs, reserved_tokens: int = 0, canon: Fitted | None = None
) -> PromptView:
    """Select what the model sees within `token_budget - reserved_tokens` for the items; `canon`
    holds the retrieved sections the prompt shows (render/prompt.py fits them first)."""
    now = rfc3339(inputs.now)  # first: a naive `now` is refused before any arithmetic with it
    candidates = _candidates(inputs)
    chosen = select(candidates, inputs.token_budget - reserved_tokens, _cost)
    keys = [key for key, *_ in CATEGORIES]
    omitted = {k: chosen.omitted[k] for k in keys if k in chosen.omitted}
    if chosen.compacted:
        omitted[_DETAILS[0]] = chosen.compacted
    totals = {c.key: len(c.items) for c in candidates}
    return PromptView(
        domain=safe_domain(inputs.domain),
        now=now,
        overview=_overview(inputs),
        sections=tuple(
            Section(
                k, h, block_opening(k, inputs.nonce), chosen.shown[k], omitted.get(k, 0), totals[k]
            )
            for k, h, *_ in CATEGORIES
            if not (inputs.form == "compact" and k in _NOT_COMPACT)
        ),
        omitted=MappingProxyType(omitted),
        omitted_text=omitted_sentence(omitted),
        tokens=chosen.tokens,
        last_run=last_run_text(inputs),
        data_close=data_close(inputs.nonce),
        last_actions=_last_actions(inputs.last_actions),
        last_actions_opening=f"{data_open(inputs.nonce)} last_run: outcome operation target>>>",
        data_open=data_open(inputs.nonce),
        code=inputs.nonce,
        answer_form=inputs.answer_form,
        answer_keys=answer_keys(bare=inputs.answer_form == "json"),
        canon=tuple(entry(section) for section in canon.shown) if canon else (),
        canon_text=canon_sentence(inputs.canon_sections, canon),
    )


def canon_sentence(sections: int, canon: Fitted | None) -> str | None:
    """How many of the library's sections the prompt shows (None: it has none to show)."""
    if not sections:
        return None
    shown = len(canon.shown) if canon else 0
    if not shown:
        return f"None of the canon's {sections} other sections bears on this state."
    one = shown == 1
    return (
        f"{shown} of the canon's {sections} other sections {'was' if one else 'were'} chosen for "
        f"what this run observes; the rest are not shown. Like the constitution, "
        f"{'it is' if one else 'they are'} standing guidance; where {'it' if one else 'one'} "
        "disagrees with the constitution, the constitution wins."
    )


def _overview(inputs: PromptInputs) -> tuple[str, ...]:
    # The run's own domain and a bounded digest of the others (core/context/overview.py).
    if inputs.form == "compact":
        return ()
    shown = bounded(inputs.overview, inputs.domain)
    return overview_table(shown.domains, inputs.domain, (shown.left_out, shown.rest))


def _cost(text: str) -> int:
    # Each line is followed by a newline in the rendered prompt. The estimate of a whole is never
    # more than the sum of the estimates of its parts, so the sum bounds the rendered prompt.
    return estimate_tokens(text + "\n")


def _overhead(key: str, nonce: str) -> int:
    return estimate_tokens(f"{block_opening(key, nonce)}\n{data_close(nonce)}\n{_MORE}")


def _last_actions(actions: tuple[LastAction, ...] | None) -> tuple[str, ...]:
    """The last run's actions as data lines (`executed flag_for_human web-t-2`), bounded."""
    if not actions:
        return ()
    lines = [f"{a.outcome} {a.operation} {a.target}" for a in actions[:MAX_LAST_ACTIONS]]
    if len(actions) > MAX_LAST_ACTIONS:
        lines.append(f"({len(actions) - MAX_LAST_ACTIONS} more not shown)")
    return tuple(lines)


def last_run_text(inputs: PromptInputs) -> str | None:
    """How the last run ended, and whether its actions follow; its prose is never shown."""
    last = inputs.last_run
    if last is None:
        return None
    text = f"The last run, {_run(last)}, ended {_status(last)}."
    if last.problem:
        text += (
            f" Its problem: {data_block(last.run_id, 'problem', last.problem, 500, inputs.nonce)}"
        )
    if inputs.last_actions is None:
        return text + " Its note records no actions."
    if not inputs.last_actions:
        return text + " It proposed nothing."
    return text + " What became of each item it proposed (from its note's record):"


def _run(ref: NoteRef) -> str:
    try:
        started = rfc3339(parse_at(ref.started_at))
    except ValueError:
        started = "at an unknown time"
    return f"{safe_id(ref.run_id)} (started {started})"


def _status(ref: NoteRef) -> str:
    return ref.status if re.fullmatch(r"[a-z_]{1,32}", ref.status) else "unknown"


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


# What the compact form leaves out: the titles of closed tasks (counted, as anything left out).
_NOT_COMPACT = frozenset({"closed"})


def _candidates(inputs: PromptInputs) -> list[Candidates]:
    lists = section_items(inputs)
    if inputs.form == "compact":
        lists = {k: ([] if k in _NOT_COMPACT else v) for k, v in lists.items()}
    return [Candidates(key, lists[key], _overhead(key, inputs.nonce)) for key in SECTIONS]


def section_items(inputs: PromptInputs) -> dict[str, list[Callable[[], Piece]]]:
    """Each section's items in the order shown, each rendered only when considered."""
    summary, now = inputs.summary, inputs.now
    tasks = [task for ws in summary.workstreams for task in ws.tasks]
    last_event = _last_event_by_task(summary)
    open_flags = sorted(summary.open_flags, key=lambda f: (f.created_at, f.id))
    flagged = {f.task_id: f.id for f in open_flags if f.task_id}

    def open_task(stale: int | None) -> Callable[[Task], Piece]:
        return lambda t: task_piece(t, now, last_event.get(t.id), flagged.get(t.id), stale)

    def activity(t: Task) -> tuple[bool, datetime, str]:
        # Least recent activity first (an unknown age before all); a time from the future never
        # makes a task look fresh.
        since = activity_age(t.touched_at, t.created_at, last_event.get(t.id), now).since
        return (since is not None, since or now, t.id)

    by_status = {s: [t for t in tasks if t.status == s] for s in ("todo", "in_progress", "blocked")}
    closed = [t for t in tasks if t.status in ("done", "cancelled")]
    lists = {
        "workstreams": _lazy(sorted(summary.workstreams, key=lambda w: w.id), workstream_piece),
        "in_progress": _lazy(sorted(by_status["in_progress"], key=activity),
                             open_task(inputs.stale_after_days)),
        "blocked": _lazy(sorted(by_status["blocked"], key=lambda t: (t.touched_at, t.id)),
                         open_task(None)),
        "todo": _lazy(sorted(by_status["todo"], key=_todo_order), open_task(None)),
        "decisions": _lazy(sorted(summary.open_decisions, key=lambda d: (d.created_at, d.id)),
                           partial(_with_now, decision_piece, now)),
        "flags": _lazy(open_flags, partial(_with_now, flag_piece, now)),
        "events": _lazy(sorted(summary.recent_events, key=lambda e: (e.created_at, e.id),
                               reverse=True), partial(_with_now, event_piece, now)),
        "pending": _lazy(inputs.pending, approval_piece),
        "rejected": _lazy(inputs.rejected, approval_piece),
        "closed": _lazy(sorted(closed, key=lambda t: (-t.touched_at.timestamp(), t.id)),
                        closed_task_piece),
    }  # fmt: skip
    return lists


def _with_now(render: Callable[[T, datetime], Piece], now: datetime, item: T) -> Piece:
    return render(item, now)


def _lazy(items: Iterable[T], render: Callable[[T], Piece]) -> list[Callable[[], Piece]]:
    # Rendering (and neutralizing) waits until an item is considered: what is left out costs
    # only its count.
    return [partial(render, item) for item in items]


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
