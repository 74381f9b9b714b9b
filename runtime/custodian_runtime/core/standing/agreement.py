"""How often a person agreed with Custodian's proposals, per operation: what earns a grant.

Counted in a window from the domain's approval items (proposals, approved, rejected, expired)
and from its shadow items (core/standing/shadow.py: how many a person later did the same way
on the hub). The agreement rate is (approved + shadow matched) / (approved + rejected + shadow);
an expired item is no decision and counts in neither. A suggestion is made only past
documented thresholds, and it is only ever a command for a person to run: which, and why, is
core/standing/suggestions.py, per class a grant's `--where` can name.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from custodian_runtime.core.approvals.items import ApprovalItem
from custodian_runtime.core.standing.classes import DecidedTally, shared_params
from custodian_runtime.core.standing.commands import Asking
from custodian_runtime.core.standing.earned import NEEDED
from custodian_runtime.core.standing.grants import held_params, where_text
from custodian_runtime.core.standing.live import Live
from custodian_runtime.core.standing.shadow import ShadowCount
from custodian_runtime.core.standing.suggestions import Suggested, suggest

# A suggestion needs this many decided in its class (none rejected): see earned.py.
SUGGEST_MIN_DECIDED = NEEDED


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

    # Each decided proposal: approved or not, and its params as the hub will hold them.
    said: tuple[tuple[bool, Mapping[str, object]], ...] = ()
    # Each one's target as observed when queued (None: not kept), in the same order.
    said_facts: tuple[Mapping[str, str] | None, ...] = ()

    def tally(self) -> DecidedTally:
        """What the suggestion reads of this row."""
        return DecidedTally(
            self.operation, self.approved, self.rejected, self.shadow, self.shadow_matched,
            self.said, self.said_facts,
        )  # fmt: skip

    def suggested(
        self, asking: Asking, mode: str | None = None, live: Live | None = None
    ) -> Suggested:
        """The commands a person may run for this operation, or why none (never run by itself)."""
        return suggest(self.tally(), mode, live or Live(), asking)

    def suggestion(self, domain: str, mode: str | None = None) -> str | None:
        """The first suggested command, in `domain` with no grant known live (None: none)."""
        found = self.suggested(Asking(domain), mode).suggestions
        return found[0].command if found else None

    def as_json(
        self, domain: str, mode: str | None = None, suggested: Suggested | None = None
    ) -> dict[str, object]:
        """The row as `policy report --json` prints it, with its suggestions and why."""
        found = suggested or self.suggested(Asking(domain), mode)
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
            "suggest": found.suggestions[0].command if found.suggestions else None,
            "suggestions": [one.as_json() for one in found.suggestions],
            "none_because": found.none_because,
        }

    def line(self) -> str:
        """One line for a person."""
        rate = "-" if self.rate is None else f"{self.rate:.0%}"
        shadow = ""
        if self.shadow:
            shadow = f", {self.shadow} shadow ({self.shadow_matched} done the same by a person)"
        return (
            f"{self.operation}: {self.proposals} proposal{'' if self.proposals == 1 else 's'}, "
            f"{self.approved} approved, "
            f"{self.rejected} rejected, {self.expired} expired{shadow}; agreement {rate}"
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
    decided: dict[str, list[tuple[bool, Mapping[str, object]]]] = {}
    facts: dict[str, list[Mapping[str, str] | None]] = {}
    for item in sorted(items, key=lambda i: (i.created_at, i.id)):  # oldest first
        if item.created_at < start:
            continue
        row = rows.setdefault(item.operation, {"proposals": 0})
        row["proposals"] += 1
        status = "expired" if item.status == "pending" and item.expires_at <= now else item.status
        key = _DECIDED.get(status)
        if key is not None:
            row[key] = row.get(key, 0) + 1
        if key in ("approved", "rejected"):
            held = held_params(item.operation, item.params)
            said.setdefault(item.operation, {}).setdefault(key, []).append(held)
            decided.setdefault(item.operation, []).append((key == "approved", held))
            facts.setdefault(item.operation, []).append(item.facts)
    for op, count in (shadows or {}).items():
        row = rows.setdefault(op, {"proposals": 0})
        row.update(shadow=count.shadow, shadow_matched=count.matched)
    return [
        replace(
            _narrowed(_tally(op, counts), said.get(op, {})),
            said=tuple(decided.get(op, ())),
            said_facts=tuple(facts.get(op, ())),
        )
        for op, counts in sorted(rows.items())
    ]


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
