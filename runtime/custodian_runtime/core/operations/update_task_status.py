"""`update_task_status`: set a task to done or in_progress, on cited evidence; reversible."""

from __future__ import annotations

import custodian_runtime.core.operations.set_task_status as set_task_status
from custodian_runtime.core.operations._common import (
    SANCTIONED_STATUSES,
    already_status,
    status_landed,
)
from custodian_runtime.core.operations._spec import Lookup, OperationSpec, Params
from custodian_runtime.core.operations._status import describe_status, done_status, status_call
from custodian_runtime.core.operations.schema import TaskStatusChange


def _route(p: Params) -> str | None:
    """Any other status is a proposal for a person."""
    status = p.get("status")
    sanctioned = isinstance(status, str) and status in SANCTIONED_STATUSES
    return None if sanctioned else set_task_status.SPEC.name


def _executes(p: Params, lookup: Lookup) -> str:
    before = lookup.statuses.get(str(p["task_id"]))
    return f"task {p['task_id']} moves from {before} to {p['status']} (reversible)"


SPEC = OperationSpec(
    name="update_task_status",
    section="tasks_to_update",
    params=TaskStatusChange,
    default="sanctioned",
    rules="set a task's status to `done` or `in_progress`, and to no other status.\n"
    "At most {cap} per run. `done` needs a milestone or status_change event;\n"
    "`in_progress` needs events that show it started. List in `evidence` 1 to 5 ids of events on\n"
    "the task not by Custodian and newer than its last update, or it waits for a person.",
    example='{"task_id": "<task id>", "status": "done", "evidence": ["<event id>"],\n'
    ' "reason": "<what the cited event says>"}',
    request="PATCH /tasks/{id}",
    landed=status_landed,
    describe=describe_status,
    done=done_status,
    call=status_call,
    cap="max_status_updates",
    budget="budget_status_updates",
    targets=("task_id",),
    already_done=already_status,
    conflict="status",
    status_write=True,
    evidence=True,
    route=_route,
    executes=_executes,
    when="the status is `done` or `in_progress`, differs from the current one, the task is not "
    "`cancelled`, and the item cites evidence (below); within {max_status_updates} per run and "
    "{budget_status_updates} per domain in {budget_window_hours} h; at most "
    "{budget_status_per_task} status change of the same task in {budget_window_hours} h",
)
