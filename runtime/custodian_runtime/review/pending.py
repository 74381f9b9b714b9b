"""Pending approvals with what a person needs to decide, and the target as the hub has it now."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from custodian_runtime.canon import current_sha256
from custodian_runtime.core.approvals.items import ApprovalItem, effective_status
from custodian_runtime.core.approvals.recorded_decisions import RecordedDecision
from custodian_runtime.core.authority.origin import DecisionSite, HubOrigin
from custodian_runtime.core.authority.precondition import precondition, writes_canon
from custodian_runtime.core.contract import DomainSummary
from custodian_runtime.core.person.verdicts import ObservedNow, on_approve, to_observe
from custodian_runtime.core.ruling.path import as_item
from custodian_runtime.errors import CustodianError
from custodian_runtime.journal.person.queue import ApprovalStore
from custodian_runtime.person import (
    configured_hub,
    decision_site,
    hub_client,
    needs_hub,
    recorded_decisions,
    seen_for,
)
from custodian_runtime.person.derived import heal_pending
from custodian_runtime.review._sentence import card_sentence, facts_of
from custodian_runtime.review.bars import CardBar, mode_settings, paused_bar, stale_bar
from custodian_runtime.review.cards import (
    Cited,
    DiffLine,
    cited_events,
    diff_of,
    fields_of,
    kept_in,
    removal_of,
)
from custodian_runtime.settings import Settings
from custodian_runtime.writes import read_summary


@dataclass(frozen=True)
class PendingView:
    """One pending item, ready for the page."""

    item: ApprovalItem
    params: tuple[tuple[str, str], ...]
    age: str
    expires_in: str
    proposed_under: str
    now: str | None
    changes: tuple[str, ...]
    hub_problem: str | None
    verdict: str | None = None
    seal_problem: str | None = None
    sentence: str = ""
    diff: tuple[DiffLine, ...] | None = None
    fields: tuple[tuple[str, str], ...] = ()
    cited: tuple[Cited, ...] = ()
    recorded: RecordedDecision | None = None
    bar: CardBar | None = None  # why approve is not offered now (review/bars.py)
    kept_in: str = "on the hub"  # where its target is kept, or `in the canon` (cards.kept_in)
    removes: str | None = None  # a canon write's removal in words, when large (cards.removal_of)


def shown(value: object) -> str:
    """A param or state value as compact JSON text (strings with their quotes)."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def duration(delta: timedelta) -> str:
    """`3d 4h`, `5h 2m` or `7m`: how long, to the minute."""
    minutes = max(0, int(delta.total_seconds() // 60))
    days, rest = divmod(minutes, 24 * 60)
    hours, mins = divmod(rest, 60)
    if days:
        return f"{days}d {hours}h"
    return f"{hours}h {mins}m" if hours else f"{mins}m"


def _flat(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict) and (value or not prefix):
        out: dict[str, Any] = {}
        for key, inner in value.items():
            out.update(_flat(inner, f"{prefix}.{key}" if prefix else str(key)))
        return out
    return {prefix or "(state)": value}


def changes(before: dict[str, Any], after: dict[str, Any]) -> tuple[str, ...]:
    """`task.status: "blocked" -> "done"` for every leaf that differs."""
    old, new = _flat(before), _flat(after)
    missing = object()
    lines = []
    for key in sorted(set(old) | set(new)):
        was, now = old.get(key, missing), new.get(key, missing)
        if was != now:
            left = "(absent)" if was is missing else shown(was)
            right = "(absent)" if now is missing else shown(now)
            lines.append(f"{key}: {left} -> {right}")
    return tuple(lines)


def _state_now(
    settings: Settings, item: ApprovalItem, summary: DomainSummary | None
) -> dict[str, Any] | None:
    if writes_canon(item.operation):
        return {"file_sha256": current_sha256(settings.canon_dir, str(item.params.get("path")))}
    proposed = as_item(item.operation, item.params, item.fingerprint, reason=item.rationale)
    return None if summary is None else precondition(proposed, summary)


# Who the preview's suggested commands name; the page does not know who will decide.
PREVIEW_BY = "NAME"


def preview(item: ApprovalItem, where: DecisionSite, seen: ObservedNow, now: datetime) -> str:
    """What approving the item now would come to: the very ruling `approvals approve` performs
    (`core.person.verdicts.on_approve`: the item's origin, then the one authority)."""
    verdict = on_approve(item, where, PREVIEW_BY, None, seen, now)
    if verdict.execute:
        return "would run"
    return verdict.message.removeprefix(f"{item.id}: ")


def view_of(
    settings: Settings,
    item: ApprovalItem,
    now: datetime,
    summary: DomainSummary | None,
    hub_problem: str | None,
    hub: HubOrigin | None = None,
) -> PendingView:
    """The page's view of one pending item against the domain as read now (or why not)."""
    state = _state_now(settings, item, summary)
    verdict = None
    # Without the hub's identity, approve cannot be foreseen: no preview rather than a guess.
    unknown_hub = needs_hub(item) and settings.hub is not None and hub is None
    if not unknown_hub and (summary is not None or to_observe(item) != "hub"):
        seen = seen_for(settings, item, summary)
        verdict = preview(item, decision_site(settings, item, hub), seen, now)
    facts = facts_of(summary)
    return PendingView(
        sentence=card_sentence(item, facts),
        diff=diff_of(settings.canon_dir, item),
        removes=removal_of(settings.canon_dir, item),
        fields=fields_of(item),
        cited=cited_events(item, facts),
        item=item,
        params=tuple((k, shown(v)) for k, v in sorted(item.params.items())),
        age=duration(now - item.created_at),
        expires_in=duration(item.expires_at - now),
        proposed_under=json.dumps(item.precondition, indent=2, sort_keys=True, default=str),
        now=None if state is None else json.dumps(state, indent=2, sort_keys=True, default=str),
        changes=() if state is None else changes(item.precondition, state),
        hub_problem=None if state is not None else hub_problem,
        verdict=verdict,
        kept_in=kept_in(item),
    )


def _quick(settings: Settings) -> Settings:
    """A page waits seconds, not a run's minute, for a hub that does not answer."""
    if settings.hub is None:
        return settings
    quick = replace(settings.hub, timeout_s=3.0, max_attempts=1, max_total_s=5.0)
    return replace(settings, hub=quick)


def read_domains(settings: Settings, domains: Iterable[str]) -> dict[str, DomainSummary | str]:
    """Each domain's summary read now through the hub client, or the reason it could not be."""
    found: dict[str, DomainSummary | str] = {}
    settings = _quick(settings)
    for domain in sorted(set(domains)):
        try:
            with hub_client(settings) as client:
                found[domain] = read_summary(client, domain)
        except CustodianError as exc:
            found[domain] = f"the hub could not be read: {exc.message}"
    return found


def pending_items(store: ApprovalStore, now: datetime) -> list[ApprovalItem]:
    """Every pending item, oldest first (a file its journal decided is rewritten first)."""
    heal_pending(store, now)
    items = [i for i in store.all(verify=False) if effective_status(i, now) == "pending"]
    return sorted(items, key=lambda i: (i.created_at, i.id))


def pending_views(
    settings: Settings,
    store: ApprovalStore,
    now: datetime,
    items: list[ApprovalItem] | None = None,
) -> list[PendingView]:
    """The pending items (all, or `items`), oldest first, each with its target as the hub has
    it now: one read of each domain's summary for the whole page."""
    items = pending_items(store, now) if items is None else items
    inbox = recorded_decisions(settings)
    hub_domains = {i.domain for i in items if not writes_canon(i.operation)}
    summaries = read_domains(settings, hub_domains)
    hub = _configured_hub(settings) if hub_domains else None
    modes = mode_settings(settings, items)
    views = []
    for item in items:
        read = summaries.get(item.domain)
        summary = read if isinstance(read, DomainSummary) else None
        problem = read if isinstance(read, str) else None
        view = view_of(settings, item, now, summary, problem, hub)
        seal = store.seal_problem(item)
        if seal is not None:  # approve reads the item sealed, and refuses it
            view = replace(view, verdict=f"refused: the item {seal}")
        bar = stale_bar(view.changes, view.verdict) or paused_bar(item, modes.get(item.id))
        views.append(replace(view, seal_problem=seal, recorded=inbox.get(item.id), bar=bar))
    return views


def _configured_hub(settings: Settings) -> HubOrigin | None:
    """The configured hub's identity, as approve reads it; None when it cannot be read (the
    domains' reads say why)."""
    try:
        return configured_hub(_quick(settings))
    except CustodianError:
        return None
