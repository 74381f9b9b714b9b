"""The approval queue's rules: what an item is, when it expires, what the next run must know."""

from __future__ import annotations

from collections.abc import Container, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from pydantic import BaseModel, ConfigDict

from custodian_runtime.core._normalized import text_key
from custodian_runtime.core.approvals.history import ApprovalHistory, DecidedMark
from custodian_runtime.core.approvals.status import ApprovalStatus as ApprovalStatus
from custodian_runtime.core.journal.keys import IDEMPOTENCY_WINDOW

RECENTLY_REJECTED = timedelta(days=30)


class WaitingBecause(BaseModel):
    """Why a queued item waits, in one line (core/person/waiting.py): the kind of reason
    (`approvable`, `evidence`, `deferred`, `grant`, `mode_ask`, or the ruling's own code) and
    the sentence a person reads."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    code: str
    text: str


class ApprovalItem(BaseModel):
    """One proposed write waiting for, or decided by, a person."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    domain: str
    operation: str
    params: dict[str, Any]
    rationale: str | None = None
    # Why the authority queued it, as items queued before `waiting_because` kept it (a ruling's
    # `code` and clause, None for a routine proposal): read, never written again.
    waits: str | None = None
    waits_code: str | None = None
    # Why it waits, in one line, for every item queued since (None: an item from before).
    waiting_because: WaitingBecause | None = None
    # Its target as the run observed it, and what it cites (core/authority/scope.py): what
    # `policy report` reads to find what parted a person's approvals from their rejections.
    # None: an item queued before they were kept.
    facts: dict[str, str] | None = None
    run_id: str
    fingerprint: str
    precondition: dict[str, Any]
    # Where it came from (core/authority/origin.py): approve acts only on the same hub, or canon.
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
    waiting: WaitingBecause | None = None,
    facts: dict[str, str] | None = None,
) -> ApprovalItem:
    """A fresh pending item that expires `ttl_days` after `now`; `waiting`: why it waits;
    `facts`: its target as observed (core/authority/scope.py)."""
    return ApprovalItem(
        id=approval_id,
        domain=domain,
        operation=operation,
        params=params,
        rationale=rationale,
        waiting_because=waiting,
        facts=facts,
        run_id=run_id,
        fingerprint=fingerprint,
        precondition=precondition,
        hub=hub,
        hub_at=hub_at,
        canon=canon,
        created_at=now,
        expires_at=now + timedelta(days=ttl_days),
    )


def approval_id_for(fingerprint: str, nonce: str, taken: Container[str]) -> str:
    """`apr-<8 hex of the fingerprint>-<4 hex of the shell's nonce>`, counted on if taken.

    The random part makes every queueing a new id, even of an equal proposal whose earlier file
    was moved aside or deleted; the fingerprint part lets a person see equal proposals.
    """
    base = f"apr-{fingerprint[:8]}-{nonce[:4]}"
    candidate, counter = base, 2
    while candidate in taken:
        candidate = f"{base}-{counter}"
        counter += 1
    return candidate


@dataclass(frozen=True)
class RejectedMark:
    """What the authority keeps of a rejected item: its fingerprint, its text key, and why."""

    fingerprint: str
    text: str
    why: str
    # When the person rejected it (ISO 8601; "" from an index written before it was kept: the
    # rejection then holds on any facts). A person's newer event on the target may ask again.
    at: str = ""


def rejected_mark(item: ApprovalItem) -> RejectedMark:
    """The mark a rejected item leaves: the same write on the same facts is never asked again."""
    at = item.decided_at.isoformat() if item.decided_at is not None else ""
    return RejectedMark(
        fingerprint=item.fingerprint, text=text_key(item.operation, item.params), why=_why(item),
        at=at,
    )  # fmt: skip


def said_of(item: ApprovalItem) -> DecidedMark | None:
    """What a person said of a decided item, as a standing "no" reads it (None: undecided)."""
    approved = _DECIDED_AS.get(item.status)
    if approved is None or item.decided_at is None:
        return None
    status, task, ws = (item.params.get(k) for k in ("status", "task_id", "workstream_id"))
    status, task, ws = (v if isinstance(v, str) else "" for v in (status, task, ws))
    why = "" if approved else _why(item)
    at = item.decided_at.isoformat()
    cites = (item.facts or {}).get("cites", "")
    set_days = (item.facts or {}).get("set_word_days", "")  # core/authority/scope.py WORD
    kept = {k: v for k, v in (item.facts or {}).items() if k in NO_FACTS}
    if item.facts is not None:
        kept.setdefault("asked", "no")  # kept with its facts: not asked whatever carried it
    on = tuple(sorted(kept.items()))
    return DecidedMark(item.operation, status, task, ws, approved=approved, why=why, at=at,
                       cites=cites, set_days=set_days, on=on)  # fmt: skip


# The facts of a target (core/authority/scope.py) a standing "no" may be said of, each kept on a
# decided item's mark (core/authority/refusals.py): the workstream's status, who wrote last on
# the task, and whether it was asked whatever would carry it (core/authority/scope.py `ASKED`:
# a person's later word than its evidence, a repeat of another workstream's). Not the kind of
# the last word: people weigh a kind differently (one takes a note as a reason to block,
# another does not), so a "no" learnt of one person's kind would hold what another approves.
NO_FACTS = frozenset({"workstream_status", "last_by", "asked"})

# What an item's status says the person did: approved (it may still fail on the hub) or not.
_DECIDED_AS = {
    **dict.fromkeys(("approved", "executed", "failed", "stale", "unknown"), True),
    "rejected": False,
}


def said_in_window(said: Iterable[DecidedMark], now: datetime) -> tuple[DecidedMark, ...]:
    """What a person said within RECENTLY_REJECTED of `now`: what a standing "no" reads."""
    return tuple(
        s for s in said if s.at and now - datetime.fromisoformat(s.at) <= RECENTLY_REJECTED
    )


def is_hot(item: ApprovalItem, now: datetime) -> bool:
    """Whether a run reads the item whole: it waits, or was rejected within RECENTLY_REJECTED."""
    if item.status == "pending":
        return effective_status(item, now) == "pending"
    return item.status == "rejected" and _recent(item, now)


def _recent(item: ApprovalItem, now: datetime) -> bool:
    return item.decided_at is not None and now - item.decided_at <= RECENTLY_REJECTED


@dataclass(frozen=True)
class QueueView:
    """What a run needs of one domain's queue: the items it reads whole, and rejected marks."""

    domain: str
    items: tuple[ApprovalItem, ...]
    marks: tuple[RejectedMark, ...]
    said: tuple[DecidedMark, ...] = ()  # what a person said of each decided item (standing "no")

    def pending(self, now: datetime) -> list[ApprovalItem]:
        """Items still waiting, oldest first."""
        return pending_for(self.items, self.domain, now)

    def rejected(self, now: datetime) -> list[ApprovalItem]:
        """Items rejected in the last 30 days, newest first."""
        return recently_rejected(self.items, self.domain, now)

    def history(self, now: datetime) -> ApprovalHistory:
        """What the authority compares a plan with."""
        return history_from(self.pending(now), self.marks, said_in_window(self.said, now))


def history_for(items: Iterable[ApprovalItem], domain: str, now: datetime) -> ApprovalHistory:
    """The pending and rejected items of `domain`, by fingerprint and by normalized text."""
    mine = [i for i in items if i.domain == domain]
    pending = [i for i in mine if effective_status(i, now) == "pending"]
    said = said_in_window((s for s in map(said_of, mine) if s is not None), now)
    marks = [rejected_mark(i) for i in mine if i.status == "rejected"]
    return history_from(pending, marks, said)


def history_from(
    pending: Iterable[ApprovalItem],
    rejected: Iterable[RejectedMark],
    said: Iterable[DecidedMark] = (),
) -> ApprovalHistory:
    """The history of these pending items, rejected marks, and what a person said."""
    waiting = list(pending)
    # The latest rejection of a proposal is the one whose facts hold (an unknown time first).
    marks = sorted(rejected, key=lambda m: m.at)
    return ApprovalHistory(
        pending={i.fingerprint: i.id for i in waiting},
        rejected={m.fingerprint: m.why for m in marks},
        pending_texts={text_key(i.operation, i.params): i.id for i in waiting},
        rejected_texts={m.text: m.why for m in marks},
        pending_count=len(waiting),
        rejected_at={m.fingerprint: m.at for m in marks if m.at},
        rejected_text_at={m.text: m.at for m in marks if m.at},
        said=tuple(sorted(said, key=lambda s: (s.at, *map(str, s.as_record())))),
    )


def prunable(item: ApprovalItem, now: datetime, keep: timedelta) -> bool:
    """A decided item past `keep` and past its own window, which `journal prune` may remove.

    A rejection holds for RECENTLY_REJECTED (shown to the model, refusing a re-proposal); any
    other outcome for the hub's idempotency window. Pending and approved items always stay.
    """
    status = effective_status(item, now)
    if status in ("pending", "approved"):
        return False
    window = RECENTLY_REJECTED if status == "rejected" else IDEMPOTENCY_WINDOW
    since = item.expires_at if status == "expired" else item.decided_at or item.created_at
    return now - since > max(keep, window)


def _why(item: ApprovalItem) -> str:
    by = item.decided_by or "a person"
    return f"rejected by {by}: {item.reject_reason or 'no reason given'}"
