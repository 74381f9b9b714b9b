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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Literal

import custodian_runtime.core.operations as operations
from custodian_runtime.core.approvals.history import ApprovalHistory
from custodian_runtime.core.authority.authorize import Ruling, authorize
from custodian_runtime.core.authority.budgets import RecentWrites
from custodian_runtime.core.authority.checks import SAME_TITLE
from custodian_runtime.core.authority.evidence import Evidence
from custodian_runtime.core.authority.holds import HELD
from custodian_runtime.core.authority.keys import IDEMPOTENCY_WINDOW
from custodian_runtime.core.authority.precondition import edited_problem, proposed_under
from custodian_runtime.core.authority.proof import probe_version
from custodian_runtime.core.contract import DomainSummary, ProgressEvent, Task
from custodian_runtime.core.journal.kinds import RulingRecord
from custodian_runtime.core.journal.records import parse_at
from custodian_runtime.core.journal.spine import PendingWrite
from custodian_runtime.core.limits import Limits
from custodian_runtime.core.operations import flag_for_human
from custodian_runtime.core.plan.extract import Plan, ProposedItem, fingerprint
from custodian_runtime.core.standing.ledger import GrantDecision, grant_standing, grant_verdict
from custodian_runtime.core.standing.modes import ModeSetting
from custodian_runtime.core.standing.record import Standing
from custodian_runtime.core.standing.rule import Ground, apply_standing, held_by
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
    `held` when a person's mode (`off`, `shadow`) keeps even an approved write from running."""

    ruling: Ruling
    stale: bool = False
    held: ModeSetting | None = None

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
    rulings = authorize(
        plan, observed, g.limits, g.history, evidence=g.evidence, recent=g.recent,
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
    held = held_by(item.operation, g.standing)
    if held is not None:
        return WriteRuling(Ruling(item, "deny", _held_reason(item, held)), held=held)
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


def _held_reason(item: ProposedItem, held: ModeSetting) -> str:
    return (
        f"Item #{item.index} ({item.operation}) is not written: {item.operation} is {held.mode}, "
        f"set by {held.by} at {held.at:%Y-%m-%d %H:%M} UTC ({held.reason}); nothing of it is "
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


# --- reconcile --------------------------------------------------------------------------------

Action = Literal["found", "probe", "resend", "refused", "expired", "stale"]
# Who allowed a write: sanctioned (a run's own write), a person (an approved item) or a person's
# grant. A write is sent only through the dispatch table of the authority that allowed it.
Authority = Literal["sanctioned", "person", "grant"]


@dataclass(frozen=True)
class ReconcileStep:
    """What to do with one write a killed run left open, why, and who allowed it."""

    action: Action
    reason: str
    hub_id: str | None = None
    authority: Authority = "sanctioned"
    # A probe: the version the write carried, re-sent as If-Match with the write's own key.
    if_match: int | None = None


def reconcile_step(
    pending: PendingWrite,
    observed: DomainSummary,
    events: Sequence[ProgressEvent],
    now: datetime,
    grounds: Grounds | None = None,
    *,
    canon_sha256: str | None = None,
) -> ReconcileStep:
    """Found on the hub, re-sent, or closed: the record chain, the hub and the window decide.

    A write is re-sent only when its target is still as the authorization saw it, and the one
    authority allows it now from the same `grounds` a fresh plan would be ruled from. A canon
    write is settled against its file's hash now (`canon_sha256`), never through the hub.
    """
    if pending.problems:
        return ReconcileStep("refused", "the journal does not prove it: " + pending.problems[0])
    spec = operations.find(pending.operation)
    if spec is None:
        return ReconcileStep("refused", f"{pending.operation} is not an operation Custodian knows")
    if spec.writes == "canon":
        return _canon_step(pending, canon_sha256)
    landed = _landed_step(pending, spec.status_write, observed, events, now)
    if landed is not None:
        return landed
    shown = _shown(pending, observed, events) if spec.status_write else ""
    if now - parse_at(pending.authorized_at) >= IDEMPOTENCY_WINDOW:
        return ReconcileStep(
            "expired",
            "authorized more than 24 h ago, past the hub's idempotency window, and not proven "
            f"on the hub{shown}: a re-send could make it twice, so a person must check",
        )
    moved = moved_since_authorized(pending, observed)
    if moved is not None:
        return ReconcileStep("stale", moved + shown)
    if pending.grant_id is not None:
        return _grant_step(pending, pending.grant_id, observed, now, grounds or Grounds())
    person = _person_of(pending)
    verdict = rule_write(_recorded_item(pending), observed, person, grounds=grounds)
    if verdict.stale:
        return ReconcileStep("stale", "the authority finds it stale: " + verdict.ruling.reason)
    if not verdict.allowed:
        return ReconcileStep("refused", "the authority denies it now: " + verdict.ruling.reason)
    authority: Authority = "sanctioned" if person is None else "person"
    return ReconcileStep("resend", verdict.ruling.reason, authority=authority)


def _landed_step(
    pending: PendingWrite,
    status_write: bool,
    observed: DomainSummary,
    events: Sequence[ProgressEvent],
    now: datetime,
) -> ReconcileStep | None:
    """Found on the hub, or a status write's probe: the status a task shows proves nothing
    (landed means proven), only the hub replaying the write's key does."""
    if status_write:
        return _status_probe(pending, observed, now)
    landed = landed_on_hub(pending, observed, events)
    if landed is None:
        return None
    return ReconcileStep("found", f"already on the hub as {landed}", hub_id=landed)


def _status_probe(
    pending: PendingWrite, observed: DomainSummary, now: datetime
) -> ReconcileStep | None:
    """Re-send a status write's key with the If-Match of the version it carried, once that
    version is gone: it can apply nothing, and only a replay of the key proves it landed."""
    version, why = probe_version(pending, observed, now)
    if version is None:
        return None
    reason = (
        f"{why}: its key is re-sent with If-Match {version}, which can apply nothing now; "
        "only the hub replaying the key proves it landed"
    )
    return ReconcileStep("probe", reason, authority=authority_of(pending), if_match=version)


def authority_of(pending: PendingWrite) -> Authority:
    """Who allowed a write: its dispatch table is the one a re-send or a probe goes through."""
    if pending.grant_id is not None:
        return "grant"
    return "person" if pending.approval is not None else "sanctioned"


def _shown(pending: PendingWrite, observed: DomainSummary, events: Sequence[ProgressEvent]) -> str:
    """What a reason adds when the task shows the status the write sets: that proves nothing."""
    if landed_on_hub(pending, observed, events) is None:
        return ""
    return " (the hub shows the status it sets, but a status alone proves nothing)"


def _grant_step(
    pending: PendingWrite, grant_id: str, observed: DomainSummary, now: datetime, g: Grounds
) -> ReconcileStep:
    """Re-send under the same grant (its use already counted), or close it with the reason."""
    use = UnderGrant(grant_id, counted=True)
    verdict = rule_write(_recorded_item(pending), observed, grounds=replace(g, now=now), use=use)
    if not verdict.allowed:
        return ReconcileStep(
            "refused", "the grant no longer allows it: " + _clause(verdict.ruling.reason)
        )
    return ReconcileStep("resend", verdict.ruling.reason, authority="grant")


def _clause(reason: str) -> str:
    """A denial's sentence without its item label (the reconcile report names the item)."""
    head, sep, rest = reason.partition(" is denied: ")
    return rest.rstrip(".") if sep and head.startswith("Item #") else reason


def _canon_step(pending: PendingWrite, canon_sha256: str | None) -> ReconcileStep:
    path = landed_canon(pending, canon_sha256)
    if path is not None:
        return ReconcileStep("found", f"the canon file {path} already holds the approved content")
    return ReconcileStep(
        "refused",
        "the approved canon write did not land (the file does not hold its content); only its "
        "approval writes the canon, so a person approves the item again",
        authority="person",
    )


def moved_since_authorized(pending: PendingWrite, observed: DomainSummary) -> str | None:
    """Why a status write's task is no longer as its authorization saw it (None: it is)."""
    planned = pending.planned_on
    task_id = pending.params.get("task_id")
    if planned is None or not isinstance(task_id, str):
        return None
    task = _task(observed, task_id)
    if task is None:
        return f"task {task_id} is no longer in the domain"
    then = (planned.get("status"), planned.get("version"), planned.get("updated_at"))
    version_moved = then[1] is not None and task.version is not None and then[1] != task.version
    time_moved = then[2] is not None and parse_at(str(then[2])) != task.updated_at
    if then[0] == task.status and not version_moved and not time_moved:
        return None
    return (
        f"task {task_id} moved since the write was authorized: it was {then[0]} (version "
        f"{then[1]}), the hub now shows {task.status} (version {task.version}); the next plan "
        "decides"
    )


def _task(observed: DomainSummary, task_id: str) -> Task | None:
    return next((t for ws in observed.workstreams for t in ws.tasks if t.id == task_id), None)


def _recorded_item(pending: PendingWrite) -> ProposedItem:
    ruling = pending.ruling or RulingRecord()
    return as_item(
        str(ruling.operation), dict(ruling.params or {}), str(ruling.fingerprint), index=0
    )


def _person_of(pending: PendingWrite) -> PersonDecision | None:
    if pending.approval is None:
        return None
    ruling = pending.ruling or RulingRecord()
    return PersonDecision(
        approval_id=str(pending.approval.approval_id),
        by=str(pending.approval.by),
        decision=str(pending.approval.decision),
        precondition=dict(ruling.precondition or {}),
    )


def landed_on_hub(
    pending: PendingWrite,
    observed: DomainSummary,
    events: Sequence[ProgressEvent],
    *,
    canon_sha256: str | None = None,
) -> str | None:
    """The hub id (a canon write: the path) that shows the write already made; None: not found.

    Each operation's spec says how it is found (core/operations/): an event by its run mark, a
    status by the task's status, a flag by an open flag on the task, a create by a new item with
    its title (one that bore the title when it was proposed does not count), a resolve by the
    decision or flag no longer being open, a canon write by its file's hash. An operation
    Custodian does not know is an error (KeyError), never a silent "not found".
    """
    spec = operations.spec(pending.operation)
    ruling = pending.ruling or RulingRecord()
    before = (ruling.precondition or {}).get(SAME_TITLE) or []
    landing = operations.Landing(
        View.of(observed), tuple(events), pending.run_id, tuple(before), canon_sha256
    )
    return spec.landed(pending.params, landing)


def landed_canon(pending: PendingWrite, canon_sha256: str | None) -> str | None:
    """A canon write found done: the file's hash now is that of the approved content."""
    spec = operations.find(pending.operation)
    if spec is None or spec.writes != "canon":
        return None
    nothing = View("", {}, {}, {}, {}, frozenset())
    landing = operations.Landing(nothing, run_id=pending.run_id, canon_sha256=canon_sha256)
    return spec.landed(pending.params, landing)


def escalation(
    pending: PendingWrite, reason: str, observed: DomainSummary, grounds: Grounds | None = None
) -> WriteRuling | None:
    """The ruling on a flag for a person on the write's task (None: the write names no task).

    It is a write without a card like any other: the modes and budgets rule it as they rule a
    fresh plan's flag.
    """
    task = pending.params.get("task_id")
    if not isinstance(task, str):
        return None
    note = (
        f"Custodian could not confirm a {pending.operation} that run {pending.run_id} "
        f"authorized and may not resend it: {reason}. Check the task by hand."
    )[:1000]
    params = {"task_id": task, "note": note}
    flag = flag_for_human.SPEC.name
    item = as_item(flag, params, fingerprint(flag, params))
    return rule_write(item, observed, grounds=grounds)
