"""`set_task_status`: any status change a person approves (blocked, cancelled, todo, …)."""

from __future__ import annotations

from custodian_runtime.core.operations._common import already_status, status_landed
from custodian_runtime.core.operations._spec import OperationSpec
from custodian_runtime.core.operations._status import describe_status, done_status, status_call
from custodian_runtime.core.operations.schema import TaskStatusChange

SPEC = OperationSpec(
    name="set_task_status",
    section="proposals",
    params=TaskStatusChange,
    default="approvable",
    fields="{task_id, status, evidence?} — any status (todo, in_progress, blocked, done, "
    "cancelled)",
    request="PATCH /tasks/{id}",
    landed=status_landed,
    describe=describe_status,
    done=done_status,
    call=status_call,
    targets=("task_id",),
    already_done=already_status,
    conflict="status",
    status_write=True,
)
