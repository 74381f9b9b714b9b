"""Short text for a person: display widths, cuts with `…`, ages, params, and what an item says.

Everything here returns terminal-inert text: values from the model or the hub go through
`for_terminal` before they are measured, so an escape sequence is shown and counted as the
characters a person sees.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Mapping
from datetime import timedelta
from typing import Any

import custodian_runtime.core.operations as operations
from custodian_runtime.core.authority import evidence
from custodian_runtime.core.authority.authorize import Ruling
from custodian_runtime.core.contract import DomainSummary
from custodian_runtime.core.inert import for_terminal
from custodian_runtime.core.operations import status_writes
from custodian_runtime.core.outcomes import ItemOutcome

WIDTH = 100
ELLIPSIS = "…"
LONG_PAIR = 32  # columns of a `key=value` pair that counts as long
_SAID_COLUMNS = 120  # of a cited event's summary in a note
# What an item says, by the param a person wants to see first.
_CONTENT_KEYS = ("summary", "note", "title", "resolution", "path", "flag_id", "decision_id")


def columns(text: str) -> int:
    """How many terminal columns `text` takes: wide (CJK) characters take two."""
    if text.isascii():
        return len(text)
    return sum(
        0 if unicodedata.combining(ch) else 2 if unicodedata.east_asian_width(ch) in "WF" else 1
        for ch in text
    )


def fit(text: str, width: int) -> str:
    """`text` cut with `…` so that it takes at most `width` columns."""
    if columns(text) <= width:
        return text
    if width <= 0:
        return ""
    out, used = [], 0
    for ch in text:
        size = columns(ch)
        if used + size > width - 1:
            break
        out.append(ch)
        used += size
    return "".join(out) + ELLIPSIS


def one_line(value: Any, width: int | None = None) -> str:
    """A value as one inert terminal line, cut to `width` columns if given."""
    text = for_terminal(value if isinstance(value, str) else _json(value))
    return text if width is None else fit(text, width)


def age(delta: timedelta) -> str:
    """A duration the way a person says it: `45s`, `12m`, `3h`, `2d` (never negative)."""
    seconds = max(int(delta.total_seconds()), 0)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def params_line(params: Mapping[str, Any], *, short_first: bool = False) -> str:
    """Every param as `key=value` on one line; a value with blanks or quotes is JSON-quoted.

    With `short_first`, long pairs move to the end (otherwise in order), so a cut at the end of
    the line takes only the tail of a long value.
    """
    pairs = [f"{one_line(key)}={_value(value)}" for key, value in params.items()]
    if short_first:
        pairs = sorted(pairs, key=lambda pair: len(pair) > LONG_PAIR)
    return " ".join(pairs)


def _value(value: Any) -> str:
    if not isinstance(value, str):
        return for_terminal(_json(value))
    if value and re.fullmatch(r"[^\s\"'=\\]+", value):
        return for_terminal(value)
    quoted = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{for_terminal(quoted)}"'


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def content(operation: str, params: Mapping[str, Any], *, labelled: bool = True) -> str:
    """What an item says, for a person: `status → done, evidence E-1`, `summary “…”` (or `“…”`)."""
    status = params.get("status")
    if operation in status_writes() and isinstance(status, str):
        if not labelled:
            return f"→ {one_line(status)}"
        return f"status → {one_line(status)}" + _cites(operation, params)
    for key in _CONTENT_KEYS:
        value = params.get(key)
        if isinstance(value, str):
            return f"{key} “{one_line(value)}”" if labelled else f"“{one_line(value)}”"
    return params_line(params)


def _cites(operation: str, params: Mapping[str, Any]) -> str:
    """`, evidence E-1`; `, no evidence cited` only for an operation that runs on its evidence."""
    if not evidence.cited(params) and not _runs_on_evidence(operation):
        return ""
    return f", {one_line(evidence.shown(params))}"


def _runs_on_evidence(operation: str) -> bool:
    spec = operations.find(operation)
    return spec is not None and spec.evidence


def status_change(
    operation: str, params: Mapping[str, Any], before: str | None, said: Mapping[str, str]
) -> str:
    """A status change for a note: `status todo → done, evidence E-1 “what E-1 says”`.

    A cited event the observed summary does not hold is shown by its id alone; citing none is
    said only of an operation that runs on its evidence (the spec's `evidence`).
    """
    arrow = f"{one_line(before)} → " if before else "→ "
    head = f"status {arrow}{one_line(params.get('status'))}"
    ids = evidence.cited(params)
    if not ids:
        return head + _cites(operation, params)
    cites = [
        f"{one_line(i)} “{fit(one_line(said[i]), _SAID_COLUMNS)}”" if i in said else one_line(i)
        for i in ids
    ]
    return f"{head}, evidence {', '.join(cites)}"


def statuses(summary: DomainSummary) -> dict[str, str]:
    """Task id -> its status as observed."""
    return {t.id: t.status for ws in summary.workstreams for t in ws.tasks}


def event_summaries(summary: DomainSummary) -> dict[str, str]:
    """Event id -> what the event says, for the recent events observed."""
    return {e.id: e.summary for e in summary.recent_events}


def titles(summary: DomainSummary) -> dict[str, str]:
    """Id -> what a person calls it, for every workstream, task, decision and flag observed."""
    found: dict[str, str] = {}
    for ws in summary.workstreams:
        found[ws.id] = ws.title
        found.update({t.id: t.title for t in ws.tasks})
    found.update({d.id: d.title for d in summary.open_decisions})
    found.update({f.id: f.note for f in summary.open_flags})
    return found


def why(o: ItemOutcome) -> str | None:
    """The part of a ruling's sentence a person needs, without the `Plan item #n (op)` label.

    None for an item that simply executes, or is queued for the reason every proposal is. Its
    letters are kept as the ruling wrote them: a clause may begin with a person's name, which
    stays as the person typed it (a label before it, not a capital, starts the line).
    """
    if o.code not in ("stated", "deferred", "held_deference"):
        return None
    return o.reason if o.clause is None else o.clause


KIND_WORDS = {
    "executed": "executed",
    "failed": "failed",
    "stale": "stale",
    "unknown": "unknown",
    "not_sent": "not sent",
    "queued": "queued",
    "denied": "denied",
    "would_execute": "would execute",
    "would_queue": "would queue",
}
_TITLE_COLUMNS = 22


def item_line(
    o: ItemOutcome,
    *,
    title: str | None,
    said: str | None,
    dry_run: bool = False,
    width: int = WIDTH,
) -> str:
    """One plan item on one line of at most `width` columns.

    `queued  create_task web-ws-2 (Checkout performance): “Find the cause…” [apr-c4a190ea8bec]`:
    the outcome, the operation, the target id and title, then what the item says (for a denied,
    failed or stale item, why first), and a queued item's approval id last, never cut off.
    """
    word = "would deny" if dry_run and o.kind == "denied" else KIND_WORDS[o.kind]
    head = f"  {word:13} #{o.index} {one_line(o.operation, 24)} {one_line(o.target or '-', 40)}"
    if title:
        head += f" ({one_line(title, _TITLE_COLUMNS)})"
    # A queued item's approval id is what a person types next; hub ids are in the note. An item
    # that ran without a card under a person's grant names the grant, never cut off either.
    tail = f" [{one_line(o.approval_id, 40)}]" if o.approval_id else ""
    if o.grant and o.kind in ("executed", "would_execute"):
        tail = f" [under {one_line(o.grant, 40)}]"
    problem = _problem(o)
    body = " · ".join(one_line(p) for p in (problem, said) if p)
    room = width - columns(head) - columns(tail) - 2
    middle = f": {fit(body, room)}" if body and room > 1 else ""
    return fit(head + middle + tail, width)


_PROBLEMS = frozenset({"denied", "failed", "stale", "unknown", "not_sent"})


def _problem(o: ItemOutcome) -> str | None:
    """Why an item did not go through, in a few words (None for one that did)."""
    if o.kind == "stale" and o.current_status is not None:
        return f"now {one_line(o.current_status)} on the hub, nothing written"
    text = o.error or (why(o) if o.kind in _PROBLEMS else None)
    return text.rstrip(".") if text else None


def contents(rulings: Iterable[Ruling]) -> dict[int, str]:
    """Plan item index -> what the item says, for the run summary (built once per run)."""
    return {r.item.index: content(r.item.operation, r.item.params, labelled=False) for r in rulings}
