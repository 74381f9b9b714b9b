"""The one authority for every path that can send a write.

A fresh plan (`rule_plan`), the same write ruled again just before it is sent, the reconcile of a
killed run, an escalation, a person's approval and a grant's use all decide through the same
`authorize()` and the same standing (`core/standing/rule.apply_standing`), from the same grounds:
the observation now, Custodian's recent writes (budgets, deference), the evidence, and a
person's word (the modes, grants and revokes, and a decision on a queued item). A journal record
or an approval file that says "authorized" is evidence to check, never a permission. Each path
differs only in its staleness check: an approval compares the state the item was proposed
under, a reconcile the task state its write was authorized on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from custodian_runtime.core.approvals.history import ApprovalHistory
from custodian_runtime.core.authority.authorize import Ruling, authorize
from custodian_runtime.core.authority.budgets import RecentWrites
from custodian_runtime.core.authority.evidence import Evidence
from custodian_runtime.core.authority.holds import HELD
from custodian_runtime.core.authority.precondition import edited_problem, proposed_under
from custodian_runtime.core.contract import DomainSummary
from custodian_runtime.core.limits import Limits
from custodian_runtime.core.plan.extract import Plan, ProposedItem
from custodian_runtime.core.standing.ledger import GrantDecision, grant_standing, grant_verdict
from custodian_runtime.core.standing.modes import ModeSetting
from custodian_runtime.core.standing.record import Standing
from custodian_runtime.core.standing.rule import Ground, apply_standing, paused_by
from custodian_runtime.core.standing.said_no import lifted_history
from custodian_runtime.core.view import View


@dataclass(frozen=True)
class Grounds:
    """What every path rules from besides the observation and the item.

    The caps (`limits`), what the queue holds or people refused (`history`), the events a
    status write may cite (`evidence`; None: the observation's recent events) and Custodian's
    recent writes, for the budgets and the deference to a person (`recent`; None: neither).
    The person's `standing` (modes, grants with their uses, revokes) is read again before each
    write; a grant covers only this `hub_id`, at the ruling's time `now` (None: the time of
    `recent`, else the observation's).
    """

    limits: Limits = field(default_factory=Limits)
    history: ApprovalHistory = field(default_factory=ApprovalHistory)
    evidence: Evidence | None = None
    recent: RecentWrites | None = None
    standing: Standing = field(default_factory=Standing)
    hub_id: str | None = None
    now: datetime | None = None
    # Operations this process cannot perform, with why (a read-only canon).
    unavailable: Mapping[str, str] | None = None

    def ground(self, observed: DomainSummary) -> Ground:
        """What the standing's part of the ruling reads (core/standing/rule.py)."""
        now = self.now or (self.recent.now if self.recent else observed.generated_at)
        seen = self.evidence if self.evidence is not None else Evidence.of(observed)
        return Ground(self.standing, self.hub_id, now, self.limits, self.recent, self.history,
                      seen, View.of(observed))  # fmt: skip


@dataclass(frozen=True)
class UnderGrant:
    """A write that runs under a person's grant; `counted`: its `grant_used` is journaled."""

    grant_id: str
    counted: bool = False


@dataclass(frozen=True)
class PersonDecision:
    """What a person decided on a queued item, and the state the item was proposed under."""

    approval_id: str
    by: str
    decision: str
    precondition: Mapping[str, Any]


@dataclass(frozen=True)
class WriteRuling:
    """The authority's ruling on one write; `stale` when only the target's state has moved;
    `paused` when a person's mode (`off`, `shadow`) keeps even an approved write from running."""

    ruling: Ruling
    stale: bool = False
    paused: ModeSetting | None = None

    @property
    def allowed(self) -> bool:
        """Whether the write may be sent."""
        return self.ruling.outcome == "execute"


def as_item(
    operation: str, params: Mapping[str, Any], fp: str, index: int = 0, reason: str | None = None
) -> ProposedItem:
    """A write from a record or a queue file, shaped as the plan item the authority rules on."""
    return ProposedItem(
        index=index,
        section="recorded",
        operation=operation,
        params=dict(params),
        reason=reason,
        error=None,
        fingerprint=fp,
    )


def rule_plan(
    plan: Plan, observed: DomainSummary, grounds: Grounds | None = None
) -> tuple[Ruling, ...]:
    """One ruling per item of a fresh plan: the authority, then the person's standing."""
    g = grounds or Grounds()
    # A person's lift of a standing no sets aside the rejections it was made of.
    history = lifted_history(g.history, g.standing.said_nos, View.of(observed))
    rulings = authorize(
        plan, observed, g.limits, history, evidence=g.evidence, recent=g.recent,
        unavailable=g.unavailable,
    )  # fmt: skip
    return apply_standing(rulings, g.ground(observed))


def fresh_ruling(
    item: ProposedItem, observed: DomainSummary, grounds: Grounds | None = None
) -> Ruling:
    """The ruling a fresh plan holding only `item` gets on `observed`, from `grounds`."""
    plan = Plan(prose="", observations=(), items=(item,), raw_json="")
    return rule_plan(plan, observed, grounds)[0]


def rule_write(
    item: ProposedItem,
    observed: DomainSummary,
    person: PersonDecision | None = None,
    *,
    canon_sha256: str | None = None,
    grounds: Grounds | None = None,
    use: UnderGrant | None = None,
) -> WriteRuling:
    """Execute or deny one write, from the observation now, the grounds and the standing.

    Without `person` or `use` the write runs without a card (a run's own write, its re-send, an
    escalation): only what a fresh plan executes, without a grant, passes. Under `use` it runs
    only as a fresh plan would run it under that very grant. With a person's decision on a
    queued item it runs unless a fresh plan denies it, the item was edited, its target moved
    (`stale`), or a person set its operation to `off` or `shadow` (`held`). `canon_sha256` is a
    canon write's file hash now (None: no such file), which the hub does not hold.
    """
    g = grounds or Grounds()
    if use is not None:
        return _under_grant(item, observed, use, g)
    if person is None:
        return _without_card(item, fresh_ruling(item, observed, g))
    problem = _person_problem(item, person, observed.domain)
    if problem is not None:
        return _deny(item, problem)
    paused = paused_by(item.operation, g.standing)
    if paused is not None:
        return WriteRuling(Ruling(item, "deny", _paused_reason(item, paused)), paused=paused)
    now = proposed_under(item, observed, canon_sha256)
    if now != dict(person.precondition):
        reason = f"state changed: proposed under {dict(person.precondition)}, now {now}"
        return WriteRuling(Ruling(item, "deny", reason), stale=True)
    ruling = fresh_ruling(item, observed, g)
    if ruling.outcome == "deny" and ruling.code != HELD:
        return WriteRuling(ruling)  # held in deference: this approval is the person's newer word
    label = f"Item #{item.index} ({item.operation})"
    reason = f"{label} executes: approved by {person.by} as {person.approval_id}"
    return WriteRuling(Ruling(item, "execute", reason))


def _without_card(item: ProposedItem, ruling: Ruling) -> WriteRuling:
    """A write no person decided on runs only as a fresh plan would run it without a grant."""
    if ruling.outcome == "queue":
        why = (ruling.clause or "").rstrip(".")
        return _deny(item, f"it needs a person's approval and none is on record ({why})")
    if ruling.outcome == "execute" and ruling.grant is not None:
        return _deny(item, f"it was authorized without a grant, and only {ruling.grant} covers it")
    return WriteRuling(ruling)


def _under_grant(
    item: ProposedItem, observed: DomainSummary, use: UnderGrant, g: Grounds
) -> WriteRuling:
    """A write under `use`'s grant: that grant alone must be live for it and carry it now."""
    only = grant_standing(use.grant_id, item, g.ground(observed), counted=use.counted)
    if isinstance(only, GrantDecision):
        return _deny(item, only.reason)
    ruled = fresh_ruling(item, observed, replace(g, standing=only))
    decided = grant_verdict(use.grant_id, ruled)
    return WriteRuling(ruled if decided.allowed else Ruling(item, "deny", decided.reason))


def _paused_reason(item: ProposedItem, paused: ModeSetting) -> str:
    return (
        f"Item #{item.index} ({item.operation}) is not written: {item.operation} is {paused.mode}, "
        f"set by {paused.by} at {paused.at:%Y-%m-%d %H:%M} UTC ({paused.reason}); nothing of it is "
        "written while it is, a person's approval included."
    )


def _person_problem(item: ProposedItem, person: PersonDecision, domain: str) -> str | None:
    """Why the item as stored does not carry the decision a person made (None when it does)."""
    if person.decision != "approved":
        return f"{person.approval_id} is {person.decision}, not approved"
    stored = dict(person.precondition)
    return edited_problem(item.operation, item.params, item.fingerprint, stored, domain)


def _deny(item: ProposedItem, problem: str) -> WriteRuling:
    label = f"Item #{item.index} ({item.operation})"
    return WriteRuling(Ruling(item, "deny", f"{label} is denied: {problem}."))
