"""authorize(plan, observed, policy, history): one ruling per proposed item, with a reason.

This is the security boundary. Whatever the model answered, only the three sanctioned writes, on
ids of the observed domain, within the per-run caps, may come out as `execute`. Every item is
checked again here (schema, routing, fingerprint), so a ProposedItem built by hand gets no
further than one that extract_plan built.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Literal

import custodian_runtime.core.operations as operations
from custodian_runtime.core.approvals.history import ApprovalHistory as ApprovalHistory
from custodian_runtime.core.authority.asked import asked_anyway
from custodian_runtime.core.authority.budgets import RecentWrites, budget_problem
from custodian_runtime.core.authority.checks import Tally, ids_problem
from custodian_runtime.core.authority.deference import Deferral, deference
from custodian_runtime.core.authority.evidence import Evidence, evidence_problem, older_evidence
from custodian_runtime.core.authority.facts import rejection_problem
from custodian_runtime.core.authority.grounded import invented_evidence, text_problem, unfounded
from custodian_runtime.core.authority.refusals import refusal_problem
from custodian_runtime.core.contract import DomainSummary
from custodian_runtime.core.limits import Limits
from custodian_runtime.core.operations import Lookup, OperationSpec, normalize
from custodian_runtime.core.operations.schema import SANCTIONED_STATUSES
from custodian_runtime.core.plan.extract import Plan, ProposedItem, fingerprint
from custodian_runtime.core.view import View

RulingOutcome = Literal["execute", "queue", "deny"]
# What a ruling's sentence tells a person: nothing beyond the outcome (`executes`, or `routine`:
# queued as every proposal is), a reason of its own (`stated`), or that it waits in deference to
# a person's change (`deferred`: a person changed the task, or its evidence predates the change),
# or that it is held, neither queued nor sent, because a person decided the task and no newer
# word of theirs supports the change (`held_deference`, core/authority/holds.py).
ReasonCode = Literal["executes", "routine", "stated", "deferred", "held_deference"]
_VERBS: dict[RulingOutcome, str] = {
    "execute": "executes",
    "deny": "is denied",
    "queue": "is queued for a person's approval",
}
EVERY_PROPOSAL = "it is a write that Custodian may not make on its own"


@dataclass(frozen=True)
class Ruling:
    """The outcome for one item and the sentence that explains it to a person.

    Beside the sentence: its `code`, and its `clause` (the sentence without the item's label,
    None when the sentence has no label), so that no reader parses the English.
    """

    item: ProposedItem
    outcome: RulingOutcome
    reason: str
    code: ReasonCode = "stated"
    clause: str | None = None
    # The grant an `execute` ruling of an approvable item runs under (core/standing/rule.py).
    grant: str | None = None
    # What a `deny` ruling of shadow mode would have done (`execute` or `queue`), else None.
    shadow: RulingOutcome | None = None
    # A `deferred` ruling's change on the hub by someone else (core/authority/budgets.py).
    defers_to: datetime | None = None
    # A person's newer word that lifted a deference (core/authority/budgets.py): the write went
    # to the ordinary rules, and what says why it runs cites the event.
    word: str | None = None
    # A `deferred` ruling's hold (core/authority/holds.py): a person decided the task within
    # the window, and said so; it is held, not queued, and no grant carries it.
    held: str | None = None


def authorize(
    plan: Plan,
    observed: DomainSummary,
    limits: Limits | None = None,
    history: ApprovalHistory | None = None,
    *,
    evidence: Evidence | None = None,
    recent: RecentWrites | None = None,
    unavailable: Mapping[str, str] | None = None,
) -> tuple[Ruling, ...]:
    """One Ruling per item of `plan`, in plan order: execute, queue or deny, with a reason.

    `evidence` is the events the run observed for the status writes' citations; without it, the
    summary's recent events are all there is (core/authority/evidence.py). `recent` is Custodian's
    own writes in the domain (from the journal's checkpoint), for the rolling budgets and the
    deference to a person's change; without it neither applies. `unavailable` names the
    operations this run cannot perform, with why (a read-only canon): their items are denied.
    """
    limits = limits or Limits()
    history = history or ApprovalHistory()
    view = View.of(observed)
    seen = evidence if evidence is not None else Evidence.of(observed)
    tally = Tally()
    rulings = []
    closed = unavailable or {}
    for item in plan.items:
        outcome, reason, deferred = _rule(item, view, limits, history, tally, seen, recent, closed)
        tally.record(item, outcome)
        rulings.append(_ruling(item, outcome, reason, deferred=deferred))
    return tuple(rulings)


def _label(item: ProposedItem) -> str:
    return f"Plan item #{item.index} ({item.operation})"


def _ruling(
    item: ProposedItem, outcome: RulingOutcome, reason: str, *, deferred: Deferral | None = None
) -> Ruling:
    """The ruling, with the code and the clause of the sentence `_rule` put together."""
    word = deferred.word if deferred is not None else None
    if word is not None:
        deferred = None  # lifted by a person's newer word: the ordinary rules ruled
    clause = reason.removeprefix(f"{_label(item)} {_VERBS[outcome]}: ")
    if outcome == "deny" and reason.startswith(f"{_label(item)} is held: "):
        clause = reason.removeprefix(f"{_label(item)} is ")  # a standing no: held, not asked
    if clause == reason:
        return Ruling(item, outcome, reason, word=word)
    routine = outcome == "queue" and clause == f"{EVERY_PROPOSAL}."
    code: ReasonCode = "executes" if outcome == "execute" else "routine" if routine else "stated"
    if outcome == "queue" and deferred is not None:
        code = "deferred"
        return Ruling(item, outcome, reason, code=code, clause=clause, defers_to=deferred.since,
                      held=deferred.held)  # fmt: skip
    return Ruling(item, outcome, reason, code=code, clause=clause, word=word)


def _rule(
    item: ProposedItem,
    view: View,
    limits: Limits,
    history: ApprovalHistory,
    tally: Tally,
    evidence: Evidence,
    recent: RecentWrites | None,
    unavailable: Mapping[str, str],
) -> tuple[RulingOutcome, str, Deferral | None]:
    """The outcome, its sentence, and whether it waits in deference to a person's change."""
    label = _label(item)
    spec = operations.find(item.operation)
    problem = _form_problem(item, spec, unavailable)
    if problem is not None or spec is None:
        return "deny", f"{label} is denied: {problem}.", None
    earlier = tally.first_with(item.fingerprint)
    if earlier is not None:
        return "deny", f"{label} is denied: it repeats plan item #{earlier} word for word.", None
    problem = ids_problem(item.operation, item.params, view) or tally.conflict(item)
    if problem is None:
        problem = _already_done(spec, item, view) or _ungrounded(spec, item, view, evidence)
    if problem is not None:
        return "deny", f"{label} is denied: {problem}.", None
    facts = (limits, history, view, evidence)
    closed = closed_by_person(item, view)
    deferred = None if closed else _deferred(item, view, limits, recent, evidence)
    asked = None if closed else asked_anyway(spec, item.params, view, evidence, limits)
    if asked is not None and deferred is not None and deferred.word is None:
        # It waits as it did, its card naming the later word too; no grant issued since lifts it.
        deferred = replace(deferred, since=None, reason=f"{deferred.reason}; {asked}")
    elif asked is not None:  # a reason of its own: no grant carries it (core/authority/asked.py)
        return *_rule_queued(item, label, facts, tally, asked), None
    lifted = deferred if deferred is not None and deferred.word is not None else None
    if spec.default == "sanctioned" and closed is None and (deferred is None or lifted):
        outcome, reason = _rule_sanctioned(item, label, view, limits, tally, recent)
        lacking = unproven(item, evidence) if outcome == "execute" else None
        if lacking is None:
            return outcome, _citing(reason, lifted if outcome == "execute" else None), lifted
        return *_rule_queued(item, label, facts, tally, lacking), None
    if lifted is not None:
        return *_rule_queued(item, label, facts, tally), lifted
    why = closed or (deferred.reason if deferred is not None else None)
    return *_rule_queued(item, label, facts, tally, why), deferred


def _citing(reason: str, lifted: Deferral | None) -> str:
    """An executing write's sentence, citing the person's newer word that let it through."""
    if lifted is None or lifted.word is None or not reason.endswith("."):
        return reason
    return f"{reason[:-1]}; {lifted.word}."


def _already_done(spec: OperationSpec, item: ProposedItem, view: View) -> str | None:
    """Why the write would change nothing, or is pointless, on the domain as observed: a
    create that nearly repeats an open one in its scope is denied here, before anyone is asked."""
    if spec.already_done is not None:
        found = spec.already_done(item.params, view)
        if found is not None:
            return found
    return None if spec.repeats is None else spec.repeats(item.params, view)


def _ungrounded(
    spec: OperationSpec, item: ProposedItem, view: View, evidence: Evidence
) -> str | None:
    """Why what the item would write names what this run never observed (an invented id, a
    person's event repeated as new, an event or task it rests on or evidence it cites that does
    not exist); None when grounded."""
    found = unfounded(item.params, spec.rests, view, evidence)
    found = found or text_problem(item.params, spec.grounded, spec.news, view, evidence)
    return found or invented_evidence(item.params, evidence)


def unproven(item: ProposedItem, evidence: Evidence) -> str | None:
    """Why a status write Custodian would make on its own waits for a person: its evidence."""
    spec = operations.find(item.operation)
    if spec is None or not spec.evidence:
        return None
    return evidence_problem(item.params, evidence)


def _deferred(
    item: ProposedItem,
    view: View,
    limits: Limits,
    recent: RecentWrites | None,
    evidence: Evidence,
) -> Deferral | None:
    """Why a person decides `item`: it would undo a person's change (through Custodian or on
    the hub), or its evidence is not newer than the task's last change by anyone."""
    if ids_problem(item.operation, item.params, view) is not None:
        return None
    found = None if recent is None else deference(item, view, limits, recent, evidence)
    if found is not None:
        return found
    older = _older_evidence(item, view, evidence)
    return None if older is None else Deferral(older)


def _older_evidence(item: ProposedItem, view: View, evidence: Evidence) -> str | None:
    """Why a status write whose evidence holds still waits: the task changed after it."""
    spec = operations.find(item.operation)
    if spec is None or not spec.evidence or evidence_problem(item.params, evidence) is not None:
        return None
    return older_evidence(item.params, view.tasks[item.params["task_id"]], evidence)


def closed_by_person(item: ProposedItem, view: View) -> str | None:
    """Why a status write waits for a person because it moves a task out of `cancelled`.

    Custodian never cancels a task on its own, so a cancelled task was closed by a person, and
    only a person reopens or completes it. None when the item is no such write.
    """
    spec = operations.find(item.operation)
    if spec is None or not spec.status_write:
        return None
    task = item.params["task_id"]
    if view.task_status(task) != "cancelled" or item.params["status"] == "cancelled":
        return None
    return (
        f"task {task} was closed (cancelled) by a person, and moving it out of cancelled is "
        "a person's decision"
    )


def _form_problem(
    item: ProposedItem, spec: OperationSpec | None, unavailable: Mapping[str, str]
) -> str | None:
    if item.error is not None:
        return f"it is malformed ({item.error}); the model must fix it and propose it again"
    if spec is None:
        known = ", ".join(sorted(operations.names()))
        return (
            f"Custodian knows no operation {item.operation}, so no person could approve it "
            f"here (known: {known})"
        )
    if item.operation in unavailable:
        return unavailable[item.operation]
    if item.fingerprint != fingerprint(item.operation, item.params):
        return "its fingerprint does not match its operation and parameters"
    try:
        operation, params = normalize(item.operation, item.params)
    except ValueError as exc:
        return f"its parameters do not fit the operation ({exc})"
    if operation != item.operation:
        allowed = " or ".join(sorted(SANCTIONED_STATUSES))
        return f"{item.operation} may only set {allowed}; any other status needs {operation}"
    if params != item.params:
        return "its parameters are not in normal form (null or unknown fields)"
    return None


def _rule_sanctioned(
    item: ProposedItem,
    label: str,
    view: View,
    limits: Limits,
    tally: Tally,
    recent: RecentWrites | None,
) -> tuple[RulingOutcome, str]:
    cap = limits.cap(item.operation)
    if tally.executed(item.operation) >= cap:
        return "deny", f"{label} is denied: a run may execute at most {cap} {item.operation}."
    spent = None
    if recent is not None:
        spent = budget_problem(item, limits, recent, tally.executed(item.operation))
    if spent is not None:
        return "deny", f"{label} is denied: {spent}."
    spec = operations.spec(item.operation)
    assert spec.executes is not None  # a sanctioned spec has one (OperationSpec checks)
    lookup = Lookup(view.domain, statuses={k: t.status for k, t in view.tasks.items()})
    return "execute", f"{label} executes: {spec.executes(item.params, lookup)}."


def _rule_queued(
    item: ProposedItem,
    label: str,
    facts: tuple[Limits, ApprovalHistory, View, Evidence],
    tally: Tally,
    why: str | None = None,
) -> tuple[RulingOutcome, str]:
    limits, history, view, evidence = facts
    rejection = history.rejection_of(item)
    changed = None
    if rejection is not None and history.pending_as(item) is None:
        problem, changed = rejection_problem(item, view, evidence, rejection)
        if problem is not None:
            return "deny", f"{label} is denied: {problem}."
    if history.pending_as(item) is None:
        held, asked = refusal_problem(item, view, history, evidence, limits)
        if held is not None:
            return "deny", f"{label} is {held}."
        changed = "; ".join(w for w in (changed, asked) if w) or None
    problem = _history_problem(item, limits, history, tally)
    if problem is not None:
        return "deny", f"{label} is denied: {problem}."
    why = "; ".join(w for w in (changed, why) if w) or EVERY_PROPOSAL
    return "queue", f"{label} is queued for a person's approval: {why}."


def _history_problem(
    item: ProposedItem, limits: Limits, history: ApprovalHistory, tally: Tally
) -> str | None:
    """Why the queue will not take `item`: a repeat, a rejected proposal, or a full queue."""
    approval = history.pending_as(item)
    if approval is not None:
        return f"the same proposal already awaits approval as {approval}"
    if tally.queued >= limits.max_queued:
        return f"a run may queue at most {limits.max_queued} proposals for approval"
    if history.pending_count + tally.queued >= limits.max_pending:
        return (
            f"queue full: the domain already has {history.pending_count + tally.queued} pending "
            f"approvals, at most {limits.max_pending}; a person must decide some first"
        )
    return None
