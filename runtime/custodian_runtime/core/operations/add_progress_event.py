"""`add_progress_event`: record a fact on a workstream (and task); append-only."""

from __future__ import annotations

from typing import Any

import custodian_runtime.core.contract as contract
from custodian_runtime.core.operations._common import article, in_domain, marked, quoted
from custodian_runtime.core.operations._spec import (
    Landing,
    Lookup,
    OperationSpec,
    Params,
)
from custodian_runtime.core.operations.schema import AddProgressEvent
from custodian_runtime.core.view import OWN_SOURCE, View, same_text


def _already(params: Params, view: View) -> str | None:
    # A rerun after a crash, or a doubled run, proposes the same event again.
    same = view.recorded_event(params)
    return None if same is None else f"event {same} already records it"


def _landed(params: Params, landing: Landing) -> str | None:
    mark = f"[custodian run {landing.run_id}]"
    for event in (*landing.events, *landing.view.events):
        if (
            event.summary.endswith(mark)
            and event.workstream_id == params.get("workstream_id")
            and event.task_id == params.get("task_id")
            and same_text(event.summary, str(params.get("summary")))
        ):
            return event.id
    return None


def _call(client: Any, p: Params, run_id: str, key: str) -> Any:
    body = contract.NewEvent(
        workstream_id=p["workstream_id"],
        task_id=p.get("task_id"),
        event_type=p["event_type"],
        summary=marked(p["summary"], run_id),
        source=OWN_SOURCE,
    )
    return client.add_event(body, idempotency_key=key)


def _executes(p: Params, lookup: Lookup) -> str:
    on_task = f" about task {p['task_id']}" if "task_id" in p else ""
    return (
        f"{article(p['event_type'])} {p['event_type']} event is added to workstream "
        f"{p['workstream_id']}{on_task} (append-only)"
    )


def _describe(p: Params, lookup: Lookup) -> str:
    on_task = f" about {lookup.named('task', p['task_id'])}" if "task_id" in p else ""
    return (
        f"Add {article(p['event_type'])} {p['event_type']} event {quoted(p['summary'])} to "
        f"{lookup.named('workstream', p['workstream_id'])}{on_task}{in_domain(lookup)}"
    )


def _done(p: Params, lookup: Lookup) -> str:
    on_task = f" about {lookup.named('task', p['task_id'])}" if "task_id" in p else ""
    return (
        f"added {article(p['event_type'])} {p['event_type']} event {quoted(p['summary'])} to "
        f"{lookup.named('workstream', p['workstream_id'])}{on_task}{in_domain(lookup)}"
    )


SPEC = OperationSpec(
    name="add_progress_event",
    section="progress_events",
    params=AddProgressEvent,
    default="sanctioned",
    rules="add a progress event to a workstream (optionally a task in it). At most\n"
    "{cap} per run. `event_type` is one of note, observation, milestone, blocker,\n"
    "status_change; `rests_on` lists the ids of the observed events or tasks it reports\n"
    "(1-5, required); `summary` is 1-2000 characters of plain fact that follows from them and\n"
    "is new: never a person's event said again.",
    example='{"workstream_id": "<workstream id>", "task_id": "<task id, or null>",\n'
    ' "event_type": "observation",\n'
    ' "rests_on": ["<observed event or task id>"],\n'
    ' "summary": "<the new fact that follows from them>",\n'
    ' "reason": "<why it is worth recording>"}',
    request="POST /events",
    landed=_landed,
    describe=_describe,
    done=_done,
    call=_call,
    cap="max_events",
    budget="budget_events",
    targets=("task_id", "workstream_id"),
    already_done=_already,
    grounded=("summary",),
    news="summary",
    rests="rests_on",
    executes=_executes,
    when="the workstream (and task) are in the observed domain; within {max_events} per run "
    "and {budget_events} per domain in {budget_window_hours} h",
)
