"""The approval queue's rules: what an item is, when it expires, what the next run must know."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from custodian_runtime.core._normalized import text_key
from custodian_runtime.core.approval_history import ApprovalHistory

ApprovalStatus = Literal[
    "pending", "approved", "executed", "failed", "stale", "expired", "rejected", "unknown"
]
OPEN_STATUSES = ("pending",)
RECENTLY_REJECTED = timedelta(days=30)


class ApprovalItem(BaseModel):
    """One proposed write waiting for, or decided by, a person."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    domain: str
    operation: str
    params: dict[str, Any]
    rationale: str | None = None
    run_id: str
    fingerprint: str
    precondition: dict[str, Any]
    # Where it came from (core/origin.py): approve acts only on the same hub, or canon.
    hub: str | None = None  # `hub_id:<id>` (v1.2), or the URL of a v1.1 hub
    hub_at: str | None = None  # where that hub was reached: what a refusal's command names
    canon: str | None = None
    status: ApprovalStatus = "pending"
    created_at: datetime
    expires_at: datetime
    decided_at: datetime | None = None
    decided_by: str | None = None
    decision_note: str | None = None
    reject_reason: str | None = None
    result: dict[str, Any] | None = None
    # HMAC over every other field, set by the store when a seal key is configured.
    seal: str | None = None


def effective_status(item: ApprovalItem, now: datetime) -> ApprovalStatus:
    """A pending item past its expiry is expired, whether or not the file says so yet."""
    if item.status == "pending" and now >= item.expires_at:
        return "expired"
    return item.status


def listed_status(item: ApprovalItem, now: datetime, seal_problem: str | None) -> str:
    """The status a listing shows: with a seal key, an item whose seal fails is listed as
    `unsealed` or `bad-seal`, and can never be decided."""
    if seal_problem is not None:
        return "unsealed" if item.seal is None else "bad-seal"
    return effective_status(item, now)


def recently_rejected(
    items: Iterable[ApprovalItem], domain: str, now: datetime
) -> list[ApprovalItem]:
    """Items of `domain` rejected in the last 30 days, newest first (shown to the next run)."""
    recent = [
        i
        for i in items
        if i.domain == domain
        and i.status == "rejected"
        and i.decided_at is not None
        and now - i.decided_at <= RECENTLY_REJECTED
    ]
    return sorted(recent, key=lambda i: i.decided_at or now, reverse=True)


def pending_for(items: Iterable[ApprovalItem], domain: str, now: datetime) -> list[ApprovalItem]:
    """Items of `domain` still waiting, oldest first."""
    waiting = [i for i in items if i.domain == domain and effective_status(i, now) == "pending"]
    return sorted(waiting, key=lambda i: i.created_at)


def new_item(
    *,
    approval_id: str,
    domain: str,
    operation: str,
    params: dict[str, Any],
    rationale: str | None,
    run_id: str,
    fingerprint: str,
    precondition: dict[str, Any],
    now: datetime,
    ttl_days: int,
    hub: str | None = None,
    canon: str | None = None,
    hub_at: str | None = None,
) -> ApprovalItem:
    """A fresh pending item that expires `ttl_days` after `now`."""
    return ApprovalItem(
        id=approval_id,
        domain=domain,
        operation=operation,
        params=params,
        rationale=rationale,
        run_id=run_id,
        fingerprint=fingerprint,
        precondition=precondition,
        hub=hub,
        hub_at=hub_at,
        canon=canon,
        created_at=now,
        expires_at=now + timedelta(days=ttl_days),
    )


def approval_id_for(fingerprint: str, nonce: str, taken: Iterable[str]) -> str:
    """`apr-<8 hex of the fingerprint>-<4 hex of the shell's nonce>`, counted on if taken.

    The random part makes every queueing a new id, even of an equal proposal whose earlier file
    was moved aside or deleted; the fingerprint part lets a person see equal proposals.
    """
    used = set(taken)
    base = f"apr-{fingerprint[:8]}-{nonce[:4]}"
    candidate, counter = base, 2
    while candidate in used:
        candidate = f"{base}-{counter}"
        counter += 1
    return candidate


def history_for(items: Iterable[ApprovalItem], domain: str, now: datetime) -> ApprovalHistory:
    """The pending and rejected items of `domain`, by fingerprint and by normalized text."""
    mine = [i for i in items if i.domain == domain]
    pending = [i for i in mine if effective_status(i, now) == "pending"]
    rejected = [i for i in mine if i.status == "rejected"]
    return ApprovalHistory(
        pending={i.fingerprint: i.id for i in pending},
        rejected={i.fingerprint: _why(i) for i in rejected},
        pending_texts={text_key(i.operation, i.params): i.id for i in pending},
        rejected_texts={text_key(i.operation, i.params): _why(i) for i in rejected},
        pending_count=len(pending),
    )


def _why(item: ApprovalItem) -> str:
    by = item.decided_by or "a person"
    return f"rejected by {by}: {item.reject_reason or 'no reason given'}"
