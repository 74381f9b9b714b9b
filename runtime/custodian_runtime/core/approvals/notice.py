"""A person is told when items wait: one notice per domain each time the set of waiting items
changes (and once when none wait any more), never twice for the same set.

The notice names only what the runtime itself made: the domain, a count, operation names and a
link; no text a model or the hub wrote, so a chat renders nothing anyone else chose. The set is
known by a digest of its ids; the journal keeps the digest of the last notice (`notice` records,
folded into the checkpoint), so a run compares with one field, never with history.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from custodian_runtime.core.approvals.items import ApprovalItem

NONE_WAIT = "none"  # the digest of an empty set: said once, after items waited


@dataclass(frozen=True)
class Notice:
    """One message to send: the waiting set's digest, how many wait, and the text."""

    digest: str
    waiting: int
    text: str

    def body(self) -> dict[str, str]:
        """The JSON Slack's and Teams' incoming webhooks both take."""
        return {"text": self.text}


def digest_of(items: Iterable[ApprovalItem]) -> str:
    """The waiting set's digest: of its ids, sorted (`none` for no item)."""
    ids = sorted(i.id for i in items)
    if not ids:
        return NONE_WAIT
    return hashlib.sha256("\n".join(ids).encode("utf-8")).hexdigest()[:32]


def notice_for(
    domain: str, waiting: list[ApprovalItem], last: str, review_url: str | None
) -> Notice | None:
    """The notice to send now, or None: the same set as the last notice, or none wait and no
    notice ever said that some did."""
    digest = digest_of(waiting)
    if digest == last or (digest == NONE_WAIT and last in ("", NONE_WAIT)):
        return None
    link = _link(domain, review_url)
    if not waiting:
        return Notice(digest, 0, f"Nothing waits for a decision in {domain} now. {link}")
    kinds = Counter(i.operation for i in waiting)
    listed = ", ".join(f"{op} ×{n}" if n > 1 else op for op, n in sorted(kinds.items()))
    many = "1 item waits" if len(waiting) == 1 else f"{len(waiting)} items wait"
    return Notice(digest, len(waiting), f"{many} for a decision in {domain} ({listed}). {link}")


def _link(domain: str, review_url: str | None) -> str:
    if review_url is None:
        return f"Decide with `custodian review` or `custodian approvals list --domain {domain}`."
    # A domain name is letters, digits and hyphens (core/contract.py): safe in a query as it is.
    return f"Review: {review_url}/?domain={domain}"
