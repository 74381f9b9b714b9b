"""The one authority for writes outside a fresh plan: the reconcile of a killed run, an approval.

Both decide through the same `authorize()` a fresh plan goes through, from the same grounds: the
observation now, Custodian's recent writes (budgets, deference), the evidence, and the people's
decisions. A journal record or an approval file that says "authorized" is evidence to check,
never a permission. Each path differs only in its staleness check: an approval compares the
state the item was proposed under, a reconcile the task state its write was authorized on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

import custodian_runtime.core.operations as operations
from custodian_runtime.core.approvals.history import ApprovalHistory
from custodian_runtime.core.authority.authorize import Ruling, authorize
from custodian_runtime.core.authority.budgets import RecentWrites
from custodian_runtime.core.authority.checks import SAME_TITLE
from custodian_runtime.core.authority.evidence import Evidence
from custodian_runtime.core.authority.keys import IDEMPOTENCY_WINDOW
from custodian_runtime.core.authority.precondition import edited_problem, proposed_under
from custodian_runtime.core.contract import DomainSummary, ProgressEvent, Task
from custodian_runtime.core.journal.kinds import RulingRecord
from custodian_runtime.core.journal.records import parse_at
from custodian_runtime.core.journal.spine import PendingWrite
from custodian_runtime.core.operations import flag_for_human
from custodian_runtime.core.plan.extract import Plan, ProposedItem, fingerprint
from custodian_runtime.core.policy import Policy
from custodian_runtime.core.standing.ledger import grant_decision
from custodian_runtime.core.standing.record import Standing
from custodian_runtime.core.standing.rule import Ground
from custodian_runtime.core.view import View


@dataclass(frozen=True)
class Grounds:
    """What every path rules from besides the observation and the item.

    The caps (`policy`), what the queue holds or people refused (`history`), the events a
    status write may cite (`evidence`; None: the observation's recent events) and Custodian's
    recent writes, for the budgets and the deference to a person (`recent`; None: neither).
    A write left open under a grant is ruled with the journal's `standing` and this `hub_id`.
    """

    policy: Policy = field(default_factory=Policy)
    history: ApprovalHistory = field(default_factory=ApprovalHistory)
    evidence: Evidence | None = None
    recent: RecentWrites | None = None
    standing: Standing = field(default_factory=Standing)
    hub_id: str | None = None


@dataclass(frozen=True)
class PersonDecision:
    """What a person decided on a queued item, and the state the item was proposed under."""

    approval_id: str
    by: str
    decision: str
    precondition: Mapping[str, Any]


@dataclass(frozen=True)
class WriteRuling:
    """The authority's ruling on one write; `stale` when only the target's state has moved."""

    ruling: Ruling
    stale: bool = False

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


def rule_write(
    item: ProposedItem,
    observed: DomainSummary,
    person: PersonDecision | None = None,
    *,
    canon_sha256: str | None = None,
    grounds: Grounds | None = None,
) -> WriteRuling:
    """Execute or deny one write, from the observation now and, if queued, a person's decision.

    `canon_sha256` is a canon write's file hash now (None: no such file), which the hub does
    not hold; any other target's state is taken from `observed`. A queued item whose target
    merely moved is `stale`. `grounds` are the same a fresh plan is ruled from.
    """
    ruling = fresh_ruling(item, observed, grounds)
    if person is None:
        if ruling.outcome == "queue":
            return _deny(item, "it needs a person's approval and none is on record")
        return WriteRuling(ruling)
    problem = _person_problem(item, person, observed.domain)
    if problem is not None:
        return _deny(item, problem)
    now = proposed_under(item, observed, canon_sha256)
    if now != dict(person.precondition):
        reason = f"state changed: proposed under {dict(person.precondition)}, now {now}"
        return WriteRuling(Ruling(item, "deny", reason), stale=True)
    if ruling.outcome == "deny":
        return WriteRuling(ruling)
    label = f"Item #{item.index} ({item.operation})"
    reason = f"{label} executes: approved by {person.by} as {person.approval_id}"
    return WriteRuling(Ruling(item, "execute", reason))


def fresh_ruling(
    item: ProposedItem, observed: DomainSummary, grounds: Grounds | None = None
) -> Ruling:
    """The ruling a fresh plan holding only `item` gets on `observed`, from `grounds`."""
    g = grounds or Grounds()
    plan = Plan(prose="", observations=(), items=(item,), raw_json="")
    return authorize(plan, observed, g.policy, g.history, evidence=g.evidence, recent=g.recent)[0]


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

Action = Literal["found", "resend", "refused", "expired", "stale"]
# Who allowed a write: the policy (a run's own write), a person (an approved item) or a person's
# grant. A write is sent only through the dispatch table of the authority that allowed it.
Authority = Literal["policy", "person", "grant"]


@dataclass(frozen=True)
class ReconcileStep:
    """What to do with one write a killed run left open, why, and who allowed it."""

    action: Action
    reason: str
    hub_id: str | None = None
    authority: Authority = "policy"


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
    landed = landed_on_hub(pending, observed, events)
    if landed is not None:
        return ReconcileStep("found", f"already on the hub as {landed}", hub_id=landed)
    if now - parse_at(pending.authorized_at) >= IDEMPOTENCY_WINDOW:
        return ReconcileStep(
            "expired",
            "authorized more than 24 h ago, past the hub's idempotency window, and not found "
            "on the hub: a re-send could make it twice, so a person must check",
        )
    moved = moved_since_authorized(pending, observed)
    if moved is not None:
        return ReconcileStep("stale", moved)
    if pending.grant_id is not None:
        return _grant_step(pending, pending.grant_id, observed, now, grounds or Grounds())
    person = _person_of(pending)
    verdict = rule_write(_recorded_item(pending), observed, person, grounds=grounds)
    if verdict.stale:
        return ReconcileStep("stale", "the authority finds it stale: " + verdict.ruling.reason)
    if not verdict.allowed:
        return ReconcileStep("refused", "the authority denies it now: " + verdict.ruling.reason)
    authority: Authority = "policy" if person is None else "person"
    return ReconcileStep("resend", verdict.ruling.reason, authority=authority)


def _grant_step(
    pending: PendingWrite, grant_id: str, observed: DomainSummary, now: datetime, g: Grounds
) -> ReconcileStep:
    """Re-send under the same grant (its use already counted), or close it with the reason."""
    ruling = fresh_ruling(_recorded_item(pending), observed, g)
    ground = Ground(g.standing, g.hub_id, now, g.policy, g.recent, g.history)
    decided = grant_decision(grant_id, ruling, ground)
    if not decided.allowed:
        return ReconcileStep("refused", "the grant no longer allows it: " + decided.reason)
    return ReconcileStep("resend", decided.reason, authority="grant")


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


def escalation(pending: PendingWrite, reason: str, observed: DomainSummary) -> ProposedItem | None:
    """A flag for a person on the write's task, when the authority would allow one now."""
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
    return item if rule_write(item, observed).allowed else None
