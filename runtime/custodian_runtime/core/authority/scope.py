"""What a grant's scope may name beyond the params: facts of the target the ruling observes.

A proposal's scope facts are read from the domain as observed, never from the model: the
workstream it is about (its task's, or its `workstream_id` param), that workstream's owner on
the hub and its status there, the task's status and how many whole days since its last change
(by the hub's clock), who wrote the task's newest observed event of a person and its kind (who
wrote last on it, and what: Custodian's own events left out),
how many whole days since that owner last set the task's status on the hub (their
`status_change` event on it; with none observed, as far back as the observed events reach, so
it only errs short) or a person through Custodian (their approval of its move, in the queue's
window).
A grant's `on` names some of them (`--on KEY=VALUE`, or `KEY=A,B,C` for a set of values); it
covers a proposal only when every one it names holds: one of the values, and for the days at
least that many. A fact the
ruling cannot observe is no match: a scope only ever narrows. Pure.

The facts also go with each queued item (`ApprovalItem.facts`), with whether it cites a
person's newer event (`cites`) and whether it was asked whatever would carry it (`asked`), so
that `policy report` can find what parted a person's approvals from their rejections
(core/standing/scopes.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from custodian_runtime.core._timestamps import utc
from custodian_runtime.core.approvals.history import DecidedMark
from custodian_runtime.core.authority.evidence import Evidence, by_custodian, cited, newer_word
from custodian_runtime.core.contract import ProgressEvent, Task
from custodian_runtime.core.view import View

# The keys a grant's `--on` takes, each with what it means, as `grants issue` explains them.
SCOPE_KEYS = {
    "workstream": "the workstream it is about (its task's, or its workstream_id)",
    "owner": "that workstream's owner on the hub",
    "workstream_status": "that workstream's status on the hub (active, paused, ...)",
    "task_status": "its task's status when it is ruled on",
    "idle_days": "at least this many whole days since its task's last change",
    "owner_set_days": (
        "at least this many whole days since its task's status was last set by the workstream's "
        "owner on the hub (their status_change event on it, as far back as the observed events "
        "reach) or by a person approving Custodian's move"
    ),
    "last_by": (
        "who wrote its task's newest event of a person (its source; Custodian's own left out), "
        "among the observed events"
    ),
    "last_kind": "the kind of that event (blocker, note, milestone, status_change, ...)",
}
AT_LEAST = frozenset({"idle_days", "owner_set_days"})
MAX_IDLE = 365
# A grant's `on` may name a set of values of a fact, parted by commas: any one of them holds.
ONE_OF = ","
# What a queued item's facts say of its evidence (not a scope key: `--evidence newer` is).
CITES = "cites"
# The days since a person's word set its task's status, where one was observed (their
# status_change event, their approval through Custodian): what a standing no reads, not a
# scope key (a grant reads `owner_set_days`, which errs short where no word was observed).
WORD = "set_word_days"
# Whether the proposal was asked whatever would carry it (core/authority/asked.py: a person's
# later word than its evidence, a repeat of another workstream's): no grant ever covers such a
# one, so its rejection tells nothing of what a grant's scope would carry (core/standing/scopes.py).
ASKED = "asked"
NOT_SCOPES = frozenset({CITES, WORD, ASKED})


def scope_facts(
    params: Mapping[str, Any],
    view: View,
    now: datetime,
    evidence: Evidence | None = None,
    said: Sequence[DecidedMark] = (),
) -> dict[str, str]:
    """The scope facts of a proposal with `params`, as observed; with `evidence`, also what
    it cites: `newer` (a person's event newer than its task's last change that speaks for
    the move), `other` (some event, not that), `none`."""
    task = view.tasks.get(str(params.get("task_id")))
    workstream = task.workstream_id if task is not None else params.get("workstream_id")
    found: dict[str, str] = {}
    if isinstance(workstream, str) and workstream:
        found["workstream"] = workstream
        ws = view.workstreams.get(workstream)
        if ws is not None and ws.owner:
            found["owner"] = str(ws.owner)
        if ws is not None:
            found["workstream_status"] = str(ws.status)
    if task is not None:
        found["task_status"] = task.status
        if task.updated_at is not None:
            idle = utc(now) - utc(task.updated_at)
            found["idle_days"] = str(max(0, idle.days))
        if evidence is not None:
            found[CITES] = cites_of(params, task, evidence)
            last = last_word(task, evidence)
            if last is not None:
                found |= {"last_by": last.source.strip(), "last_kind": last.event_type}
            seen = _owner_word(task, found.get("owner"), evidence, now)
            word = [d for d in (seen, approved_days(task.id, said, now)) if d is not None]
            if word:
                found[WORD] = str(min(word))
            quiet = owner_set_days(task, found.get("owner"), evidence, now)
            bound = [d for d in (quiet, *word) if d is not None]
            if bound:
                found["owner_set_days"] = str(min(bound))
    return found


def last_word(task: Task, evidence: Evidence) -> ProgressEvent | None:
    """The newest observed event of a person on `task` (not Custodian's, not dated ahead of
    the hub): who wrote last on it, and what (None: none observed)."""
    found = [
        e
        for e in evidence.events.values()
        if e.task_id == task.id and by_custodian(e, evidence.own_ids) is None
        and not evidence.ahead(e)
    ]  # fmt: skip
    return max(found, key=lambda e: (utc(e.created_at), e.id), default=None)


def owner_set_days(task: Task, owner: str | None, evidence: Evidence, now: datetime) -> int | None:
    """Whole days since the workstream's `owner` last set `task`'s status, as their newest
    `status_change` event on it shows; with none observed, how far back the observed events
    reach (the whole history of a task whose events were read whole: MAX_IDLE), a bound that
    only errs short. None: no owner, or no events observed to tell."""
    if not owner:
        return None
    seen = _owner_word(task, owner, evidence, now)
    if seen is not None:
        return seen
    if task.id in evidence.read_tasks:
        return MAX_IDLE
    if evidence.reach is None:
        return None
    return min(MAX_IDLE, max(0, (utc(now) - evidence.reach).days))


def _owner_word(task: Task, owner: str | None, evidence: Evidence, now: datetime) -> int | None:
    """Whole days since the owner's newest observed `status_change` event on `task` (None:
    none observed, or no owner)."""
    if not owner:
        return None
    mine = [
        e.created_at
        for e in evidence.events.values()
        if e.task_id == task.id
        and e.event_type == "status_change"
        and e.source.strip().casefold() == owner.strip().casefold()
    ]
    return max(0, (utc(now) - utc(max(mine, key=utc))).days) if mine else None


def approved_days(task: str, said: Sequence[DecidedMark], now: datetime) -> int | None:
    """Whole days since a person last approved a status write of Custodian's on `task`, in the
    queue's window: a person's word on its status as much as one typed on the hub (None:
    none there)."""
    found = [
        datetime.fromisoformat(s.at)
        for s in said
        if s.task == task and s.status and s.approved and s.at
    ]
    return None if not found else max(0, (utc(now) - utc(max(found, key=utc))).days)


def cites_of(params: Mapping[str, Any], task: Task, evidence: Evidence) -> str:
    """What a write on `task` cites: `newer` (a person's event newer than the task's last
    change that speaks for the move), `other` (some event, not that), `none`."""
    if newer_word(params, task, evidence) is not None:
        return "newer"
    return "other" if cited(params) else "none"


def scope_problem(on: Mapping[str, str]) -> str | None:
    """Why `--on` cannot scope a grant: an unknown key, or a bad number (None: it can)."""
    for key, value in sorted(on.items()):
        if key not in SCOPE_KEYS:
            known = "; ".join(f"{k} ({why})" for k, why in SCOPE_KEYS.items())
            return f"--on {key}=...: no such fact; scope by one of: {known}"
        if not value:
            return f"--on {key}=: give a value"
        if key in AT_LEAST and not (value.isdigit() and 1 <= int(value) <= MAX_IDLE):
            return f"--on {key}={value}: give whole days from 1 to {MAX_IDLE}"
        if key not in AT_LEAST and "" in value.split(ONE_OF):
            return f"--on {key}={value}: give values parted by commas, none empty (a,b,c)"
    return None


def one_of(want: str, have: str) -> bool:
    """Whether an observed value is one of the values a grant's `on` names (`a,b,c`)."""
    return have in values_of(want)


def values_of(want: str) -> frozenset[str]:
    """The values a grant's `on` names for one fact (`a,b,c`); none for an empty one."""
    return frozenset(want.split(ONE_OF)) if want else frozenset()


def scope_miss(on: Mapping[str, str], facts: Mapping[str, str] | None) -> str | None:
    """Why facts do not fit a grant's `on` (None: every fact it names holds)."""
    for key, want in sorted(on.items()):
        have = None if facts is None else facts.get(key)
        if have is None:
            return f"covers only {key}={want}, and the item's {key} is not observed"
        if key in AT_LEAST:
            if not (have.isdigit() and want.isdigit() and int(have) >= int(want)):
                return f"covers only {key}>={want}, the item has {key}={have}"
        elif not one_of(want, have):
            return f"covers only {key}={want}, the item has {key}={have}"
    return None


def scope_label(on: Mapping[str, str]) -> str:
    """A grant's `on` in words: `owner=mia idle_days>=7` ("" for none)."""
    return " ".join(f"{k}>={v}" if k in AT_LEAST else f"{k}={v}" for k, v in sorted(on.items()))
