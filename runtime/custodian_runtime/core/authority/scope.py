"""What a grant's scope may name beyond the params: facts of the target the ruling observes.

A proposal's scope facts are read from the domain as observed, never from the model: the
workstream it is about (its task's, or its `workstream_id` param), that workstream's owner on
the hub, the task's status and how many whole days since its last change (by the hub's clock).
A grant's `on` names some of them (`--on KEY=VALUE`); it covers a proposal only when every
one it names holds: the same value, and for `idle_days` at least that many days. A fact the
ruling cannot observe is no match: a scope only ever narrows. Pure.

The facts also go with each queued item (`ApprovalItem.facts`), with whether it cites a
person's newer event (`cites`), so that `policy report` can find what parted a person's
approvals from their rejections (core/standing/scopes.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from custodian_runtime.core._timestamps import utc
from custodian_runtime.core.authority.evidence import Evidence, cited, newer_word
from custodian_runtime.core.contract import Task
from custodian_runtime.core.view import View

# The keys a grant's `--on` takes, each with what it means, as `grants issue` explains them.
SCOPE_KEYS = {
    "workstream": "the workstream it is about (its task's, or its workstream_id)",
    "owner": "that workstream's owner on the hub",
    "task_status": "its task's status when it is ruled on",
    "idle_days": "at least this many whole days since its task's last change",
}
AT_LEAST = frozenset({"idle_days"})
MAX_IDLE = 365
# What a queued item's facts say of its evidence (not a scope key: `--evidence newer` is).
CITES = "cites"


def scope_facts(
    params: Mapping[str, Any], view: View, now: datetime, evidence: Evidence | None = None
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
    if task is not None:
        found["task_status"] = task.status
        if task.updated_at is not None:
            idle = utc(now) - utc(task.updated_at)
            found["idle_days"] = str(max(0, idle.days))
        if evidence is not None:
            found[CITES] = cites_of(params, task, evidence)
    return found


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
    return None


def scope_miss(on: Mapping[str, str], facts: Mapping[str, str] | None) -> str | None:
    """Why facts do not fit a grant's `on` (None: every fact it names holds)."""
    for key, want in sorted(on.items()):
        have = None if facts is None else facts.get(key)
        if have is None:
            return f"covers only {key}={want}, and the item's {key} is not observed"
        if key in AT_LEAST:
            if not (have.isdigit() and want.isdigit() and int(have) >= int(want)):
                return f"covers only {key}>={want}, the item has {key}={have}"
        elif have != want:
            return f"covers only {key}={want}, the item has {key}={have}"
    return None


def scope_label(on: Mapping[str, str]) -> str:
    """A grant's `on` in words: `owner=mia idle_days>=7` ("" for none)."""
    return " ".join(f"{k}>={v}" if k in AT_LEAST else f"{k}={v}" for k, v in sorted(on.items()))
