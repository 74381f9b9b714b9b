"""How often a person agreed with Custodian's proposals, per operation: what earns a grant.

Counted in a window from the domain's approval items (proposals, approved, rejected, expired)
and from its shadow items (core/standing/shadow.py: how many a person later did the same way
on the hub). The agreement rate is (approved + shadow matched) / (approved + rejected + shadow);
an expired item is no decision and counts in neither. A suggestion is made only past
documented thresholds, and it is only ever a command for a person to run. A suggested grant is
narrowed (`--where`) to the params every approved proposal shared, and none is suggested when
even so it would cover a proposal the person rejected in the window.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

import custodian_runtime.core.operations as operations
from custodian_runtime.core.approvals.items import ApprovalItem
from custodian_runtime.core.standing.grants import never_grantable, where_text
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
    # The params every approved proposal in the window shared: what a suggested grant covers.
    where: Mapping[str, str] = field(default_factory=dict)
    # Rejected proposals in the window that a grant narrowed to `where` would still cover.
    rejected_covered: int = 0

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
        if self.operation in never_grantable() or self.rejected_covered:
            return None
        narrowed = "".join(f" --where {shlex.quote(f'{k}={v}')}" for k, v in self.where.items())
        return (
            f"custodian grants issue --domain {domain} --operation {self.operation}{narrowed} "
            "--max 10 --expires 7d --by NAME --reason TEXT"
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
            "where": dict(self.where),
            "rejected_covered": self.rejected_covered,
            "suggest": self.suggestion(domain, mode),
        }

    def line(self) -> str:
        """One line for a person."""
        rate = "-" if self.rate is None else f"{self.rate:.0%}"
        shadow = ""
        if self.shadow:
            shadow = f", {self.shadow} shadow ({self.shadow_matched} done the same by a person)"
        covered = ""
        if self.rejected_covered:
            covered = (
                f"; no grant suggested: one would also cover {self.rejected_covered} "
                "proposal(s) a person rejected"
            )
        return (
            f"{self.operation}: {self.proposals} proposals, {self.approved} approved, "
            f"{self.rejected} rejected, {self.expired} expired{shadow}; agreement {rate}{covered}"
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
    said: dict[str, dict[str, list[Mapping[str, object]]]] = {}
    for item in items:
        if item.created_at < start:
            continue
        row = rows.setdefault(item.operation, {"proposals": 0})
        row["proposals"] += 1
        status = "expired" if item.status == "pending" and item.expires_at <= now else item.status
        key = _DECIDED.get(status)
        if key is not None:
            row[key] = row.get(key, 0) + 1
        if key in ("approved", "rejected"):
            said.setdefault(item.operation, {}).setdefault(key, []).append(item.params)
    for op, count in (shadows or {}).items():
        row = rows.setdefault(op, {"proposals": 0})
        row.update(shadow=count.shadow, shadow_matched=count.matched)
    return [_narrowed(_tally(op, counts), said.get(op, {})) for op, counts in sorted(rows.items())]


def _tally(operation: str, counts: Mapping[str, int]) -> Agreement:
    return Agreement(
        operation,
        proposals=counts.get("proposals", 0),
        approved=counts.get("approved", 0),
        rejected=counts.get("rejected", 0),
        expired=counts.get("expired", 0),
        shadow=counts.get("shadow", 0),
        shadow_matched=counts.get("shadow_matched", 0),
    )


def _narrowed(row: Agreement, said: Mapping[str, Sequence[Mapping[str, object]]]) -> Agreement:
    """The row with what every approved proposal shared, and the rejections that still fit."""
    where = shared_params(said.get("approved", ()))
    covered = sum(
        1
        for params in said.get("rejected", ())
        if all(where_text(params.get(k)) == v for k, v in where.items())
    )
    return replace(row, where=where, rejected_covered=covered)


def shared_params(approved: Sequence[Mapping[str, object]]) -> dict[str, str]:
    """The `KEY=VALUE`s (scalar values, as a grant compares them) every approved item had."""
    if not approved:
        return {}
    first, *rest = approved
    shared = {k: where_text(v) for k, v in first.items() if isinstance(v, str | int | float | bool)}
    return {k: v for k, v in sorted(shared.items()) if all(where_text(p.get(k)) == v for p in rest)}
