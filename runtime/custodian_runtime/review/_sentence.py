"""The one sentence a card states its decision in, e.g. "Cancel task web-t-05 ‘Set up
redirects’ (todo → cancelled) in website".

This is the page's one door to per-operation wording, which each operation's spec holds (its
sentence before and after): titles and statuses come from the hub's domain summary read once per
page (`Facts`), or from the item's recorded precondition.
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
    return one_line(operations.describe(item.operation, item.params, _lookup(item, facts)), 400)


def done_sentence(item: ApprovalItem, facts: Facts) -> str:
    """The same decision in the past tense: `cancelled task web-t-05 ‘Set up redirects’`."""
    return one_line(operations.done(item.operation, item.params, _lookup(item, facts)), 400)


def _lookup(item: ApprovalItem, facts: Facts) -> Lookup:
    """Titles and statuses from the hub now, the item's recorded ones first where it has them."""
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
    return Lookup(item.domain, {k: v for k, v in titles.items() if v}, statuses)


def _recorded(state: Mapping[str, Any], kind: str, key: str) -> str | None:
    inner = state.get(kind)
    value = inner.get(key) if isinstance(inner, Mapping) else None
    return value if isinstance(value, str) else None
