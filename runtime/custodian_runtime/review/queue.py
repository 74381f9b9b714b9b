"""The landing page's data: the pending queue filtered by domain and operation, a page of it at
a time, its counts per domain, and the decided items' history."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from urllib.parse import parse_qs, urlencode

from custodian_runtime.core.approvals.items import ApprovalItem, effective_status
from custodian_runtime.core.presentation.approval_text import fate
from custodian_runtime.journal.person.queue import ApprovalStore
from custodian_runtime.review._sentence import Facts, card_sentence
from custodian_runtime.review.cards import DiffLine, recorded_diff
from custodian_runtime.review.waiting import Waiting

MAX_HISTORY = 200
AT = re.compile(r"^[A-Za-z0-9-]{1,100}$")
PAGE = re.compile(r"^[1-9][0-9]{0,5}$")
PAGE_SIZE = 40  # cards a page shows: what a page costs follows this, not the queue


@dataclass(frozen=True)
class Filter:
    """What the queue shows: one domain and one operation, or all (""); `at`: the card the
    reviewer returns to after a decision, where the page says what the decision came to."""

    domain: str = ""
    operation: str = ""
    at: str = ""
    page: int = 1

    @classmethod
    def parse(cls, query: str) -> Filter:
        """The filter a query string asks for (unknown keys are ignored)."""
        given = parse_qs(query)
        at = given.get("at", [""])[0]
        page = given.get("page", [""])[0]
        return cls(
            given.get("domain", [""])[0][:100],
            given.get("operation", [""])[0][:64],
            at if AT.match(at) else "",
            int(page) if PAGE.match(page) else 1,
        )

    def keeps(self, item: ApprovalItem) -> bool:
        """True when `item` is shown under this filter."""
        return (not self.domain or item.domain == self.domain) and (
            not self.operation or item.operation == self.operation
        )

    @property
    def filtered(self) -> bool:
        """True when the filter leaves some domain or operation out."""
        return bool(self.domain or self.operation)

    @property
    def query(self) -> str:
        """The filter (and its page, past the first) as a query string, "" for none."""
        return self.at_page(self.page)

    def at_page(self, page: int) -> str:
        """The filter's query string for its page `page`."""
        pairs = {k: v for k, v in (("domain", self.domain), ("operation", self.operation)) if v}
        if page > 1:
            pairs["page"] = str(page)
        return f"?{urlencode(pairs)}" if pairs else ""


@dataclass(frozen=True)
class Queue:
    """The page of pending items a filter keeps, the counts per domain and the operations of
    all; `kept`: how many the filter keeps on every page; `order`: each item's place in the
    journal (its plan's order)."""

    items: tuple[ApprovalItem, ...]
    counts: tuple[tuple[str, int], ...]
    operations: tuple[str, ...]
    total: int
    kept: int = 0
    page: int = 1
    pages: int = 1
    order: Mapping[str, int] = field(default_factory=dict)


def queue(waiting: Waiting, keep: Filter) -> Queue:
    """The pending items (oldest first) on the page `keep` shows, and what the whole holds."""
    every = waiting.items
    counts = Counter(i.domain for i in every)
    kept = [i for i in every if keep.keeps(i)]
    pages = max(1, -(-len(kept) // PAGE_SIZE))
    page = min(keep.page, pages)
    return Queue(
        items=tuple(kept[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]),
        counts=tuple(sorted(counts.items())),
        operations=tuple(sorted({i.operation for i in every})),
        total=len(every),
        kept=len(kept),
        page=page,
        pages=pages,
        order=waiting.order,
    )


@dataclass(frozen=True)
class Past:
    """One decided item for the history: what it was, who decided when, what it came to."""

    item: ApprovalItem
    status: str
    sentence: str
    fate: str
    # What an executed canon write changed, as its item keeps it (cards.recorded_diff).
    diff: tuple[DiffLine, ...] | None = None


def decided(store: ApprovalStore, now: datetime) -> list[ApprovalItem]:
    """Decided (or expired) items, the latest first (at most MAX_HISTORY)."""
    done = [i for i in store.all(verify=False) if effective_status(i, now) != "pending"]
    done.sort(key=lambda i: i.decided_at or i.expires_at, reverse=True)
    return done[:MAX_HISTORY]


def history(
    items: list[ApprovalItem], now: datetime, facts: Mapping[str, Facts] | None = None
) -> list[Past]:
    """Each item with its sentence (titles from `facts` per domain) and its fate."""
    known = facts or {}
    return [past(i, effective_status(i, now), known.get(i.domain)) for i in items]


def past(item: ApprovalItem, status: str, facts: Facts | None = None) -> Past:
    """An item with its sentence and its fate."""
    diff = recorded_diff(item) if status == "executed" else None
    return Past(item, status, card_sentence(item, facts or Facts()), fate(item, status), diff)
