"""A person's decision is never lost: deciding settles the item's open write first.

Finding 1: an approval interrupted after its write was authorized, then rejected by a person,
must not be re-sent by the next run's reconcile. Finding 10: an approval interrupted after the
hub created the task, then rejected, is found landed: the item is executed, the reject says so,
and the journal replays. Finding 9: a killed run's `done` is not re-sent over a status a person
approved since.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from custodian_runtime.journal.person.queue import ApprovalStore
from support.runs import hub_get
from support.spine import (
    THREE_WRITES,
    WriteHold,
    custodian_cli,
    finish,
    held_hub,
    journal,
    kill_when_held,
    run_argv,
    start_run,
    write_plan,
)

QUIET = {"observations": ["Nothing needs doing."]}
PROPOSALS: dict[str, Any] = {
    "observations": ["The checkout needs a task; web-t-4 waits on the vendor."],
    "proposals": [
        {
            "operation": "create_task",
            "params": {"workstream_id": "web-ws-1", "title": "Profile checkout", "status": "todo"},
            "rationale": "no task covers the p95 regression",
        },
        {
            "operation": "set_task_status",
            "params": {"task_id": "web-t-4", "status": "blocked"},
            "rationale": "the vendor has not answered",
        },
    ],
}


def _queue(tmp_path: Path, hub_url: str, memory: Path) -> dict[str, str]:
    """Run once with the proposals; the approval id of each queued operation."""
    llm = write_plan(tmp_path / "proposals.md", PROPOSALS)
    code, out, err = finish(start_run(tmp_path, run_argv(hub_url, llm, memory)))
    assert code == 0, err
    return {o["operation"]: o["approval_id"] for o in json.loads(out)["items"]}


def _approve_killed(tmp_path: Path, hold: WriteHold, approval_id: str, hub_url: str) -> None:
    """`approvals approve`, killed while the hub holds its write."""
    argv = [sys.executable, "-m", "custodian_runtime", "approvals", "approve", approval_id,
            "--by", "ana", "--hub", hub_url, "--memory", str(tmp_path / "memory")]  # fmt: skip
    kill_when_held(tmp_path, argv, hold, "the approval never reached its write")


def _reject(tmp_path: Path, approval_id: str, hub_url: str) -> Any:
    return custodian_cli(
        tmp_path, "approvals", "reject", approval_id, "--by", "bo", "--reason", "not now",
        "--hub", hub_url, "--memory", str(tmp_path / "memory"),
    )  # fmt: skip


def _titled(hub: Any, title: str) -> list[dict[str, Any]]:
    summary = hub_get(hub, "/domains/website/summary")
    return [t for ws in summary["workstreams"] for t in ws["tasks"] if t["title"] == title]


def _replays(tmp_path: Path) -> None:
    memory = str(tmp_path / "memory")
    inspected = custodian_cli(tmp_path, "inspect", "--domain", "website", "--memory", memory)
    assert inspected.stdout.rstrip().endswith("replay: ok"), inspected.stdout


def test_a_rejected_approval_is_never_executed_after_an_interrupted_approve(
    tmp_path: Path,
) -> None:
    memory = tmp_path / "memory"
    hold = WriteHold(nth=1, phase="before_commit")
    with held_hub(tmp_path, hold) as hub:
        ids = _queue(tmp_path, hub.url, memory)
        _approve_killed(tmp_path, hold, ids["set_task_status"], hub.url)
        hold.release(abort=True)  # the status never landed
        store = ApprovalStore(memory)
        assert store.get(ids["set_task_status"]).status == "pending"

        rejected = _reject(tmp_path, ids["set_task_status"], hub.url)
        assert rejected.returncode == 0, rejected.stdout + rejected.stderr
        assert store.get(ids["set_task_status"]).status == "rejected"

        quiet = write_plan(tmp_path / "quiet.md", QUIET)
        code, out, err = finish(start_run(tmp_path, run_argv(hub.url, quiet, memory, "--force")))
        assert code == 0, err
        assert json.loads(out)["reconciled"] == []
        assert hub_get(hub, "/tasks/web-t-4")["status"] != "blocked"
        assert store.get(ids["set_task_status"]).status == "rejected"
        closed = [r for r in journal(memory) if r.kind == "failed" and r.data.get("reconciles")]
        assert len(closed) == 1 and "bo rejected the item" in closed[0].data["error"]
        _replays(tmp_path)


@pytest.mark.parametrize("decision", ["reject", "approve"])
def test_a_create_that_landed_before_a_decision_is_found_and_the_item_executed(
    tmp_path: Path, decision: str
) -> None:
    memory = tmp_path / "memory"
    hold = WriteHold(nth=1, phase="after_commit")  # the hub has created the task
    with held_hub(tmp_path, hold) as hub:
        ids = _queue(tmp_path, hub.url, memory)
        approval = ids["create_task"]
        _approve_killed(tmp_path, hold, approval, hub.url)
        hold.release()
        created = _titled(hub, "Profile checkout")
        assert len(created) == 1

        if decision == "reject":
            done = _reject(tmp_path, approval, hub.url)
        else:
            done = custodian_cli(
                tmp_path, "approvals", "approve", approval, "--by", "bo", "--hub", hub.url,
                "--memory", str(memory),
            )  # fmt: skip
        assert done.returncode != 0
        assert f"already landed as {created[0]['id']}" in done.stdout
        item = ApprovalStore(memory).get(approval)
        assert item.status == "executed" and item.result == {"hub_id": created[0]["id"]}
        again = _titled(hub, "Profile checkout")
        assert len(again) == 1  # never created twice

        quiet = write_plan(tmp_path / "quiet.md", QUIET)
        code, out, err = finish(start_run(tmp_path, run_argv(hub.url, quiet, memory, "--force")))
        assert code == 0, err
        assert json.loads(out)["reconciled"] == []
        _replays(tmp_path)


def test_a_killed_runs_done_is_not_resent_over_a_status_a_person_approved_since(
    tmp_path: Path,
) -> None:
    memory = tmp_path / "memory"
    hold = WriteHold(nth=2, phase="before_commit")  # the status write on web-t-4
    with held_hub(tmp_path, hold) as hub:
        llm = write_plan(tmp_path / "answer.md", THREE_WRITES)
        kill_when_held(
            tmp_path, run_argv(hub.url, llm, memory), hold, "the run never reached the status write"
        )
        hold.release(abort=True)
        block = {"observations": ["waits"], "proposals": [PROPOSALS["proposals"][1]]}
        code, out, err = finish(
            start_run(tmp_path, run_argv(hub.url, write_plan(tmp_path / "b.md", block), memory))
        )
        assert code == 0, err
        summary = json.loads(out)
        # This run settled the killed run's `done` first (re-sent: nothing had moved yet).
        assert [r["outcome"] for r in summary["reconciled"]] == ["resent"]
        [item] = [o for o in summary["items"] if o["outcome"] == "queued"]
        approved = custodian_cli(
            tmp_path, "approvals", "approve", item["approval_id"], "--by", "ana",
            "--hub", hub.url, "--memory", str(memory),
        )  # fmt: skip
        assert approved.returncode == 0, approved.stdout + approved.stderr
        assert hub_get(hub, "/tasks/web-t-4")["status"] == "blocked"

        quiet = write_plan(tmp_path / "quiet.md", QUIET)
        code, out, err = finish(start_run(tmp_path, run_argv(hub.url, quiet, memory, "--force")))
        assert code == 0, err
        assert hub_get(hub, "/tasks/web-t-4")["status"] == "blocked"
        _replays(tmp_path)


def test_an_interrupted_approvals_write_found_by_the_next_run_makes_the_item_executed(
    tmp_path: Path,
) -> None:
    memory = tmp_path / "memory"
    hold = WriteHold(nth=1, phase="after_commit")
    with held_hub(tmp_path, hold) as hub:
        ids = _queue(tmp_path, hub.url, memory)
        approval = ids["set_task_status"]
        _approve_killed(tmp_path, hold, approval, hub.url)
        hold.release()
        assert hub_get(hub, "/tasks/web-t-4")["status"] == "blocked"
        assert ApprovalStore(memory).get(approval).status == "pending"

        quiet = write_plan(tmp_path / "quiet.md", QUIET)
        code, out, err = finish(start_run(tmp_path, run_argv(hub.url, quiet, memory, "--force")))
        assert code == 0, err
        [found] = json.loads(out)["reconciled"]
        assert found["outcome"] == "found" and found["hub_id"] == "web-t-4"
        item = ApprovalStore(memory).get(approval)
        assert item.status == "executed" and item.result == {"hub_id": "web-t-4"}
        assert "found done as web-t-4 by the reconcile of run" in str(item.decision_note)
        _replays(tmp_path)
