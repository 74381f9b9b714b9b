"""Two made-up operations, registered by the test alone, go through every door of the house.

`nudge_task` is sanctioned: its own plan section, rules and example in the system prompt, a cap
read through its spec, and a write on the real reference hub. `set_task_due` is approvable and
has its own hub endpoint (`PATCH /tasks/{task_id}/due`), served, dispatched and documented from
the hub's one table of endpoints. Nothing else is edited.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from custodian_hub import Endpoint, ReferenceHub, register_endpoint
from custodian_hub._reads import get_task
from custodian_runtime.core import contract, operations
from custodian_runtime.core.approvals.items import ApprovalItem
from custodian_runtime.core.contract import Id, ShortText
from custodian_runtime.core.operations import OWN_SOURCE, Landing, Lookup, OperationSpec
from custodian_runtime.core.view import View, with_run_mark
from custodian_runtime.review._sentence import Facts, card_sentence, done_sentence
from support.runs import hub_get, run_cli, run_plan
from support.spine import journal


class Nudge(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    workstream_id: Id
    task_id: Id
    text: ShortText


def _nudge_call(client: Any, p: Any, run_id: str, key: str) -> Any:
    body = contract.NewEvent(
        workstream_id=p["workstream_id"],
        task_id=p["task_id"],
        event_type="note",
        summary=with_run_mark(f"Nudge: {p['text']}", run_id),
        source=OWN_SOURCE,
    )
    return client.add_event(body, idempotency_key=key)


def _nudge_landed(p: Any, landing: Landing) -> str | None:
    for event in (*landing.events, *landing.view.events):
        if event.task_id == p["task_id"] and f"Nudge: {p['text']}" in event.summary:
            return event.id
    return None


NUDGE = OperationSpec(
    name="nudge_task",
    section="tasks_to_nudge",
    params=Nudge,
    default="sanctioned",
    request="POST /events",
    landed=_nudge_landed,
    describe=lambda p, lookup: f"Nudge {lookup.named('task', p['task_id'])}: “{p['text']}”",
    done=lambda p, lookup: f"nudged {lookup.named('task', p['task_id'])}: “{p['text']}”",
    rules="nudge a quiet task's owner with a short note. At most {cap} per run.",
    example='{"workstream_id": "W-1", "task_id": "T-12", "text": "Still on track?",\n'
    ' "reason": "quiet for a week"}',
    call=_nudge_call,
    cap="max_events",
    budget="budget_events",
    targets=("task_id", "workstream_id"),
    executes=lambda p, lookup: f"task {p['task_id']} gets a note nudging its owner",
)


class SetDue(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    task_id: Id
    due: date


class DueDate(contract.Request):
    due: date


def _write_due(conn: sqlite3.Connection, now: str, body: DueDate, task_id: str) -> Any:
    """The hub's side: set a task's due date; its version moves as any change of it does."""
    get_task(conn, task_id)  # 404 for a task the hub does not hold
    conn.execute(
        "UPDATE tasks SET due = ?, updated_at = ?, version = version + 1 WHERE id = ?",
        (body.due.isoformat(), now, task_id),
    )
    return 200, get_task(conn, task_id)


DUE_ENDPOINT = Endpoint(
    "set_task_due",
    "PATCH",
    "/tasks/{task_id}/due",
    "Set a task's due date",
    contract.Task,
    request=DueDate,
    write=_write_due,
    versioned=True,
)


def _due_call(client: Any, p: Any, run_id: str, key: str) -> Any:
    # A new endpoint has no client method of its own yet: the client's one write path sends it.
    path = f"/tasks/{p['task_id']}/due"
    return client._write("PATCH", path, DueDate(due=p["due"]), contract.Task, key)


def _due_is(p: Any, view: View) -> str | None:
    task = view.tasks.get(str(p.get("task_id")))
    due = None if task is None or task.due is None else task.due.isoformat()
    return task.id if task is not None and due == p.get("due") else None


SET_DUE = OperationSpec(
    name="set_task_due",
    section="proposals",
    params=SetDue,
    default="approvable",
    fields="{task_id, due} (due: YYYY-MM-DD)",
    request="PATCH /tasks/{id}/due",
    landed=lambda p, landing: _due_is(p, landing.view),
    describe=lambda p, lookup: (
        f"Set the due date of {lookup.named('task', p['task_id'])} to {p['due']}"
    ),
    done=lambda p, lookup: (
        f"set the due date of {lookup.named('task', p['task_id'])} to {p['due']}"
    ),
    call=_due_call,
    targets=("task_id",),
    already_done=lambda p, view: "the task is due then already" if _due_is(p, view) else None,
)


@pytest.fixture
def made_up() -> Iterator[None]:
    with (
        operations.register(NUDGE),
        operations.register(SET_DUE),
        register_endpoint(DUE_ENDPOINT),
    ):
        yield


NUDGES = [
    {"workstream_id": "web-ws-1", "task_id": "web-t-1", "text": "Pricing page still open?"},
    {"workstream_id": "web-ws-2", "task_id": "web-t-5", "text": "Blog posts moving?"},
]


def test_a_made_up_sanctioned_operation_is_prompted_capped_written_journaled_and_noted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub, made_up: None
) -> None:
    plan = {"tasks_to_nudge": [{**n, "reason": "quiet"} for n in NUDGES]}
    dry = run_plan(
        tmp_path,
        monkeypatch,
        small_hub.url,
        plan,
        "--json",
        "--dry-run",
        "--show-prompt",
        CUSTODIAN_MAX_EVENTS="1",
    )
    assert dry.code == 0, dry.stderr
    # The system prompt's own section: its rules with the cap its spec names, and its example.
    rules = "4. `tasks_to_nudge`: nudge a quiet task's owner with a short note. At most 1 per run."
    assert rules in dry.stderr
    assert '  "tasks_to_nudge": [\n    {"workstream_id": "W-1"' in dry.stderr

    result = run_plan(
        tmp_path, monkeypatch, small_hub.url, plan, "--json", CUSTODIAN_MAX_EVENTS="1"
    )
    assert result.code == 0, result.stdout + result.stderr
    outcomes = [(i["operation"], i["target"], i["outcome"]) for i in result.json()["items"]]
    assert outcomes == [
        ("nudge_task", "web-t-1", "executed"),
        ("nudge_task", "web-t-5", "denied"),  # the cap its spec names: CUSTODIAN_MAX_EVENTS=1
    ]
    (made,) = [
        e
        for e in hub_get(small_hub, "/events?task_id=web-t-1")["events"]
        if "Nudge" in e["summary"]
    ]
    assert made["source"] == OWN_SOURCE and made["summary"].startswith("Nudge: Pricing page")
    assert hub_get(small_hub, "/events?task_id=web-t-5")["events"] == []

    records = journal(tmp_path / "memory")
    rulings = [(r.data["operation"], r.data["outcome"]) for r in records if r.kind == "ruling"]
    assert rulings == [("nudge_task", "execute"), ("nudge_task", "deny")]
    assert "a run may execute at most 1 nudge_task" in str([r.data for r in records])
    (receipt,) = [r for r in records if r.kind == "receipt"]
    assert receipt.data["hub_id"] == made["id"]
    (note,) = (tmp_path / "memory" / "working").glob("*-website.md")
    text = note.read_text("utf-8")
    assert "nudge_task" in text and "Pricing page still open?" in text
    lookup = Lookup("website", titles={"web-t-1": "Finish the pricing page"})
    assert operations.done("nudge_task", NUDGES[0], lookup) == (
        "nudged task web-t-1 ‘Finish the pricing page’: “Pricing page still open?”"
    )


def test_a_made_up_operation_with_its_own_endpoint_is_queued_approved_and_executed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub, made_up: None
) -> None:
    # The hub documents the new endpoint from its one table.
    paths = hub_get(small_hub, "/openapi.json")["paths"]
    assert paths["/tasks/{task_id}/due"]["patch"]["operationId"] == "set_task_due"
    assert "DueDate" in json.dumps(paths["/tasks/{task_id}/due"])

    params = {"task_id": "web-t-3", "due": "2027-01-15"}
    proposal = {"operation": "set_task_due", "params": params, "rationale": "launch date"}
    result = run_plan(
        tmp_path,
        monkeypatch,
        small_hub.url,
        {"proposals": [proposal]},
        "--json",
        CUSTODIAN_MAX_EVENTS="1",
    )
    assert result.code == 0, result.stdout + result.stderr
    (queued,) = result.json()["queued"]
    assert (queued["operation"], queued["target"]) == ("set_task_due", "web-t-3")
    memory = tmp_path / "memory"
    (note,) = (memory / "working").glob("*-website.md")
    assert "set_task_due" in note.read_text("utf-8")

    approve = ["approvals", "--memory", str(memory), "approve", queued["approval_id"], "--by"]
    done = run_cli([*approve, "ana", "--hub", small_hub.url], tmp_path, monkeypatch)
    assert done.code == 0, done.stdout + done.stderr
    task = hub_get(small_hub, "/tasks/web-t-3")
    assert (task["due"], task["version"]) == ("2027-01-15", 2)
    item = json.loads((memory / "approvals" / f"{queued['approval_id']}.json").read_text("utf-8"))
    assert (item["status"], item["result"]["hub_id"]) == ("executed", "web-t-3")
    records = journal(memory)
    (authorized,) = [r for r in records if r.kind == "authorized"]
    assert (authorized.data["operation"], authorized.data["by"]) == ("set_task_due", "person:ana")
    assert [r.kind for r in records if r.kind in ("dispatched", "receipt")] == [
        "dispatched",
        "receipt",
    ]
    # What a person reads of it on the review page, before and after: the spec's sentences.
    decided = ApprovalItem.model_validate(item)
    facts = Facts(titles={"web-t-3": "Write launch announcement"})
    assert card_sentence(decided, facts) == (
        "Set the due date of task web-t-3 ‘Write launch announcement’ to 2027-01-15"
    )
    assert done_sentence(decided, facts) == (
        "set the due date of task web-t-3 ‘Write launch announcement’ to 2027-01-15"
    )
