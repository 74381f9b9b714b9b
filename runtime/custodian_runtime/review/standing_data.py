"""What the Standing page reads of one domain: its modes, grants with uses left, the agreement
report with its suggestions, the modes a person set, and the writes run under a grant.

The modes and grants are `standing/store.StandingStore(...).standing(domain)`, as the
run reads them; the report is `standing/commands.agreement_rows`, as `custodian policy report`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from custodian_runtime.core.journal.words import Word
from custodian_runtime.core.standing.agreement import Agreement
from custodian_runtime.core.standing.modes import default_mode, known_operations
from custodian_runtime.core.standing.record import Standing
from custodian_runtime.core.standing.suggestions import Suggested
from custodian_runtime.errors import CustodianError
from custodian_runtime.journal.person.queue import ApprovalStore
from custodian_runtime.journal.person.standing_store import StandingStore
from custodian_runtime.journal.store import JournalStore
from custodian_runtime.person import standing as policy_commands
from custodian_runtime.review.asked import digest_of
from custodian_runtime.review.standing_history import (
    Change,
    GrantUse,
    changes,
    grant_uses,
    where_clause,
)
from custodian_runtime.settings import Settings

REPORT_DAYS = 30  # the window of `custodian policy report`'s default


@dataclass(frozen=True)
class ModeRow:
    """One operation's mode: the default, or who set it, when and why."""

    operation: str
    mode: str
    by: str | None = None
    reason: str | None = None
    at: datetime | None = None

    @property
    def is_default(self) -> bool:
        """True when no person set this operation's mode."""
        return self.by is None


@dataclass(frozen=True)
class GrantRow:
    """One grant as `custodian grants list` shows it, with what it covers in words."""

    row: dict[str, Any]
    where: str
    waiting_revoke: bool = False  # revoked while a run had the domain's lock: binds it already

    @property
    def id(self) -> str:
        """The grant's id."""
        return str(self.row["id"])

    @property
    def live(self) -> bool:
        """True while the grant may still cover a proposal."""
        return self.row["state"] == "live" and not self.waiting_revoke


@dataclass(frozen=True)
class StandingView:
    """Everything the Standing page shows of one domain."""

    domain: str
    modes: tuple[ModeRow, ...]
    grants: tuple[GrantRow, ...]
    report: tuple[Agreement, ...]
    changes: tuple[Change, ...]
    uses: tuple[GrantUse, ...]
    waiting: tuple[Word, ...] = ()
    problem: str | None = None
    # Per operation, what `policy report` suggests and why (policy_commands.suggested).
    suggested: Mapping[str, Suggested] = field(default_factory=dict)

    def mode_of(self, operation: str) -> str | None:
        """The mode `operation` runs in (what the report's suggestion depends on)."""
        return next((m.mode for m in self.modes if m.operation == operation), None)

    def suggested_of(self, operation: str) -> Suggested:
        """What the report suggests for `operation`, or why nothing."""
        return self.suggested.get(operation) or Suggested(operation)


def domains(settings: Settings) -> list[str]:
    """Every domain with a journal or an approval item, sorted."""
    journaled = JournalStore(settings.memory_dir).domains()
    try:
        queued = {i.domain for i in ApprovalStore(settings.memory_dir).all(verify=False)}
    except CustodianError:
        queued = set()
    return sorted(set(journaled) | queued)


def read_standing(settings: Settings, domain: str) -> Standing:
    """The domain's modes and grants as a run reads them, revokes kept while busy included."""
    store = StandingStore(settings.memory_dir, settings.seal_key)
    return store.standing(domain).revoking(store.waiting_revokes(domain))


def standing_view(settings: Settings, domain: str, now: datetime) -> StandingView:
    """The Standing page's view of `domain` (what could not be read is said in `problem`)."""
    store = StandingStore(settings.memory_dir, settings.seal_key)
    try:
        standing = store.standing(domain)
        waiting = tuple(store.waiting(domain))
        revokes = store.waiting_revokes(domain)
        records = JournalStore(settings.memory_dir).scan(domain).records
        report = policy_commands.agreement_rows(settings, domain, REPORT_DAYS, now)
        suggested = policy_commands.suggested(settings, domain, report, now=now)
    except CustodianError as exc:
        return StandingView(domain, (), (), (), (), (), problem=exc.message)
    return StandingView(
        domain=domain,
        modes=_modes(standing),
        grants=_grants(standing, revokes, now),
        report=tuple(report),
        changes=tuple(changes(records)),
        uses=tuple(grant_uses(records)),
        waiting=waiting,
        suggested=suggested,
    )


def _modes(standing: Standing) -> tuple[ModeRow, ...]:
    rows = []
    for op in known_operations():
        s = standing.modes.settings.get(op)
        if s is None:
            rows.append(ModeRow(op, default_mode(op)))
        else:
            rows.append(ModeRow(op, s.mode, s.by, s.reason, s.at))
    return tuple(rows)


def _grants(standing: Standing, revokes: frozenset[str], now: datetime) -> tuple[GrantRow, ...]:
    rows = [
        GrantRow(r, where_clause(dict(r["where"])), str(r["id"]) in revokes)  # type: ignore[call-overload]
        for r in standing.listing(now)
    ]
    # Live grants first, then the newest issued.
    rows.sort(key=lambda g: str(g.row["issued_at"]), reverse=True)
    rows.sort(key=lambda g: not g.live)
    return tuple(rows)


def suggestion_state(settings: Settings, domain: str, operation: str) -> str:
    """What an issue from a suggestion is bound to: the report's row and the domain's grants."""
    rows = policy_commands.agreement_rows(settings, domain, REPORT_DAYS)
    row = next((r.as_json(domain) for r in rows if r.operation == operation), None)
    grants = [g.model_dump(mode="json") for g in read_standing(settings, domain).grants]
    return digest_of({"row": row, "grants": grants})


def grant_state(settings: Settings, domain: str, grant_id: str, now: datetime) -> str | None:
    """What a revoke is bound to: the grant as listed now (None: no such grant)."""
    standing = read_standing(settings, domain)
    row = next((r for r in standing.listing(now) if r["id"] == grant_id), None)
    return None if row is None else digest_of({k: v for k, v in row.items() if k != "state"})
