"""How often a person agreed with Custodian's proposals, per operation: what earns a grant.

Counted from the domain's approval items in a window: proposals, approved, rejected, expired.
The agreement rate is approved / decided; a suggestion is made only past documented thresholds,
and it is only ever a command for a person to run.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from custodian_runtime.core.approvals.items import ApprovalItem
from custodian_runtime.core.standing.grants import never_grantable

# A grant is suggested only for an operation with this many proposals decided in the window,
# of which at least this share a person approved.
SUGGEST_MIN_DECIDED = 10
SUGGEST_MIN_RATE = 0.9


# What an item's status says the person did (an approved item may still fail on the hub).
_DECIDED = {
    **dict.fromkeys(("approved", "executed", "failed", "stale", "unknown"), "approved"),
    "rejected": "rejected",
    "expired": "expired",
}


@dataclass(frozen=True)
class Agreement:
    """One operation's tally in the window."""

    operation: str
    proposals: int = 0
    approved: int = 0
    rejected: int = 0
    expired: int = 0

    @property
    def rate(self) -> float | None:
        """approved / (approved + rejected); None before any decision."""
        decided = self.approved + self.rejected
        return None if decided == 0 else self.approved / decided

    def suggestion(self, domain: str) -> str | None:
        """The command that issues a grant, when agreement earns one (never run by itself)."""
        rate = self.rate
        decided = self.approved + self.rejected
        if self.operation in never_grantable() or rate is None:
            return None
        if decided < SUGGEST_MIN_DECIDED or rate < SUGGEST_MIN_RATE:
            return None
        return (
            f"custodian grants issue --domain {domain} --operation {self.operation} --max 10 "
            "--expires 7d --by NAME --reason TEXT"
        )

    def as_json(self, domain: str) -> dict[str, object]:
        """The row as `policy report --json` prints it."""
        return {
            "operation": self.operation,
            "proposals": self.proposals,
            "approved": self.approved,
            "rejected": self.rejected,
            "expired": self.expired,
            "agreement": self.rate,
            "suggest": self.suggestion(domain),
        }

    def line(self) -> str:
        """One line for a person."""
        rate = "-" if self.rate is None else f"{self.rate:.0%}"
        return (
            f"{self.operation}: {self.proposals} proposals, {self.approved} approved, "
            f"{self.rejected} rejected, {self.expired} expired; agreement {rate}"
        )


def agreement(items: Iterable[ApprovalItem], now: datetime, days: int) -> list[Agreement]:
    """Per operation, the tally of the items proposed in the last `days` days."""
    start = now - timedelta(days=days)
    rows: dict[str, dict[str, int]] = {}
    for item in items:
        if item.created_at < start:
            continue
        row = rows.setdefault(item.operation, {"proposals": 0})
        row["proposals"] += 1
        status = "expired" if item.status == "pending" and item.expires_at <= now else item.status
        key = _DECIDED.get(status)
        if key is not None:
            row[key] = row.get(key, 0) + 1
    return [Agreement(op, **counts) for op, counts in sorted(rows.items())]
