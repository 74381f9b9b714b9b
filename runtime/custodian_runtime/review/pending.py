"""Pending approvals with what a person needs to decide, and the target as the hub has it now."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from custodian_runtime.approvals import hub_client
from custodian_runtime.canon import current_sha256
from custodian_runtime.core.approvals import ApprovalItem, effective_status
from custodian_runtime.core.authority_path import PersonDecision, as_item, rule_write
from custodian_runtime.core.contract import DomainSummary
from custodian_runtime.core.precondition import precondition
from custodian_runtime.errors import CustodianError
from custodian_runtime.memory.approvals import ApprovalStore
from custodian_runtime.run import read_summary
from custodian_runtime.settings import Settings


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
    if item.operation == "write_canon":
        return {"file_sha256": current_sha256(settings.canon_dir, str(item.params.get("path")))}
    proposed = as_item(item.operation, item.params, item.fingerprint, reason=item.rationale)
    return None if summary is None else precondition(proposed, summary)


def preview(item: ApprovalItem, summary: DomainSummary, canon_sha256: str | None) -> str:
    """What the one authority would rule if the item were approved against `summary` now."""
    proposed = as_item(item.operation, item.params, item.fingerprint, reason=item.rationale)
    person = PersonDecision(item.id, "(preview)", "approved", dict(item.precondition))
    verdict = rule_write(proposed, summary, person, canon_sha256=canon_sha256)
    if verdict.allowed:
        return "would run"
    what = "stale" if verdict.stale else "refused"
    return f"{what}: {verdict.ruling.reason}"


def view_of(
    settings: Settings,
    item: ApprovalItem,
    now: datetime,
    summary: DomainSummary | None,
    hub_problem: str | None,
) -> PendingView:
    """The page's view of one pending item against the domain as read now (or why not)."""
    state = _state_now(settings, item, summary)
    canon = item.operation == "write_canon"
    verdict = None
    if summary is not None or canon:
        observed = summary or DomainSummary(domain=item.domain, generated_at=now, workstreams=())
        canon_sha256 = (state or {}).get("file_sha256") if canon else None
        verdict = preview(item, observed, canon_sha256)
    return PendingView(
        item=item,
        params=tuple((k, shown(v)) for k, v in sorted(item.params.items())),
        age=duration(now - item.created_at),
        expires_in=duration(item.expires_at - now),
        proposed_under=json.dumps(item.precondition, indent=2, sort_keys=True, default=str),
        now=None if state is None else json.dumps(state, indent=2, sort_keys=True, default=str),
        changes=() if state is None else changes(item.precondition, state),
        hub_problem=None if state is not None else hub_problem,
        verdict=verdict,
    )


def read_domains(settings: Settings, domains: Iterable[str]) -> dict[str, DomainSummary | str]:
    """Each domain's summary read now through the hub client, or the reason it could not be."""
    found: dict[str, DomainSummary | str] = {}
    if settings.hub is not None:
        # A page waits seconds, not a run's minute, for a hub that does not answer.
        quick = replace(settings.hub, timeout_s=3.0, max_attempts=1, max_total_s=5.0)
        settings = replace(settings, hub=quick)
    for domain in sorted(set(domains)):
        try:
            with hub_client(settings) as client:
                found[domain] = read_summary(client, domain)
        except CustodianError as exc:
            found[domain] = f"the hub could not be read: {exc.message}"
    return found


def pending_views(settings: Settings, store: ApprovalStore, now: datetime) -> list[PendingView]:
    """Every pending item, oldest first, each with its target as the hub has it now."""
    items = [i for i in store.all(verify=False) if effective_status(i, now) == "pending"]
    items.sort(key=lambda i: i.created_at)
    hub_domains = {i.domain for i in items if i.operation != "write_canon"}
    summaries = read_domains(settings, hub_domains)
    views = []
    for item in items:
        read = summaries.get(item.domain)
        summary = read if isinstance(read, DomainSummary) else None
        problem = read if isinstance(read, str) else None
        view = view_of(settings, item, now, summary, problem)
        views.append(replace(view, seal_problem=store.seal_problem(item)))
    return views
