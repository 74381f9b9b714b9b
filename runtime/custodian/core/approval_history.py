"""What a domain's approval queue already holds, as the authority compares it.

Pending and rejected items count only within their own domain. A proposal matches an earlier
one when its operation and params are the same after normalizing every text in them (NFKC,
casefold, collapsed whitespace, trailing punctuation stripped): "Add a sitemap." repeats a
rejected "Add a sitemap".
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from custodian.core.approvals import ApprovalItem, effective_status
from custodian.core.authority import ApprovalHistory
from custodian.core.normalized import text_key


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
