"""The one sentence a card states its decision in, e.g. "Cancel task web-t-05 ‘Set up
redirects’ (todo → cancelled) in website".

This is the page's one door to per-operation wording: titles and statuses come from the hub's
domain summary read once per page (`Facts`), or from the item's recorded precondition.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from custodian_runtime.core import operations
from custodian_runtime.core.approvals.items import ApprovalItem
from custodian_runtime.core.contract import DomainSummary
from custodian_runtime.core.operations import Lookup
from custodian_runtime.core.presentation.display import event_summaries, one_line, statuses, titles

# A task status as a verb: imperative for the card, past for the flash message.
_STATUS_VERBS = {
    "cancelled": ("Cancel", "cancelled"),
    "done": ("Complete", "completed"),
    "blocked": ("Block", "blocked"),
    "in_progress": ("Start", "started"),
    "todo": ("Reopen", "reopened"),
}
_CREATES = {
    "create_task": ("Create", "created", "task"),
    "create_workstream": ("Create", "created", "workstream"),
    "record_decision": ("Record", "recorded", "decision"),
}
_TARGETS = (("task_id", "task"), ("decision_id", "decision"), ("flag_id", "flag"))


@dataclass(frozen=True)
class Facts:
    """What the hub says now of one domain: titles, task statuses, what each event says."""

    titles: Mapping[str, str] = field(default_factory=dict)
    statuses: Mapping[str, str] = field(default_factory=dict)
    said: Mapping[str, str] = field(default_factory=dict)


def facts_of(summary: DomainSummary | None) -> Facts:
    """The facts a domain summary holds (none without a summary)."""
    if summary is None:
        return Facts()
    return Facts(titles(summary), statuses(summary), event_summaries(summary))


def card_sentence(item: ApprovalItem, facts: Facts) -> str:
    """The decision in one imperative sentence, with titles and the change: the operation's own
    wording (core/operations), with what the item recorded when it was proposed first."""
    titles, statuses = dict(facts.titles), dict(facts.statuses)
    for key, kind in _TARGETS:
        ident = item.params.get(key)
        if not isinstance(ident, str):
            continue
        title = _recorded(item.precondition, kind, "title")
        titles[ident] = title or titles.get(ident, "")
        status = _recorded(item.precondition, kind, "status")
        if status:
            statuses[ident] = status
    lookup = Lookup(item.domain, {k: v for k, v in titles.items() if v}, statuses)
    return one_line(operations.describe(item.operation, item.params, lookup), 400)


def done_sentence(item: ApprovalItem, facts: Facts) -> str:
    """The same decision in the past tense: `cancelled task web-t-05 ‘Set up redirects’`."""
    _, past, rest = _parts(item, facts)
    return f"{past} {rest} in {one_line(item.domain)}"


def _parts(item: ApprovalItem, facts: Facts) -> tuple[str, str, str]:
    """(imperative verb, past verb, the rest) of the sentence."""
    params, op = item.params, item.operation
    if op in ("set_task_status", "update_task_status"):
        return _status_change(item, facts)
    if op in _CREATES:
        verb, past, noun = _CREATES[op]
        under = _named(facts, params.get("workstream_id"), "workstream")
        where = f" under {under}" if under else ""
        return verb, past, f"{noun} {_quoted(params.get('title'))}{where}"
    if op == "resolve_decision":
        target = _named(facts, params.get("decision_id"), "decision", item.precondition)
        return "Resolve", "resolved", f"{target} as {_quoted(params.get('resolution'))}"
    if op == "resolve_flag":
        target = _named(facts, params.get("flag_id"), "flag", item.precondition)
        return "Resolve", "resolved", target
    if op == "write_canon":
        return "Rewrite", "rewrote", f"canon file {one_line(params.get('path'))}"
    return "Carry out", "carried out", f"{one_line(op)} ({_pairs(params)})"


def _status_change(item: ApprovalItem, facts: Facts) -> tuple[str, str, str]:
    task_id = item.params.get("task_id")
    status = str(item.params.get("status"))
    verb, past = _STATUS_VERBS.get(status, ("Set", "set"))
    before = _recorded(item.precondition, "task", "status") or facts.statuses.get(str(task_id))
    change = f"({one_line(before)} → {one_line(status)})" if before else f"(→ {one_line(status)})"
    target = _named(facts, task_id, "task", item.precondition)
    return verb, past, f"{target} {change}"


def _named(facts: Facts, ident: Any, noun: str, recorded: Mapping[str, Any] | None = None) -> str:
    """`task web-t-05 ‘Set up redirects’`, or the bare id when no title is known."""
    if not isinstance(ident, str):
        return ""
    title = facts.titles.get(ident) or _recorded(recorded or {}, noun, "title")
    shown = f"{noun} {one_line(ident)}"
    return f"{shown} {_quoted(title)}" if title else shown


def _recorded(state: Mapping[str, Any], kind: str, key: str) -> str | None:
    inner = state.get(kind)
    value = inner.get(key) if isinstance(inner, Mapping) else None
    return value if isinstance(value, str) else None


def _quoted(value: Any) -> str:
    return f"‘{one_line(value, 80)}’"


def _pairs(params: Mapping[str, Any]) -> str:
    return ", ".join(f"{one_line(k)}={one_line(v, 40)}" for k, v in params.items()) or "no params"
