"""How often a person agreed with Custodian's proposals, per operation: what earns a grant.

Counted in a window from the domain's approval items (proposals, approved, rejected, expired)
and from its shadow items (core/standing/shadow.py: how many a person later did the same way
on the hub). The agreement rate is (approved + shadow matched) / (approved + rejected + shadow);
an expired item is no decision and counts in neither. A suggestion is made only past
documented thresholds, and it is only ever a command for a person to run.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from custodian_runtime.core import operations
from custodian_runtime.core.approvals.items import ApprovalItem
from custodian_runtime.core.standing.grants import never_grantable
from custodian_runtime.core.standing.shadow import ShadowCount

# A grant (or a mode) is suggested only for an operation with this many items decided in the
# window (shadow items count as decided), of which at least this share a person agreed with.
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
    shadow: int = 0  # items shadow mode kept back
    shadow_matched: int = 0  # of those, how many a person did the same way within 7 days

    @property
    def decided(self) -> int:
        """What the rate is out of: approved + rejected + shadow items (expired is no decision)."""
        return self.approved + self.rejected + self.shadow

    @property
    def rate(self) -> float | None:
        """(approved + shadow matched) / decided; None before any decision."""
        return None if self.decided == 0 else (self.approved + self.shadow_matched) / self.decided

    def suggestion(self, domain: str, mode: str | None = None) -> str | None:
        """The command a person may run when agreement earns it (never run by itself).

        In `shadow` mode: set the mode back to `ask` (`auto` for a sanctioned write) when a
        person matched the shadow items; otherwise a grant, or `auto` for a sanctioned write.
        """
        if mode == "shadow":
            return self._mode_back(domain)
        rate = self.rate
        if mode == "off" or rate is None or self.decided < SUGGEST_MIN_DECIDED:
            return None
        if rate < SUGGEST_MIN_RATE:
            return None
        if self.operation in operations.names("sanctioned"):
            return _policy_set(domain, self.operation, "auto")
        if self.operation in never_grantable():
            return None
        return (
            f"custodian grants issue --domain {domain} --operation {self.operation} --max 10 "
            "--expires 7d --by NAME --reason TEXT"
        )

    def _mode_back(self, domain: str) -> str | None:
        if self.shadow < SUGGEST_MIN_DECIDED:
            return None
        if self.shadow_matched / self.shadow < SUGGEST_MIN_RATE:
            return None
        sanctioned = self.operation in operations.names("sanctioned")
        return _policy_set(domain, self.operation, "auto" if sanctioned else "ask")

    def as_json(self, domain: str, mode: str | None = None) -> dict[str, object]:
        """The row as `policy report --json` prints it."""
        return {
            "operation": self.operation,
            "proposals": self.proposals,
            "approved": self.approved,
            "rejected": self.rejected,
            "expired": self.expired,
            "shadow": self.shadow,
            "shadow_matched": self.shadow_matched,
            "decided": self.decided,
            "agreement": self.rate,
            "suggest": self.suggestion(domain, mode),
        }

    def line(self) -> str:
        """One line for a person."""
        rate = "-" if self.rate is None else f"{self.rate:.0%}"
        shadow = ""
        if self.shadow:
            shadow = f", {self.shadow} shadow ({self.shadow_matched} done the same by a person)"
        return (
            f"{self.operation}: {self.proposals} proposals, {self.approved} approved, "
            f"{self.rejected} rejected, {self.expired} expired{shadow}; agreement {rate}"
        )


def _policy_set(domain: str, operation: str, mode: str) -> str:
    return (
        f"custodian policy set --domain {domain} --operation {operation} --mode {mode} "
        "--by NAME --reason TEXT"
    )


def agreement(
    items: Iterable[ApprovalItem],
    now: datetime,
    days: int,
    shadows: Mapping[str, ShadowCount] | None = None,
) -> list[Agreement]:
    """Per operation, the tally of the items proposed in the last `days` days.

    `shadows` are the shadow items of the same window per operation (core/standing/shadow.py).
    """
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
    for op, count in (shadows or {}).items():
        row = rows.setdefault(op, {"proposals": 0})
        row.update(shadow=count.shadow, shadow_matched=count.matched)
    return [Agreement(op, **counts) for op, counts in sorted(rows.items())]
