"""Deference to a person's change: a write that would undo what a person set or approved.

A task whose last change (its `updated_at`, or its newest event) falls within `defer_days` and is
not what Custodian's own writes left was changed by someone else, on the hub: a person's change,
as one approved through Custodian is. A write that would ask a person again about their own
decision is held (core/authority/holds.py); one that would undo a change on the hub is asked.
Counted from Custodian's own writes as the checkpoint keeps them (core/authority/budgets.py
`RecentWrites`). Pure: `now` comes in with the writes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from custodian_runtime.core.authority.evidence import (
    Evidence,
    TaskChange,
    ahead_cited,
    cited,
    evidence_before,
    last_change,
    newer_than,
    newer_word,
    newest_cited,
    stamp,
    word_clause,
)
from custodian_runtime.core.authority.holds import hand_set, held_clause
from custodian_runtime.core.authority.own_writes import OwnWrite
from custodian_runtime.core.authority.own_writes import moved_since as _moved_since
from custodian_runtime.core.contract import ProgressEvent, Task
from custodian_runtime.core.journal.records import parse_at
from custodian_runtime.core.limits import Limits
from custodian_runtime.core.operations import OWN_SOURCE, find, status_writes
from custodian_runtime.core.operations.schema import short

if TYPE_CHECKING:  # only for annotations: authority imports this module
    from custodian_runtime.core.plan.extract import ProposedItem
    from custodian_runtime.core.view import View
from custodian_runtime.core.authority.budgets import RecentWrites, claim_of


@dataclass(frozen=True)
class Deferral:
    """Why a write waits in deference to a person, and the hub change it defers to, if any."""

    reason: str
    # Someone else's change on the hub (not through Custodian). No grant carries a write
    # deferred to it, whenever issued: a grant names no task (core/standing/rule.py).
    since: datetime | None = None
    # A person's newer word that lifts it (core/authority/evidence.py `word_clause`): the write
    # goes to the ordinary rules, and its note cites the event.
    word: str | None = None
    # A person's decision on the task within `defer_days` (core/authority/holds.py): what the
    # write, held rather than asked again, says. None: a person is asked (older evidence).
    held: str | None = None


def deference(
    item: ProposedItem,
    view: View,
    limits: Limits,
    recent: RecentWrites,
    evidence: Evidence | None = None,
) -> Deferral | None:
    """Why a person must decide `item`: it would undo a person's change, on the hub or approved.

    `evidence` is the run's events (the view's recent events without it): a status write that
    cites a person's newer word (core/authority/evidence.py `newer_word`: an event of theirs on
    the task, newer than the change and supporting the move) is left to the ordinary rules.
    """
    task_id = item.params.get("task_id")
    if not isinstance(task_id, str) or task_id not in view.tasks:
        return None
    mine = [w for w in recent.since(timedelta(days=limits.defer_days)) if w.task_id == task_id]
    claim = claim_of(item.operation)
    if claim == "status":
        seen = evidence if evidence is not None else Evidence({e.id: e for e in view.events})
        task = view.tasks[task_id]
        statuses = status_writes()
        last = next((w for w in reversed(mine) if w.operation in statuses), None)
        last = last or _set_back_lately(task, recent, limits)
        if last is None:
            return _said_ahead(_changed_on_hub(item, task, limits, recent, seen), item, seen)
        found = _status_deference(task_id, task, last, view, limits, recent.now)
        word = newer_word(item.params, task, seen, parse_at(last.at))
        if found is not None and word is not None:
            return replace(found, word=word_clause(word))  # the ordinary rules decide
        return _said_ahead(found, item, seen)
    if claim == "flag" and task_id not in view.flagged_tasks:
        ahead = {e.id for e in view.events if evidence is not None and evidence.ahead(e)}
        return _flag_deference(task_id, mine, view, limits, recent, ahead)
    return None


def _said_ahead(found: Deferral | None, item: ProposedItem, seen: Evidence) -> Deferral | None:
    """`found`, saying why a cited event dated ahead of the hub's own time lifted nothing."""
    ahead = ahead_cited(item.params, seen)
    if found is None or found.word is not None or ahead is None:
        return found
    held = None if found.held is None else f"{found.held} ({ahead})"
    return replace(found, reason=f"{found.reason} ({ahead})", held=held)


def _cites_evidence(operation: str) -> bool:
    spec = find(operation)
    return spec is not None and spec.evidence


def _changed_on_hub(
    item: ProposedItem, task: Task, limits: Limits, recent: RecentWrites, evidence: Evidence
) -> Deferral | None:
    """Why a status write waits: someone else changed the task on the hub within the window."""
    change = hub_change(item, task, limits, recent, evidence)
    if change is None:
        return None
    hand = hand_set(task.id, evidence.events.values(), evidence.own_ids, change.at)
    # Their own status_change event records their decision: it is no newer word against it.
    word = newer_word(item.params, task, evidence, None if hand is None else hand.created_at)
    sanctioned = _cites_evidence(item.operation)
    if word is not None:  # a person's newer word supports it: the ordinary rules decide
        return None if sanctioned else Deferral("", change.at, word=word_clause(word))
    if hand is not None:  # the person said they set it so: asking them is asking again
        return _hand_set_hold(task, hand, change, limits)
    if sanctioned:
        return None  # its evidence is compared with the change (core/authority/evidence.py)
    # Not held: no person's word says they made the change (the hub's `updated_at` names no
    # one: seed data, another system), so a person is asked once (the card says why).
    event = newest_cited(item.params, evidence)
    if event is not None and not newer_than(event, change):
        several = len(cited(item.params)) > 1
        return Deferral(evidence_before(event, change, several=several), change.at)
    cites = "" if event is None else f" (event {event.id} does not speak for {_to(item)})"
    return Deferral(
        f"task {task.id} was changed on the hub by someone other than Custodian at "
        f"{stamp(change.at)} ({change.what}): for {limits.defer_days} days after a person's "
        "change, this task's status is a person's decision, unless a person's event newer "
        f"than the change that supports the move is cited{cites}",
        change.at,
    )


def _hand_set_hold(task: Task, hand: ProgressEvent, change: TaskChange, limits: Limits) -> Deferral:
    who = short(hand.source)
    did = f"set task {task.id} to {task.status} on the hub (event {hand.id})"
    return Deferral(
        f"{who} set task {task.id} to {task.status} on the hub at {stamp(change.at)} and said "
        f"so (event {hand.id}, a status_change at {stamp(hand.created_at)}): for "
        f"{limits.defer_days} days after a person's change, this task's status is a person's "
        "decision",
        change.at,
        held=held_clause(who, did, change.at),
    )


def _to(item: ProposedItem) -> str:
    status = item.params.get("status")
    need = {"done": "a milestone or status_change", "blocked": "a blocker"}.get(str(status))
    return f"a move to {status}" + (f": {need} does" if need else "")


def hub_change(
    item: ProposedItem, task: Task, limits: Limits, recent: RecentWrites, evidence: Evidence
) -> TaskChange | None:
    """Someone else's change to the task, on the hub, that a status write in `item` defers to.

    None when the last change is older than `defer_days`, is the task's creation, or is what
    Custodian's own writes left (the checkpoint's, in `recent`). A person's newer word cited
    against it is weighed by the caller (`_changed_on_hub`).
    """
    return person_changed(task, limits, recent, evidence, leave_out=cited(item.params))


def person_changed(
    task: Task,
    limits: Limits,
    recent: RecentWrites,
    evidence: Evidence,
    leave_out: Sequence[str] = (),
) -> TaskChange | None:
    """The task's last change, when someone other than Custodian made it within `defer_days`
    (not its creation, not what Custodian's own writes left); None otherwise."""
    change = last_change(task, evidence, leave_out=leave_out)
    if change is None or change.at <= recent.now - timedelta(days=limits.defer_days):
        return None
    if task.updated_at is not None and task.updated_at == task.created_at:
        return None  # created so: a task's first status is no one's change to defer to
    statuses = status_writes()
    mine = [w for w in recent.writes if w.task_id == task.id and w.operation in statuses]
    if mine and not _moved_since(mine[-1], task):
        return None  # the hub shows what Custodian's own (or an approved) write left
    return change


def decided_by_person(view: View, limits: Limits, recent: RecentWrites) -> frozenset[str]:
    """The tasks whose status a person decided within `defer_days`, through Custodian or over
    it: an approved status write, or one of Custodian's that someone changed since on the hub.
    What a plan leaves alone (core/tooling/offline_planner.py), so no flag is spent on them. A
    status someone set on a task Custodian never wrote is not here: a blocked task nobody was
    asked about is what a flag is for."""
    statuses = status_writes()
    window = recent.since(timedelta(days=limits.defer_days))
    last: dict[str, OwnWrite] = {
        w.task_id: w for w in window if w.operation in statuses and w.task_id is not None
    }
    return frozenset(
        task_id
        for task_id, write in last.items()
        if task_id in view.tasks and (write.by_person or _moved_since(write, view.tasks[task_id]))
    )


def _status_deference(
    task_id: str, task: Task, last: OwnWrite, view: View, limits: Limits, now: datetime
) -> Deferral | None:
    """Why a status write waits on a person's word on the task: they approved Custodian's
    last status write of it, or changed the task since; held either way (core/standing/rule.py)."""
    if last.by_person and parse_at(last.at) > now - timedelta(days=limits.defer_days):
        return _person_approved(task_id, last, limits)
    if not _moved_since(last, task):
        return None
    at = task.updated_at
    changed = "at a time unknown" if at is None else at.isoformat().replace("+00:00", "Z")
    by = _people_on(task_id, view, parse_at(last.at))
    who = f" by {', '.join(by)}" if by else " by someone else"
    did = (
        f"set task {task_id} to {task.status} after Custodian set it to {last.status} "
        f"(run {last.run_id})"
    )
    return Deferral(
        f"Custodian set task {task_id} to {last.status} at {last.at} (run {last.run_id}), and "
        f"it was changed since{who}: the hub shows {task.status}, updated at {changed}. For "
        f"{limits.defer_days} days after a person's change, this task's status is a person's "
        "decision",
        held=held_clause(", ".join(by) or "someone other than Custodian", did, at),
    )


def _set_back_lately(task: Task, recent: RecentWrites, limits: Limits) -> OwnWrite | None:
    """Custodian's last status write of the task before the window, when someone changed the
    task since within it: their setting it back is a decision as recent as any, however old
    the write it undid (the checkpoint keeps Custodian's writes for a month)."""
    window = recent.now - timedelta(days=limits.defer_days)
    if task.updated_at is None or task.updated_at <= window:
        return None
    statuses = status_writes()
    mine = [w for w in recent.writes if w.task_id == task.id and w.operation in statuses]
    return mine[-1] if mine and _moved_since(mine[-1], task) else None


def _person_approved(task_id: str, last: OwnWrite, limits: Limits) -> Deferral:
    who = last.by.removeprefix("person:")
    did = f"approved setting task {task_id} to {last.status}"
    return Deferral(
        f"{who} approved setting task {task_id} to {last.status} at {last.at} (run "
        f"{last.run_id}): for {limits.defer_days} days after a person's decision, this task's "
        "status is a person's decision",
        held=held_clause(who, did, parse_at(last.at)),
    )


def _flag_deference(
    task_id: str, mine: list[OwnWrite], view: View, limits: Limits, recent: RecentWrites,
    ahead: set[str],
) -> Deferral | None:  # fmt: skip
    flags = (w for w in reversed(mine) if claim_of(w.operation) == "flag" and not w.by_person)
    last = next(flags, None)
    if last is None:
        return None
    # An event dated ahead of the hub's own time is no one's word since (evidence.py).
    skip: set[str | None] = {w.hub_id for w in recent.writes} | ahead
    if _people_on(task_id, view, parse_at(last.at), exclude=skip):
        return None
    did = f"resolved flag {last.hub_id}, which Custodian raised on task {task_id}"
    return Deferral(
        f"Custodian flagged task {task_id} at {last.at} (run {last.run_id}, flag {last.hub_id}) "
        "and a person resolved that flag; no event on the task from anyone else has arrived "
        f"since, so raising it again within {limits.defer_days} days is a person's decision",
        held=held_clause("a person", did, parse_at(last.at), "no event on the task since"),
    )


def _people_on(
    task_id: str, view: View, after: datetime, exclude: set[str | None] | None = None
) -> list[str]:
    """Who, other than Custodian, wrote an event on the task after `after` (newest first)."""
    skip = exclude or set()
    found: list[str] = []
    for event in view.events:
        if (
            event.task_id == task_id
            and event.source != OWN_SOURCE
            and event.id not in skip
            and event.created_at > after
            and short(event.source) not in found
        ):
            found.append(short(event.source))
    return found
