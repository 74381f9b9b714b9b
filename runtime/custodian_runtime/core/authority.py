"""authorize(plan, observed, policy, history): one ruling per proposed item, with a reason.

This is the security boundary. Whatever the model answered, only the three sanctioned writes, on
ids of the observed domain, within the per-run caps, may come out as `execute`. Every item is
checked again here (schema, routing, fingerprint), so a ProposedItem built by hand gets no
further than one that extract_plan built.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from custodian_runtime.core._authority_checks import (
    Tally,
    View,
    canon_path_problem,
    ids_problem,
    queued_state_problem,
)
from custodian_runtime.core.approval_history import ApprovalHistory as ApprovalHistory
from custodian_runtime.core.budgets import RecentWrites, budget_problem, deference
from custodian_runtime.core.contract import DomainSummary
from custodian_runtime.core.evidence import Evidence, evidence_problem
from custodian_runtime.core.plan import Plan, ProposedItem, fingerprint
from custodian_runtime.core.plan_schema import (
    APPROVABLE_OPERATIONS,
    SANCTIONED_OPERATIONS,
    SANCTIONED_STATUSES,
    normalize,
)
from custodian_runtime.core.policy import Policy

Outcome = Literal["execute", "queue", "deny"]
# What a ruling's sentence tells a person: nothing beyond the outcome (`executes`, or `routine`:
# queued as every proposal is), or a reason of its own (`stated`).
ReasonCode = Literal["executes", "routine", "stated"]
_VERBS: dict[Outcome, str] = {
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
    outcome: Outcome
    reason: str
    code: ReasonCode = "stated"
    clause: str | None = None
    # The grant an `execute` ruling of an approvable item runs under (core/standing_rule.py).
    grant: str | None = None


def authorize(
    plan: Plan,
    observed: DomainSummary,
    policy: Policy | None = None,
    history: ApprovalHistory | None = None,
    *,
    evidence: Evidence | None = None,
    recent: RecentWrites | None = None,
) -> tuple[Ruling, ...]:
    """One Ruling per item of `plan`, in plan order: execute, queue or deny, with a reason.

    `evidence` is the events the run observed for the status writes' citations; without it, the
    summary's recent events are all there is (core/evidence.py). `recent` is Custodian's own
    writes in the domain (from the journal's checkpoint), for the rolling budgets and the
    deference to a person's change; without it neither applies.
    """
    policy = policy or Policy()
    history = history or ApprovalHistory()
    view = View.of(observed)
    seen = evidence if evidence is not None else Evidence.of(observed)
    tally = Tally()
    rulings = []
    for item in plan.items:
        outcome, reason = _rule(item, view, policy, history, tally, seen, recent)
        tally.record(item, outcome)
        rulings.append(_ruling(item, outcome, reason))
    return tuple(rulings)


def _label(item: ProposedItem) -> str:
    return f"Plan item #{item.index} ({item.operation})"


def _ruling(item: ProposedItem, outcome: Outcome, reason: str) -> Ruling:
    """The ruling, with the code and the clause of the sentence `_rule` put together."""
    clause = reason.removeprefix(f"{_label(item)} {_VERBS[outcome]}: ")
    if clause == reason:
        return Ruling(item, outcome, reason)
    routine = outcome == "queue" and clause == f"{EVERY_PROPOSAL}."
    code: ReasonCode = "executes" if outcome == "execute" else "routine" if routine else "stated"
    return Ruling(item, outcome, reason, code=code, clause=clause)


def _rule(
    item: ProposedItem,
    view: View,
    policy: Policy,
    history: ApprovalHistory,
    tally: Tally,
    evidence: Evidence,
    recent: RecentWrites | None,
) -> tuple[Outcome, str]:
    label = _label(item)
    problem = _form_problem(item)
    if problem is not None:
        return "deny", f"{label} is denied: {problem}."
    earlier = tally.first_with(item.fingerprint)
    if earlier is not None:
        return "deny", f"{label} is denied: it repeats plan item #{earlier} word for word."
    problem = ids_problem(item.operation, item.params, view) or tally.conflict(item)
    if problem is not None:
        return "deny", f"{label} is denied: {problem}."
    closed = closed_by_person(item, view) or _deferred(item, view, policy, recent)
    if item.operation in SANCTIONED_OPERATIONS and closed is None:
        outcome, reason = _rule_sanctioned(item, label, view, policy, tally, recent)
        lacking = unproven(item, evidence) if outcome == "execute" else None
        if lacking is None:
            return outcome, reason
        return _rule_queued(item, label, view, policy, history, tally, lacking)
    return _rule_queued(item, label, view, policy, history, tally, closed)


def unproven(item: ProposedItem, evidence: Evidence) -> str | None:
    """Why a status write Custodian would make on its own waits for a person: its evidence."""
    if item.operation != "update_task_status":
        return None
    return evidence_problem(item.params, evidence)


def _deferred(
    item: ProposedItem, view: View, policy: Policy, recent: RecentWrites | None
) -> str | None:
    """Why a person decides `item`: it would undo a person's change to Custodian's write."""
    if recent is None or ids_problem(item.operation, item.params, view) is not None:
        return None
    return deference(item, view, policy, recent)


def closed_by_person(item: ProposedItem, view: View) -> str | None:
    """Why a status write waits for a person because it moves a task out of `cancelled`.

    Custodian never cancels a task on its own, so a cancelled task was closed by a person, and
    only a person reopens or completes it. None when the item is no such write.
    """
    if item.operation not in ("update_task_status", "set_task_status"):
        return None
    task = item.params["task_id"]
    if view.task_status(task) != "cancelled" or item.params["status"] == "cancelled":
        return None
    return (
        f"task {task} was closed (cancelled) by a person, and moving it out of cancelled is "
        "a person's decision"
    )


def _form_problem(item: ProposedItem) -> str | None:
    if item.error is not None:
        return f"it is malformed ({item.error}); the model must fix it and propose it again"
    if item.fingerprint != fingerprint(item.operation, item.params):
        return "its fingerprint does not match its operation and parameters"
    try:
        operation, params = normalize(item.operation, item.params)
    except ValueError as exc:
        return f"its parameters do not fit the operation ({exc})"
    if operation != item.operation:
        allowed = " or ".join(sorted(SANCTIONED_STATUSES))
        return f"{item.operation} may only set {allowed}; any other status needs set_task_status"
    if params != item.params:
        return "its parameters are not in normal form (null or unknown fields)"
    return None


def _rule_sanctioned(
    item: ProposedItem,
    label: str,
    view: View,
    policy: Policy,
    tally: Tally,
    recent: RecentWrites | None,
) -> tuple[Outcome, str]:
    params = item.params
    if item.operation == "update_task_status":
        if params["status"] not in SANCTIONED_STATUSES:  # normalize() routes these; belt and braces
            return (
                "deny",
                f"{label} is denied: only done or in_progress may be set without a person.",
            )
        current = view.task_status(params["task_id"])
        if current == params["status"]:
            return "deny", f"{label} is denied: task {params['task_id']} is already {current}."
    if item.operation == "add_progress_event":
        # A rerun after a crash, or a doubled run, proposes the same event again.
        same = view.recorded_event(params)
        if same is not None:
            return "deny", f"{label} is denied: event {same} already records it."
    if item.operation == "flag_for_human" and params["task_id"] in view.flagged_tasks:
        return "deny", (
            f"{label} is denied: task {params['task_id']} already has an open flag "
            "waiting for a person."
        )
    cap = policy.cap(item.operation)
    if tally.executed(item.operation) >= cap:
        return "deny", f"{label} is denied: a run may execute at most {cap} {item.operation}."
    spent = None
    if recent is not None:
        spent = budget_problem(item, policy, recent, tally.executed(item.operation))
    if spent is not None:
        return "deny", f"{label} is denied: {spent}."
    return "execute", f"{label} executes: {_describe_write(item, view)}."


def _article(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"


def _describe_write(item: ProposedItem, view: View) -> str:
    params = item.params
    if item.operation == "add_progress_event":
        on_task = f" about task {params['task_id']}" if "task_id" in params else ""
        return (
            f"{_article(params['event_type'])} {params['event_type']} event is added to workstream "
            f"{params['workstream_id']}{on_task} (append-only)"
        )
    if item.operation == "update_task_status":
        before = view.task_status(params["task_id"])
        return f"task {params['task_id']} moves from {before} to {params['status']} (reversible)"
    return f"task {params['task_id']} is flagged for a person (an escalation)"


def _rule_queued(
    item: ProposedItem,
    label: str,
    view: View,
    policy: Policy,
    history: ApprovalHistory,
    tally: Tally,
    why: str | None = None,
) -> tuple[Outcome, str]:
    problem = queued_state_problem(item.operation, item.params, view)
    if item.operation == "write_canon" and problem is None:
        problem = canon_path_problem(item.params["path"])
    if problem is not None:
        return "deny", f"{label} is denied: {problem}."
    problem = _history_problem(item, policy, history, tally)
    if problem is not None:
        return "deny", f"{label} is denied: {problem}."
    unknown = "it is an operation Custodian does not know, so only a person may decide it"
    known = EVERY_PROPOSAL
    why = why or (unknown if item.operation not in APPROVABLE_OPERATIONS else known)
    return "queue", f"{label} is queued for a person's approval: {why}."


def _history_problem(
    item: ProposedItem, policy: Policy, history: ApprovalHistory, tally: Tally
) -> str | None:
    """Why the queue will not take `item`: a repeat, a rejected proposal, or a full queue."""
    approval = history.pending_as(item)
    if approval is not None:
        return f"the same proposal already awaits approval as {approval}"
    rejected = history.rejected_as(item)
    if rejected is not None:
        return f"a person rejected the same proposal before ({rejected})"
    if tally.queued >= policy.max_queued:
        return f"a run may queue at most {policy.max_queued} proposals for approval"
    if history.pending_count + tally.queued >= policy.max_pending:
        return (
            f"queue full: the domain already has {history.pending_count + tally.queued} pending "
            f"approvals, at most {policy.max_pending}; a person must decide some first"
        )
    return None
