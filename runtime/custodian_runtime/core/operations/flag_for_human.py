"""`flag_for_human`: ask a person to look at a task; an escalation."""

from __future__ import annotations

from typing import Any

import custodian_runtime.core.contract as contract
from custodian_runtime.core.operations._common import in_domain, marked, quoted
from custodian_runtime.core.operations._spec import (
    Landing,
    Lookup,
    OperationSpec,
    Params,
)
from custodian_runtime.core.operations.schema import FlagForHuman
from custodian_runtime.core.view import OWN_SOURCE, View


def _already(p: Params, view: View) -> str | None:
    if p["task_id"] not in view.flagged_tasks:
        return None
    return f"task {p['task_id']} already has an open flag waiting for a person"


def _landed(p: Params, landing: Landing) -> str | None:
    flags = sorted(f.id for f in landing.view.flags.values() if f.task_id == p.get("task_id"))
    return flags[0] if flags else None


def _call(client: Any, p: Params, run_id: str, key: str) -> Any:
    body = contract.NewFlag(
        task_id=p.get("task_id"),
        workstream_id=p.get("workstream_id"),
        note=marked(p["note"], run_id),
        raised_by=OWN_SOURCE,
    )
    return client.add_flag(body, idempotency_key=key)


def _executes(p: Params, lookup: Lookup) -> str:
    return f"task {p['task_id']} is flagged for a person (an escalation)"


def _describe(p: Params, lookup: Lookup) -> str:
    task = lookup.named("task", p["task_id"])
    return f"Flag {task} for a person{in_domain(lookup)}: {quoted(p['note'])}"


def _done(p: Params, lookup: Lookup) -> str:
    task = lookup.named("task", p["task_id"])
    return f"flagged {task} for a person{in_domain(lookup)}: {quoted(p['note'])}"


SPEC = OperationSpec(
    name="flag_for_human",
    section="tasks_to_flag",
    params=FlagForHuman,
    default="sanctioned",
    rules="flag a task for a human. At most {cap} per run, one flag per task at\n"
    "most, and none on a task that already has an open flag. The `note` (1-2000 characters) says\n"
    "what you saw, with ids, and what a person should decide. An in-progress task is stale after\n"
    "{stale_after_days} days without an update or event.",
    example='{"task_id": "<task id>",\n'
    ' "note": "<what you saw, with ids, and what a person should decide>",\n'
    ' "reason": "<why a person is needed>"}',
    request="POST /flags",
    landed=_landed,
    describe=_describe,
    done=_done,
    call=_call,
    cap="max_flags",
    budget="budget_flags",
    targets=("task_id",),
    already_done=_already,
    grounded=("note",),
    conflict="flag",
    executes=_executes,
    when="the task is in the domain and has no open flag; within {max_flags} per run and "
    "{budget_flags} per domain in {budget_window_hours} h",
)
