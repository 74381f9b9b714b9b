"""What a domain's approval queue already holds, as the authority compares it.

`core.approvals.items.history_for` builds it from the queue's items.

Pending and rejected items count only within their own domain. A proposal matches an earlier
one when its operation and params are the same after normalizing every text in them (NFKC,
casefold, collapsed whitespace, trailing punctuation stripped): "Add a sitemap." repeats a
rejected "Add a sitemap".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from custodian_runtime.core._normalized import text_key
from custodian_runtime.core.plan.extract import ProposedItem


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

    def as_record(self) -> dict[str, Any]:
        """The history as the journal's plan record keeps it (for replay)."""
        return {
            "pending": dict(self.pending),
            "rejected": dict(self.rejected),
            "pending_texts": dict(self.pending_texts),
            "rejected_texts": dict(self.rejected_texts),
            "pending_count": self.pending_count,
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
        )

    def for_items(self, items: Iterable[ProposedItem]) -> ApprovalHistory:
        """Only the entries these items can match (and the count): what a plan record keeps.

        The authority looks the history up by each item's fingerprint and text, so replay rules
        the same from this, and the record grows with the plan, not with the queue's past.
        """
        prints, texts = set(), set()
        for item in items:
            prints.add(item.fingerprint)
            texts.add(text_key(item.operation, item.params))
        return ApprovalHistory(
            pending={k: v for k, v in self.pending.items() if k in prints},
            rejected={k: v for k, v in self.rejected.items() if k in prints},
            pending_texts={k: v for k, v in self.pending_texts.items() if k in texts},
            rejected_texts={k: v for k, v in self.rejected_texts.items() if k in texts},
            pending_count=self.pending_count,
        )

    def pending_as(self, item: ProposedItem) -> str | None:
        """The approval id of a pending item that says the same as `item`, if any."""
        found = self.pending.get(item.fingerprint)
        return found or self.pending_texts.get(text_key(item.operation, item.params))

    def rejected_as(self, item: ProposedItem) -> str | None:
        """Why a person rejected an item that says the same as `item`, if one was."""
        found = self.rejected.get(item.fingerprint)
        return found or self.rejected_texts.get(text_key(item.operation, item.params))
