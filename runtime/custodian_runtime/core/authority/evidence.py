"""Evidence before a status changes: the events a status write cites, checked against the run.

A `tasks_to_update` item runs on its own only when it cites 1 to 5 event ids and every one of
them is an event this run observed (the summary's recent events, or the task's events the shell
fetched), on the same task, and not written by Custodian: not one of its own receipts, not under
the `source` it writes with, and not carrying its run mark. A move to `done` also needs at least
one cited event of type `milestone` or `status_change`: a note, observation or blocker alone never
proves finished work. Anything less is not a denial: the item waits for a person, with a reason
that says what was missing. An id the run never observed on a task whose events it read whole is
the exception: it was invented, and the write is denied (core/authority/grounded.py).

Nor does it run on evidence that is not newer than the task's last change by anyone (the hub's
`updated_at`; from a hub that gives none, the task's newest event that Custodian did not write):
an event from before a person's change cannot undo that change. The item waits for a person, and
its reason names both dates.

Time comes from the hub. An event dated ahead of the hub's own clock (the observed summary's
`generated_at`) by more than `SKEW` (core/_timestamps.py: clocks disagree by a little) was written
while a clock ran ahead: it is no evidence, it is no person's newer word, and it can never make a
write newer than a person's change. The reason a person reads names its time and the hub's.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from custodian_runtime.core._timestamps import SKEW, in_future, utc
from custodian_runtime.core.authority.own_writes import OwnWrite
from custodian_runtime.core.contract import DomainSummary, ProgressEvent, Task
from custodian_runtime.core.journal.kinds import Receipt, of_kind
from custodian_runtime.core.journal.records import Record
from custodian_runtime.core.operations import OWN_SOURCE
from custodian_runtime.core.operations.schema import short
from custodian_runtime.core.view import without_run_mark

MAX_EVIDENCE = 5
DONE_PROOF = ("milestone", "status_change")  # the event types that can show work finished


@dataclass(frozen=True)
class Evidence:
    """The events this run observed, by id, the hub ids of Custodian's own writes, and the
    hub's own time when it observed them (None: unknown, no event is ahead of it).

    `read_tasks` are the tasks whose events the run read whole: an id cited on one of them and
    absent from `events` does not exist there (core/authority/grounded.py).
    """

    events: Mapping[str, ProgressEvent] = field(default_factory=dict)
    own_ids: frozenset[str] = frozenset()
    hub_now: datetime | None = None
    read_tasks: frozenset[str] = frozenset()
    # How far back the summary's events reach (its oldest): no event newer than this on any
    # task is missing from them (None: not known).
    reach: datetime | None = None

    def ahead(self, event: ProgressEvent) -> bool:
        """Whether `event` is dated ahead of the hub's own time by more than `SKEW`."""
        return self.hub_now is not None and in_future(event.created_at, self.hub_now)

    @classmethod
    def of(
        cls,
        observed: DomainSummary,
        fetched: Iterable[ProgressEvent] = (),
        own_ids: Iterable[str] = (),
        read_tasks: Iterable[str] = (),
    ) -> Evidence:
        """The summary's recent events and any fetched ones; `own_ids` from the checkpoint;
        `read_tasks` the tasks whose events were fetched whole."""
        events = {e.id: e for e in (*observed.recent_events, *fetched)}
        reach = min((utc(e.created_at) for e in observed.recent_events), default=None)
        return cls(events=events, own_ids=frozenset(own_ids), hub_now=observed.generated_at,
                   read_tasks=frozenset(read_tasks), reach=reach)  # fmt: skip


def cited(params: Mapping[str, Any]) -> tuple[str, ...]:
    """The event ids a status write cites (empty when it cites none)."""
    value = params.get("evidence")
    if not isinstance(value, (list, tuple)):
        return ()
    return tuple(v for v in value if isinstance(v, str))


def missing_events(params: Mapping[str, Any], summary: DomainSummary) -> tuple[str, ...]:
    """Cited ids the summary's recent events do not hold: the shell fetches the task's events."""
    held = {e.id for e in summary.recent_events}
    return tuple(i for i in cited(params) if i not in held)


def by_custodian(event: ProgressEvent, own_ids: frozenset[str]) -> str | None:
    """Why `event` counts as Custodian's own writing, or None when a person or tool wrote it."""
    if event.id in own_ids:
        return "it is one of Custodian's own writes"
    if event.source.strip().lower() == OWN_SOURCE:
        return f"its source is {OWN_SOURCE!r}, the source Custodian writes with"
    if without_run_mark(event.summary) != event.summary:
        return "it carries Custodian's run mark"
    return None


def evidence_problem(params: Mapping[str, Any], evidence: Evidence) -> str | None:
    """What the cited evidence lacks for the status write in `params`; None when it holds."""
    task = params["task_id"]
    ids = cited(params)
    if not ids:
        return (
            f"it cites no evidence: a status change runs on its own only when it cites 1 to "
            f"{MAX_EVIDENCE} events on task {task} that Custodian did not write"
        )
    problems = [_one(event_id, task, evidence) for event_id in ids]
    found = [p for p in problems if p is not None]
    if found:
        return "its evidence does not hold: " + "; ".join(found)
    if params.get("status") == "done":
        return _no_done_proof(ids, evidence)
    return None


def _no_done_proof(ids: Sequence[str], evidence: Evidence) -> str | None:
    """Why the cited events, all valid, still do not show finished work; None when one does."""
    kinds = [(i, evidence.events[i].event_type) for i in ids]
    if any(kind in DONE_PROOF for _, kind in kinds):
        return None
    listed = ", ".join(f"{i} is {_a(kind)}" for i, kind in kinds)
    return f"done needs a milestone or status_change event among its evidence ({listed})"


def _a(kind: str) -> str:
    return f"an {kind}" if kind[0] in "aeiou" else f"a {kind}"


def _one(event_id: str, task: str, evidence: Evidence) -> str | None:
    event = evidence.events.get(event_id)
    if event is None:
        return f"event {event_id} is not in this run's observation"
    if event.task_id != task:
        where = f"task {event.task_id}" if event.task_id else "no task"
        return f"event {event_id} is on {where}, not on task {task}"
    own = by_custodian(event, evidence.own_ids)
    if own is not None:
        return f"event {event_id} was written by Custodian ({own})"
    return ahead_clause(event, evidence)


def ahead_clause(event: ProgressEvent, evidence: Evidence) -> str | None:
    """What a person reads of an event dated ahead of the hub's own time (None: it is not)."""
    if not evidence.ahead(event) or evidence.hub_now is None:
        return None
    minutes = int(SKEW.total_seconds() // 60)
    return (
        f"event {event.id} is dated {stamp(event.created_at)}, ahead of the hub's own time "
        f"({stamp(evidence.hub_now)}) by more than {minutes} minutes: a time from the future "
        "is no evidence"
    )


def ahead_cited(params: Mapping[str, Any], evidence: Evidence) -> str | None:
    """The clauses for the cited events dated ahead of the hub's own time (None: none is)."""
    found = [
        ahead_clause(event, evidence)
        for event in (evidence.events.get(i) for i in cited(params))
        if event is not None
    ]
    said = [clause for clause in found if clause is not None]
    return "; ".join(said) if said else None


@dataclass(frozen=True)
class TaskChange:
    """A task's last change by anyone: when, and what a person reads of it."""

    at: datetime
    what: str  # "status set to blocked", "created as todo", "event evt-9, a blocker from ana"


def last_change(
    task: Task, evidence: Evidence, leave_out: Collection[str] = ()
) -> TaskChange | None:
    """The task's last change: the hub's `updated_at`, else its newest event not by Custodian.

    `leave_out` are event ids not to count (the evidence itself); None when nothing tells.
    """
    if task.updated_at is not None:
        created = task.updated_at == task.created_at
        what = f"created as {task.status}" if created else f"status set to {task.status}"
        return TaskChange(utc(task.updated_at), what)
    events = [
        e
        for e in evidence.events.values()
        if e.task_id == task.id
        and e.id not in leave_out
        and by_custodian(e, evidence.own_ids) is None
    ]
    if not events:
        return None
    newest = max(events, key=lambda e: (utc(e.created_at), e.id))
    what = f"event {newest.id}, {_a(newest.event_type)} from {short(newest.source)}"
    return TaskChange(utc(newest.created_at), what)


def newest_cited(params: Mapping[str, Any], evidence: Evidence) -> ProgressEvent | None:
    """The newest cited event on the write's task that Custodian did not write; None if none."""
    found = [
        event
        for event in (evidence.events.get(i) for i in cited(params))
        if event is not None
        and event.task_id == params.get("task_id")
        and by_custodian(event, evidence.own_ids) is None
        and not evidence.ahead(event)
    ]
    return max(found, key=lambda e: (utc(e.created_at), e.id), default=None)


def supports(event: ProgressEvent, status: object) -> bool:
    """Whether a person's event speaks for the move: `done` a milestone or status change,
    `blocked` a blocker; any other status any event of theirs."""
    if status == "done":
        return event.event_type in DONE_PROOF
    if status == "blocked":
        return event.event_type == "blocker"
    return True


def newer_word(
    params: Mapping[str, Any], task: Task, evidence: Evidence, since: datetime | None = None
) -> ProgressEvent | None:
    """A person's newer word for a status write: the newest event it cites on the task, not
    Custodian's own, that supports the move and is newer than the task's last change (and than
    `since`, a person's decision through Custodian); None when it cites no such event."""
    ids = cited(params)
    change = last_change(task, evidence, leave_out=ids)
    found = [
        event
        for event in (evidence.events.get(i) for i in ids)
        if event is not None
        and event.task_id == task.id
        and by_custodian(event, evidence.own_ids) is None
        and supports(event, params.get("status"))
        and not evidence.ahead(event)
        and (change is None or newer_than(event, change))
        and (since is None or utc(event.created_at) > utc(since))
    ]
    return max(found, key=lambda e: (utc(e.created_at), e.id), default=None)


def word_clause(event: ProgressEvent) -> str:
    """How a note cites the person's newer word a write went through on."""
    return (
        f"a person's newer word supports it: event {event.id}, {_a(event.event_type)} from "
        f"{short(event.source)} at {stamp(event.created_at)}"
    )


def newer_than(event: ProgressEvent | None, change: TaskChange) -> bool:
    """Whether `event` was written after `change` (a tie is not newer)."""
    return event is not None and utc(event.created_at) > change.at


def older_evidence(params: Mapping[str, Any], task: Task, evidence: Evidence) -> str | None:
    """Why the cited evidence cannot move the task: it is not newer than the task's last change."""
    event = newest_cited(params, evidence)
    change = last_change(task, evidence, leave_out=cited(params))
    if event is None or change is None or newer_than(event, change):
        return None
    return evidence_before(event, change, several=len(cited(params)) > 1)


def evidence_before(event: ProgressEvent, change: TaskChange, *, several: bool = False) -> str:
    """The clause a person reads when the evidence predates the task's last change."""
    which = "the newest evidence it cites" if several else "the evidence it cites"
    how = "as old as" if utc(event.created_at) == change.at else "older than"
    return (
        f"{which} ({event.id}, {stamp(event.created_at)}) is {how} the task's last change "
        f"({stamp(change.at)}, {change.what}); a person decides"
    )


def stamp(moment: datetime) -> str:
    """A time as a person reads it on a card: `2026-11-27 08:00 UTC`."""
    return utc(moment).strftime("%Y-%m-%d %H:%M UTC")


def shown(params: Mapping[str, Any]) -> str:
    """The evidence as a note shows it next to the status change: `evidence E-1, E-2`."""
    ids: Sequence[str] = cited(params)
    return f"evidence {', '.join(ids)}" if ids else "no evidence cited"


def own_write_ids(records: Iterable[Record], kept: Iterable[OwnWrite] = ()) -> frozenset[str]:
    """Hub ids of Custodian's own writes: receipts in `records`, and those the checkpoint kept."""
    from_records = {
        receipt.hub_id for _, receipt in of_kind(records, Receipt) if receipt.hub_id is not None
    }
    return frozenset(from_records | {w.hub_id for w in kept if w.hub_id is not None})
