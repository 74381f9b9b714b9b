"""A person's closing stands: the model may not move a cancelled task out of `cancelled` alone.

Such a status write is queued for a person with the reason that a person closed the task; the
hub is unchanged until a person approves it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from custodian_hub import ReferenceHub, load_seed
from custodian_runtime.core.authority.authorize import ApprovalHistory, authorize
from custodian_runtime.core.contract import DomainSummary
from custodian_runtime.core.limits import Limits
from support.authority import plan_of, proposal, task, website
from support.runs import CANON, hub_get, plan_response, run_cli, small_dataset

CLOSED = "closed (cancelled) by a person"


def _with_cancelled() -> DomainSummary:
    base = website()
    web = base.workstreams[0]
    web = web.model_copy(update={"tasks": (*web.tasks, task("t-gone", "ws-web", "cancelled"))})
    return base.model_copy(update={"workstreams": (web, *base.workstreams[1:])})


@pytest.mark.parametrize("status", ["in_progress", "done"])
def test_a_sanctioned_status_write_on_a_cancelled_task_is_queued(status: str) -> None:
    plan = plan_of(tasks_to_update=[{"task_id": "t-gone", "status": status}])
    (ruling,) = authorize(plan, _with_cancelled(), Limits(), ApprovalHistory())
    assert ruling.outcome == "queue"
    assert ruling.reason == (
        "Plan item #0 (update_task_status) is queued for a person's approval: task t-gone was "
        f"{CLOSED}, and moving it out of cancelled is a person's decision."
    )


def test_set_task_status_out_of_cancelled_names_the_closing_too() -> None:
    plan = plan_of(proposals=[proposal("set_task_status", task_id="t-gone", status="todo")])
    (ruling,) = authorize(plan, _with_cancelled(), Limits(), ApprovalHistory())
    assert ruling.outcome == "queue" and CLOSED in ruling.reason


def test_a_rejected_reopening_is_not_queued_again() -> None:
    plan = plan_of(tasks_to_update=[{"task_id": "t-gone", "status": "in_progress"}])
    fp = plan.items[0].fingerprint
    history = ApprovalHistory(rejected={fp: "it stays cancelled"})
    (ruling,) = authorize(plan, _with_cancelled(), Limits(), history)
    assert ruling.outcome == "deny" and "it stays cancelled" in ruling.reason


def test_other_tasks_still_move_on_their_own() -> None:
    update = {"task_id": "t-todo", "status": "in_progress", "evidence": ["ev-t-todo"]}
    plan = plan_of(tasks_to_update=[update])
    (ruling,) = authorize(plan, _with_cancelled(), Limits(), ApprovalHistory())
    assert ruling.outcome == "execute"


@pytest.fixture
def hub_with_cancelled(tmp_path: Path) -> Any:
    """The small hub, with web-t-3 and web-t-5 cancelled by a person."""
    data = small_dataset()
    for row in data["tasks"]:
        if row["id"] in ("web-t-3", "web-t-5"):
            row["status"] = "cancelled"
    db = tmp_path / "hub-cancelled.sqlite3"
    load_seed(db, data)
    with ReferenceHub(db) as hub:
        yield hub


def _tasks(hub: ReferenceHub) -> dict[str, str]:
    summary = hub_get(hub, "/domains/website/summary")
    return {t["id"]: t["status"] for ws in summary["workstreams"] for t in ws["tasks"]}


def test_a_plan_reopening_cancelled_tasks_is_queued_and_the_hub_is_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hub_with_cancelled: ReferenceHub
) -> None:
    hub = hub_with_cancelled
    before = _tasks(hub)
    answer = tmp_path / "answer.md"
    plan = {
        "tasks_to_update": [
            {"task_id": "web-t-3", "status": "in_progress"},
            {"task_id": "web-t-5", "status": "done"},
        ]
    }
    answer.write_text(plan_response(plan), encoding="utf-8")
    argv = ["run", "--domain", "website", "--hub", hub.url, "--llm", f"file:{answer}"]
    argv += ["--memory", str(tmp_path / "memory"), "--canon", str(CANON), "--json"]
    done = run_cli(argv, tmp_path, monkeypatch)
    assert done.code == 0, done.stderr
    summary = done.json()
    assert summary["executed"] == []
    assert [q["operation"] for q in summary["queued"]] == ["update_task_status"] * 2
    assert _tasks(hub) == before
    note = Path(summary["note"]).read_text(encoding="utf-8")
    assert f"**Waits because:** task web-t-3 was {CLOSED}" in note
    assert f"**Waits because:** task web-t-5 was {CLOSED}" in note

    # A person may reopen it: the approval carries the write out.
    approval_id = str(summary["queued"][0]["approval_id"])
    argv = ["approvals", "--memory", str(tmp_path / "memory"), "approve", approval_id]
    approved = run_cli([*argv, "--by", "ana", "--hub", hub.url], tmp_path, monkeypatch)
    assert approved.code == 0, approved.stdout + approved.stderr
    assert _tasks(hub) == {**before, "web-t-3": "in_progress"}
    item = tmp_path / "memory" / "approvals" / f"{approval_id}.json"
    assert json.loads(item.read_text(encoding="utf-8"))["status"] == "executed"
