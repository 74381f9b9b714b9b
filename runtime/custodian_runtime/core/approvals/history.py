"""What a domain's approval queue already holds, as the authority compares it.

`core.approvals.items.history_for` builds it from the queue's items.

Pending and rejected items count only within their own domain. A rejection holds on the facts
it was made on: the same proposal is asked again only when a person's event on its target,
newer than the rejection, changed them (core/authority/facts.py), and once for each change.
A proposal matches an earlier one when its operation and params are the same after normalizing
every text in them (NFKC,
casefold, collapsed whitespace, trailing punctuation stripped): "Add a sitemap." repeats a
rejected "Add a sitemap".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from custodian_runtime.core._normalized import text_key
from custodian_runtime.core.plan.extract import ProposedItem


@dataclass(frozen=True)
class DecidedMark:
    """What a person said of one decided proposal, as a standing "no" reads it
    (core/authority/refusals.py): its class (operation, the status it sets, the task or
    workstream it is about), whether they approved it, their reason, and when."""

    operation: str
    status: str = ""
    task: str = ""
    workstream: str = ""
    approved: bool = False
    why: str = ""
    at: str = ""  # ISO 8601
    # What it cited when queued (core/authority/scope.py `cites_of`: newer, other, none; ""
    # for a proposal that cites nothing by nature, or one decided before it was kept).
    cites: str = ""
    # Whole days since a person's observed word set its task's status, when queued
    # (core/authority/scope.py `WORD`; "" when none was observed).
    set_days: str = ""
    # The facts of its target a standing "no" may be said of (core/authority/scope.py
    # `NO_FACTS`: the workstream's status, who wrote last on the task and what), as observed
    # when it was queued; () when none was kept.
    on: tuple[tuple[str, str], ...] = ()

    def fact(self, key: str) -> str | None:
        """The value of one kept fact (None: not kept)."""
        return dict(self.on).get(key)

    def as_record(self) -> list[Any]:
        """Its fields in order, as the plan record and the queue's index keep them (`cites`,
        `set_days` and `on` only when known, so a mark from before reads and writes as it did)."""
        kept = [self.operation, self.status, self.task, self.workstream, self.approved,
                self.why, self.at]  # fmt: skip
        if self.on:
            return [*kept, self.cites, self.set_days, dict(self.on)]
        if self.set_days:
            return [*kept, self.cites, self.set_days]
        return [*kept, self.cites] if self.cites else kept

    @classmethod
    def from_record(cls, data: Any) -> DecidedMark:
        """What `as_record` kept."""
        op, status, task, ws, approved, why, at, *rest = data
        cites = str(rest[0]) if rest else ""
        set_days = str(rest[1]) if len(rest) > 1 else ""
        kept = rest[2] if len(rest) > 2 and isinstance(rest[2], dict) else {}
        on = tuple(sorted((str(k), str(v)) for k, v in kept.items()))
        return cls(str(op), str(status), str(task), str(ws), approved is True, str(why), str(at),
                   cites, set_days, on)  # fmt: skip


@dataclass(frozen=True)
class ApprovalHistory:
    """What the domain's approval queue already holds (see core/approvals/history.py).

    By fingerprint and by normalized text (`core.normalized.text_key`): approval id of each
    pending item, the person's reason for each rejected one; and how many items wait.
    """

    pending: Mapping[str, str] = field(default_factory=dict)
    rejected: Mapping[str, str] = field(default_factory=dict)
    pending_texts: Mapping[str, str] = field(default_factory=dict)
    rejected_texts: Mapping[str, str] = field(default_factory=dict)
    pending_count: int = 0
    # When each rejection was made (ISO 8601), by fingerprint and by text: a rejection holds on
    # the facts it was made on. Missing (a record from before): it holds on any facts.
    rejected_at: Mapping[str, str] = field(default_factory=dict)
    rejected_text_at: Mapping[str, str] = field(default_factory=dict)
    # What a person said of each proposal decided in the window, approved or rejected: a class
    # rejected repeatedly and never approved is a standing "no" (core/authority/refusals.py).
    said: tuple[DecidedMark, ...] = ()

    def as_record(self) -> dict[str, Any]:
        """The history as the journal's plan record keeps it (for replay)."""
        return {
            "pending": dict(self.pending),
            "rejected": dict(self.rejected),
            "pending_texts": dict(self.pending_texts),
            "rejected_texts": dict(self.rejected_texts),
            "pending_count": self.pending_count,
            "rejected_at": dict(self.rejected_at),
            "rejected_text_at": dict(self.rejected_text_at),
            "said": [one.as_record() for one in self.said],
        }

    @classmethod
    def from_record(cls, data: Mapping[str, Any]) -> ApprovalHistory:
        """The history a plan record kept; a record from before a field was kept lacks it."""
        return cls(
            pending=dict(data.get("pending") or {}),
            rejected=dict(data.get("rejected") or {}),
            pending_texts=dict(data.get("pending_texts") or {}),
            rejected_texts=dict(data.get("rejected_texts") or {}),
            pending_count=int(data.get("pending_count") or 0),
            rejected_at=dict(data.get("rejected_at") or {}),
            rejected_text_at=dict(data.get("rejected_text_at") or {}),
            said=tuple(DecidedMark.from_record(one) for one in data.get("said") or ()),
        )

    def for_items(self, items: Iterable[ProposedItem]) -> ApprovalHistory:
        """Only the entries these items can match (and the count): what a plan record keeps.

        The authority looks the history up by each item's fingerprint and text, so replay rules
        the same from this, and the record grows with the plan, not with the queue's past.
        """
        prints, texts, operations = set(), set(), set()
        for item in items:
            prints.add(item.fingerprint)
            texts.add(text_key(item.operation, item.params))
            operations.add(item.operation)
        return ApprovalHistory(
            pending={k: v for k, v in self.pending.items() if k in prints},
            rejected={k: v for k, v in self.rejected.items() if k in prints},
            pending_texts={k: v for k, v in self.pending_texts.items() if k in texts},
            rejected_texts={k: v for k, v in self.rejected_texts.items() if k in texts},
            pending_count=self.pending_count,
            rejected_at={k: v for k, v in self.rejected_at.items() if k in prints},
            rejected_text_at={k: v for k, v in self.rejected_text_at.items() if k in texts},
            said=tuple(one for one in self.said if one.operation in operations),
        )

    def pending_as(self, item: ProposedItem) -> str | None:
        """The approval id of a pending item that says the same as `item`, if any."""
        found = self.pending.get(item.fingerprint)
        return found or self.pending_texts.get(text_key(item.operation, item.params))

    def rejected_as(self, item: ProposedItem) -> str | None:
        """Why a person rejected an item that says the same as `item`, if one was."""
        found = self.rejected.get(item.fingerprint)
        return found or self.rejected_texts.get(text_key(item.operation, item.params))

    def rejection_of(self, item: ProposedItem) -> Rejection | None:
        """The person's rejection of an item that says the same as `item`, and when, if any."""
        why = self.rejected_as(item)
        if why is None:
            return None
        text = text_key(item.operation, item.params)
        at = self.rejected_at.get(item.fingerprint) or self.rejected_text_at.get(text)
        return Rejection(why, datetime.fromisoformat(at) if at else None)


@dataclass(frozen=True)
class Rejection:
    """Why a person rejected the same proposal, and when (None: not known, so it holds on any
    facts); core/authority/facts.py says whether a person's newer event changed them."""

    why: str
    at: datetime | None
