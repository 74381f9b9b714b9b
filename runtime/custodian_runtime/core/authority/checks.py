"""The checks behind core/authority/authorize.py: the domain as lookups, and the run's tally."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from custodian_runtime.core.operations import find
from custodian_runtime.core.operations.schema import short
from custodian_runtime.core.plan.extract import ProposedItem
from custodian_runtime.core.view import View

# Creates store the ids of what already bears their title (none, when proposed) under this key.
SAME_TITLE = "same_title"
# What an item does to a task it claims, by its spec's conflict key (one of each per task).
_CLAIMED = {"status": "sets the status of", "flag": "flags"}


@dataclass
class Tally:
    """What the run has ruled so far: fingerprints seen, tasks claimed, writes counted."""

    fingerprints: dict[str, int] = field(default_factory=dict)
    # (conflict key, task) -> the first accepted item that claimed it (core/operations/).
    claimed: dict[tuple[str, str], int] = field(default_factory=dict)
    executes: Counter[str] = field(default_factory=Counter)
    queued: int = 0

    def first_with(self, fp: str) -> int | None:
        """Index of the earlier item with this fingerprint, if any."""
        return self.fingerprints.get(fp)

    def executed(self, operation: str) -> int:
        """How many items of `operation` the run has ruled `execute` so far."""
        return self.executes[operation]

    def conflict(self, item: ProposedItem) -> str | None:
        """Why an accepted earlier item rules this one out (a second status or flag on a task)."""
        key = _claim(item)
        if key is None or key not in self.claimed:
            return None
        verb = _CLAIMED.get(key[0], f"claims ({key[0]})")
        return f"plan item #{self.claimed[key]} already {verb} task {key[1]}"

    def record(self, item: ProposedItem, outcome: str) -> None:
        """Count the ruling just made for `item`."""
        self.fingerprints.setdefault(item.fingerprint, item.index)
        if outcome == "deny":
            return
        key = _claim(item)
        if key is not None:
            self.claimed.setdefault(key, item.index)
        if outcome == "execute":
            self.executes[item.operation] += 1
        else:
            self.queued += 1


def _claim(item: ProposedItem) -> tuple[str, str] | None:
    """The (conflict key, task) an item claims in its plan, when its spec names a key."""
    spec = find(item.operation)
    task = item.params.get("task_id")
    if spec is None or spec.conflict is None or not isinstance(task, str):
        return None
    return spec.conflict, task


def ids_problem(operation: str, params: dict[str, Any], view: View) -> str | None:
    """Why the ids in `params` are not ids of the observed domain (None when they all are)."""
    domain = params.get("domain", view.domain)
    if domain != view.domain:
        return f"it names domain {short(domain)}, but this run observes domain {view.domain}"
    for key, table, what in (
        ("workstream_id", view.workstreams, "a workstream"),
        ("task_id", view.tasks, "a task"),
        ("decision_id", view.decisions, "an open decision"),
        ("flag_id", view.flags, "an open flag"),
    ):
        if key not in params:
            continue
        value = params[key]
        if not isinstance(value, str) or value not in table:
            return f"{key} {short(value)} is not {what} of the observed domain {view.domain}"
    task, workstream = params.get("task_id"), params.get("workstream_id")
    if isinstance(task, str) and isinstance(workstream, str):
        actual = view.tasks[task].workstream_id
        if actual != workstream:
            return f"task {task} belongs to workstream {actual}, not {workstream}"
    return None


def same_titles(operation: str, params: dict[str, Any], view: View) -> list[str]:
    """Ids of what a create would duplicate (its spec's pool, by normalized title); [] else."""
    spec = find(operation)
    if spec is None or spec.creates is None or not isinstance(params.get("title"), str):
        return []
    return spec.creates(params, view)
