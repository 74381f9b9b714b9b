"""What one review session keeps between requests: approvals and grant changes waiting for
their confirmation, and the sentences to show after a redirect (flash messages).

A confirmation is bound to its session, what it decides and that thing's state when it was
asked for: a confirm after it changed or was decided is refused.
"""

from __future__ import annotations

import hashlib
import secrets
import threading
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from typing import Any

from custodian_runtime.core.approvals.items import ApprovalItem
from custodian_runtime.core.digest import canonical_json
from custodian_runtime.person.carry_out import Flash
from custodian_runtime.review.draft import Form, Typed, merged, typed_from, without

MAX_OPEN = 256


def item_state(item: ApprovalItem) -> str:
    """A digest of the item as stored: any change to it (a decision, an edit) changes this."""
    return digest_of(item.model_dump(mode="json", exclude={"seal"}))


def digest_of(data: Any) -> str:
    """The SHA-256 of `data` as canonical JSON: what a confirmation is bound to."""
    return hashlib.sha256(canonical_json(data).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Asked:
    """An approval a person asked for, waiting for its confirmation."""

    approval_id: str
    state: str
    by: str
    note: str | None
    sentence: str
    back: str = "/"  # where the queue was: the page to return to once it is decided


@dataclass(frozen=True)
class Chosen:
    """One item of a group decision: approve or reject, bound to its state when it was chosen."""

    approval_id: str
    decision: str  # "approve" or "reject"
    state: str
    sentence: str
    reason: str | None


@dataclass(frozen=True)
class AskedGroup:
    """Several items decided together, in the plan's order, waiting for one confirmation."""

    by: str
    chosen: tuple[Chosen, ...]
    back: str = "/"
    gone: tuple[str, ...] = ()  # chosen ids no longer pending when they were chosen


@dataclass(frozen=True)
class AskedGrant:
    """A grant to issue or revoke, waiting for its confirmation (`request`: what to do, as
    review/grant_forms.py typed it)."""

    action: str  # "issue" or "revoke"
    domain: str
    state: str  # a digest of what the decision was made on (core/standing, the suggestion)
    sentence: str
    request: object


AnyAsked = Asked | AskedGrant | AskedGroup


@dataclass
class SessionState:
    """Confirmations, flash messages and the queue's draft, per session (by its CSRF token)."""

    _asked: OrderedDict[tuple[str, str], AnyAsked] = field(default_factory=OrderedDict)
    _flashes: dict[str, list[Flash]] = field(default_factory=dict)
    _drafts: OrderedDict[str, Typed] = field(default_factory=OrderedDict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def ask(self, session: str, asked: AnyAsked) -> str:
        """Keep `asked` for its confirmation; the nonce its confirm form must carry."""
        nonce = secrets.token_urlsafe(18)
        with self._lock:
            self._asked[(session, nonce)] = asked
            while len(self._asked) > MAX_OPEN:
                self._asked.popitem(last=False)
        return nonce

    def peek(self, session: str, nonce: str) -> AnyAsked | None:
        """The confirmation open under `nonce` in this session, if any."""
        with self._lock:
            return self._asked.get((session, nonce))

    def take(self, session: str, nonce: str) -> AnyAsked | None:
        """The confirmation under `nonce`, removed: a confirmation is used at most once."""
        with self._lock:
            return self._asked.pop((session, nonce), None)

    def flash(self, session: str, flashes: list[Flash]) -> None:
        """Keep sentences for the session's next page."""
        with self._lock:
            self._flashes.setdefault(session, []).extend(flashes)
            while len(self._flashes) > MAX_OPEN:  # sessions that never came back
                del self._flashes[next(iter(self._flashes))]

    def flashes(self, session: str, *, peek: bool = False) -> list[Flash]:
        """The sentences kept for this session, removed once read (kept when only peeked at)."""
        with self._lock:
            if peek:
                return list(self._flashes.get(session, []))
            return self._flashes.pop(session, [])

    def keep_draft(self, session: str, form: Form) -> Typed:
        """Keep what the queue's form carries over the session's draft; the draft now."""
        with self._lock:
            kept = merged(self._drafts.pop(session, Typed()), typed_from(form), form)
            self._drafts[session] = kept
            while len(self._drafts) > MAX_OPEN:
                self._drafts.popitem(last=False)
            return kept

    def draft(self, session: str) -> Typed:
        """What the session typed into the queue and has not decided or cleared."""
        with self._lock:
            return self._drafts.get(session, Typed())

    def decided(self, session: str, ids: set[str], *, groups: bool = False) -> None:
        """Forget the draft of decided items; after a group decision, the group choices and the
        shared reason too (used, they would otherwise decide the next items alike)."""
        with self._lock:
            if session in self._drafts:
                kept = without(self._drafts[session], ids)
                done = replace(kept, groups={}, bulk_reason="") if groups else kept
                self._drafts[session] = done

    def clear_draft(self, session: str) -> None:
        """Forget every choice and reason typed (the name stays)."""
        with self._lock:
            by = self._drafts.pop(session, Typed()).by
            self._drafts[session] = Typed(by)
