"""How a person's standing decisions enter the one ruling (core/ruling/path.py) of every path.

`apply_standing` takes the rulings `authorize()` made and narrows them by the modes (`ask`
queues, `shadow` records what would have happened, `off` denies) or, for an item queued only
because it needs a person, executes it under a live grant that covers it. A grant never skips
a check: only an item every rule would queue as routine is looked at, and the rolling budgets
are checked again for it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import custodian_runtime.core.operations as operations
from custodian_runtime.core.approvals.history import ApprovalHistory, Rejection
from custodian_runtime.core.authority.asked import asked_anyway
from custodian_runtime.core.authority.authorize import EVERY_PROPOSAL, Ruling
from custodian_runtime.core.authority.budgets import RecentWrites, budget_problem
from custodian_runtime.core.authority.evidence import Evidence, newer_word
from custodian_runtime.core.authority.facts import rejection_problem
from custodian_runtime.core.authority.holds import HELD
from custodian_runtime.core.authority.scope import ASKED, scope_facts
from custodian_runtime.core.limits import Limits
from custodian_runtime.core.operations.schema import SANCTIONED_STATUSES
from custodian_runtime.core.plan.extract import ProposedItem
from custodian_runtime.core.standing.grants import covering
from custodian_runtime.core.standing.modes import SILENT, ModeSetting
from custodian_runtime.core.standing.record import Standing
from custodian_runtime.core.standing.said_no import holding
from custodian_runtime.core.view import View

# Words of an operation that would change a person's standing decisions: only a person does.
STANDING_WORDS = frozenset({"policy", "policies", "mode", "modes", "grant", "grants", "revoke"})
WOULD = {"execute": "would have executed", "queue": "would have queued", "deny": "denied"}


@dataclass(frozen=True)
class Ground:
    """What the standing rulings need besides the rulings: the hub, the time, caps, own writes."""

    standing: Standing
    hub_id: str | None
    now: datetime
    limits: Limits
    recent: RecentWrites | None = None
    # The queue's history: a write `ask` queues is not queued twice, nor again once rejected.
    history: ApprovalHistory | None = None
    # The events the run observed and the domain as observed: whether a write cites a person's
    # newer word, which a grant may require (core/standing/grants.py `evidence`), and whether
    # one came since a person rejected the same proposal (core/authority/facts.py).
    evidence: Evidence | None = None
    view: View | None = None


def apply_standing(rulings: Sequence[Ruling], ground: Ground) -> tuple[Ruling, ...]:
    """The rulings as the domain's modes and grants narrow them (or a grant carries them out)."""
    uses = dict(ground.standing.uses)
    executed: dict[str, int] = {}
    queued = sum(1 for r in rulings if r.outcome == "queue")
    done: list[Ruling] = []
    for ruling in rulings:
        said = _said_no(ruling, ground)
        if said is not None:
            queued -= ruling.outcome == "queue"
            done.append(said)
            continue
        narrowed = _narrowed_class(ruling, ground, queued + 1)
        if narrowed is not None:
            queued += narrowed.outcome == "queue"
            done.append(narrowed)
            continue
        mode = ground.standing.modes.of(ruling.item.operation)
        if changes_standing(ruling.item.operation):
            done.append(_refused(ruling))
        elif ruling.outcome == "deny" or mode == "auto":
            done.append(in_deference(ruling))
        elif mode in SILENT:
            done.append(_narrowed(ruling, mode, ground))
        elif ruling.outcome == "execute":
            asked = _asked(ruling, ground, queued + 1)
            queued += asked.outcome == "queue"
            done.append(asked)
        else:
            granted = _granted(ruling, ground, uses, executed)
            done.append(in_deference(granted))
            if granted.grant is not None:
                uses[granted.grant] = uses.get(granted.grant, 0) + 1
                op = ruling.item.operation
                executed[op] = executed.get(op, 0) + 1
    return tuple(done)


def _said_no(ruling: Ruling, ground: Ground) -> Ruling | None:
    """A proposal that would be asked, held by a standing no a person said
    (core/standing/said_no.py): denied with their words; None when none holds it."""
    item = ruling.item
    if ruling.outcome != "queue" or not ground.standing.said_nos:
        return None
    status = item.params.get("status")
    facts = observed_facts(item, ground)
    said = holding(ground.standing.said_nos, item.operation,
                   status if isinstance(status, str) else "", facts, ground.now)  # fmt: skip
    if said is None:
        return None
    clause = said.clause()
    reason = f"{_label(ruling)} is {clause}."
    return replace(ruling, outcome="deny", reason=reason, code="stated", clause=f"{clause}.")


def in_deference(ruling: Ruling) -> Ruling:
    """A write still waiting on a person's own decision of its task, held: neither queued nor
    sent, since asking them again on the same facts is asking twice (core/authority/holds.py).
    It writes nothing; a person's newer event on the task lifts it, and no grant does."""
    if ruling.outcome != "queue" or ruling.code != "deferred" or ruling.held is None:
        return ruling
    reason = f"{_label(ruling)} is {ruling.held}."
    return replace(ruling, outcome="deny", reason=reason, code=HELD, clause=f"{ruling.held}.")


def _narrowed_class(ruling: Ruling, ground: Ground, queued: int) -> Ruling | None:
    """A write Custodian would make on its own in a class a person's reversal narrowed: queued
    for a person instead (core/standing/narrowed.py); None when no narrowed class applies."""
    item = ruling.item
    if ruling.outcome != "execute" or changes_standing(item.operation):
        return None
    narrowed = ground.standing.narrowed.class_of(item.operation, item.params, ground.now)
    if narrowed is None:
        return None
    if ground.standing.modes.of(item.operation) in SILENT:
        return None  # the mode rules it (denied) as before
    problem = _queue_problem(ruling, ground, queued)
    if problem is not None:
        return replace(ruling, outcome="deny", reason=f"{_label(ruling)} is denied: {problem}.",
                       code="stated", clause=f"{problem}.")  # fmt: skip
    clause = narrowed.clause()
    reason = f"{_label(ruling)} is queued for a person's approval: {clause}."
    return replace(ruling, outcome="queue", reason=reason, code="stated", clause=f"{clause}.")


def paused_by(operation: str, standing: Standing) -> ModeSetting | None:
    """The setting that keeps every write of `operation` from going out, a person's approval
    included (`off` or `shadow`); None when its mode lets a write through."""
    setting = standing.modes.settings.get(operation)
    return setting if setting is not None and setting.mode in SILENT else None


def in_flight(kept: Standing, journaled: Standing) -> Standing:
    """The standing a run with the domain's lock rules with: every decision kept while it was busy
    (modes, revokes), but a grant only once journaled, since its uses follow its issue there."""
    known = {g.id for g in journaled.grants}
    grants = tuple(g for g in kept.grants if g.id in known)
    return Standing(
        kept.modes, grants, kept.uses, narrowed=journaled.narrowed, said_nos=kept.said_nos
    )


def changes_standing(operation: str) -> bool:
    """Whether an operation's name says it would change a mode or a grant."""
    return bool(STANDING_WORDS & set(re.split(r"[^a-z]+", operation.lower())))


def _refused(ruling: Ruling) -> Ruling:
    clause = (
        "modes and grants are a person's decisions, made with `custodian policy` and "
        "`custodian grants`; no plan item may change them"
    )
    reason = f"{_label(ruling)} is denied: {clause}."
    return replace(ruling, outcome="deny", reason=reason, code="stated", clause=f"{clause}.")


def _label(ruling: Ruling) -> str:
    return f"Plan item #{ruling.item.index} ({ruling.item.operation})"


def _by(ruling: Ruling, ground: Ground) -> str:
    setting = ground.standing.modes.settings.get(ruling.item.operation)
    return "" if setting is None else f" ({setting.by}: {setting.reason})"


def _narrowed(ruling: Ruling, mode: str, ground: Ground) -> Ruling:
    op = ruling.item.operation
    if mode == "off":
        clause = f"a person set {op} to off{_by(ruling, ground)}"
    else:
        clause = (
            f"shadow mode: it {WOULD[ruling.outcome]}, and nothing was written or queued "
            f"(a person set {op} to shadow{_by(ruling, ground)})"
        )
    reason = f"{_label(ruling)} is denied: {clause}."
    shadow = ruling.outcome if mode == "shadow" else None
    return replace(ruling, outcome="deny", reason=reason, code="stated", clause=f"{clause}.",
                   shadow=shadow)  # fmt: skip


def _asked(ruling: Ruling, ground: Ground, queued: int) -> Ruling:
    clause = _queue_problem(ruling, ground, queued)
    if clause is not None:
        return replace(ruling, outcome="deny", reason=f"{_label(ruling)} is denied: {clause}.",
                       code="stated", clause=f"{clause}.")  # fmt: skip
    clause = f"a person set {ruling.item.operation} to ask{_by(ruling, ground)}"
    changed = _changed_facts(ruling, ground)
    clause = clause if changed is None else f"{changed}; {clause}"
    reason = f"{_label(ruling)} is queued for a person's approval: {clause}."
    return replace(ruling, outcome="queue", reason=reason, code="stated", clause=f"{clause}.")


def _changed_facts(ruling: Ruling, ground: Ground) -> str | None:
    """What changed since a person rejected the same proposal, for its card (None: no such)."""
    rejected = None if ground.history is None else ground.history.rejection_of(ruling.item)
    if rejected is None or ground.view is None or ground.evidence is None:
        return None
    return rejection_problem(ruling.item, ground.view, ground.evidence, rejected)[1]


def _queue_problem(ruling: Ruling, ground: Ground, queued: int) -> str | None:
    """Why the queue will not take a write `ask` queues (the authority's rule for proposals)."""
    if queued > ground.limits.max_queued:
        return f"a run may queue at most {ground.limits.max_queued} proposals for approval"
    history = ground.history
    if history is None:
        return None
    pending, rejected = history.pending_as(ruling.item), history.rejection_of(ruling.item)
    if pending is not None:
        return f"the same proposal already awaits approval as {pending}"
    if rejected is not None:
        problem = _rejected_problem(ruling, ground, rejected)
        if problem is not None:
            return problem
    if history.pending_count + queued > ground.limits.max_pending:
        return (
            f"queue full: the domain already has {history.pending_count + queued - 1} pending "
            f"approvals, at most {ground.limits.max_pending}; a person must decide some first"
        )
    return None


def _rejected_problem(ruling: Ruling, ground: Ground, rejected: Rejection) -> str | None:
    """Why a rejected proposal is not asked again: the facts it was rejected on still hold."""
    if ground.view is None or ground.evidence is None:
        return f"a person rejected the same proposal before ({rejected.why})"
    problem, _ = rejection_problem(ruling.item, ground.view, ground.evidence, rejected)
    return problem


def _granted(
    ruling: Ruling, ground: Ground, uses: dict[str, int], executed: dict[str, int]
) -> Ruling:
    """An item queued only because it needs a person, executed if a live grant covers it."""
    if ruling.code != "routine":
        # Queued for a reason of its own (evidence, or deference to a person's change on the
        # hub): a person decides. A grant names a class of writes, never the task, so it is no
        # word of a person on it, whenever it was issued; only a newer word on the task is.
        return ruling
    item = ruling.item
    cover = covering(
        item.operation, item.params, ground.standing.grants, uses, ground.now, ground.hub_id,
        ruling.word is not None or cites_newer(item, ground), ground.standing.narrowed.suspended,
        observed_facts(item, ground),
    )  # fmt: skip
    if cover.grant is None:
        suspended = [w for w in cover.why_not if " is suspended: " in w]
        if suspended:
            return _queued_anyway(ruling, f"{EVERY_PROPOSAL}; {'; '.join(suspended)}")
        return _void_said(ruling, cover.void)
    unproven = _needs_evidence(item.operation, item.params)
    if unproven is not None:
        return _queued_anyway(ruling, f"{cover.grant.id} covers it, but {unproven}")
    if ground.recent is not None:
        spent = budget_problem(item, ground.limits, ground.recent, executed.get(item.operation, 0))
        if spent is not None:
            return _queued_anyway(ruling, f"{cover.grant.id} covers it, but {spent}")
    g = cover.grant
    # The clause is the outcome as the note and --json say it; the sentence says it once.
    clause = f"executed (grant {g.id}), issued by {g.by}: {g.reason}"
    word = "" if ruling.word is None else f"; {ruling.word}"
    clause += word
    reason = f"{_label(ruling)} executes under grant {g.id}, issued by {g.by}: {g.reason}{word}."
    return replace(ruling, outcome="execute", reason=reason, code="stated", clause=f"{clause}.",
                   grant=g.id)  # fmt: skip


def cites_newer(item: ProposedItem, ground: Ground) -> bool:
    """Whether the item cites a person's newer word on its task (core/authority/evidence.py)."""
    if ground.view is None or ground.evidence is None:
        return False
    task = ground.view.tasks.get(str(item.params.get("task_id")))
    if task is None:
        return False
    return newer_word(item.params, task, ground.evidence) is not None


def observed_facts(item: ProposedItem, ground: Ground) -> dict[str, str] | None:
    """The item's target as observed, which a grant's `on` may name (None: nothing observed);
    idle days are counted on the hub's clock where it told it; and whether it is asked whatever
    would carry it (`ASKED`)."""
    if ground.view is None:
        return None
    hub_now = None if ground.evidence is None else ground.evidence.hub_now
    said = () if ground.history is None else ground.history.said
    found = scope_facts(item.params, ground.view, hub_now or ground.now, ground.evidence, said)
    spec = operations.find(item.operation)
    evidence = ground.evidence
    if (
        spec is not None
        and evidence is not None
        and asked_anyway(spec, item.params, ground.view, evidence, ground.limits)
    ):
        found[ASKED] = "anyway"  # no grant carries it (core/authority/asked.py)
    return found


def _needs_evidence(operation: str, params: Mapping[str, Any]) -> str | None:
    """Why a grant does not carry a status write: done or in_progress needs cited evidence."""
    spec = operations.find(operation)
    to = params.get("status")
    if spec is None or not spec.status_write or to not in SANCTIONED_STATUSES:
        return None
    return (
        f"a move to {to} runs without a person only on cited evidence (tasks_to_update with "
        "its evidence), and a grant is no evidence"
    )


def _void_said(ruling: Ruling, void: tuple[str, ...]) -> Ruling:
    """The ruling, saying which void grant would have covered it (core/standing/grants.py)."""
    if not void:
        return ruling
    return _queued_anyway(ruling, f"{(ruling.clause or '').rstrip('.')}; {'; '.join(void)}")


def _queued_anyway(ruling: Ruling, why: str) -> Ruling:
    reason = f"{_label(ruling)} is queued for a person's approval: {why}."
    return replace(ruling, reason=reason, code="stated", clause=f"{why}.")
