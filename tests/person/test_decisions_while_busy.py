"""Deciding doesn't wait for a run: a decision made while a run has the domain's lock is recorded.

The command returns at once (after `--wait`), says in plain words what happens next, and loses
nothing; the next approvals command or run that can hold the domain carries the decision out
through the same path as one made at once.
"""

from __future__ import annotations

import json
from pathlib import Path

from custodian_runtime.journal.lock import RunLock
from custodian_runtime.journal.person.inbox import Inbox
from custodian_runtime.journal.person.queue import ApprovalStore
from support.runs import hub_get
from support.spine import custodian_cli, finish, held_hub, journal, run_argv, start_run, write_plan

KEY = "k" * 40
QUIET = {"observations": ["Nothing needs doing."]}
BLOCK = {
    "observations": ["web-t-4 waits on the vendor."],
    "proposals": [
        {
            "operation": "set_task_status",
            "params": {"task_id": "web-t-4", "status": "blocked"},
            "rationale": "the vendor has not answered",
        },
        {
            "operation": "set_task_status",
            "params": {"task_id": "web-t-2", "status": "cancelled"},
            "rationale": "superseded",
        },
    ],
}


def _queued(tmp_path: Path, hub_url: str, memory: Path, **env: str) -> list[str]:
    llm = write_plan(tmp_path / "block.md", BLOCK)
    code, out, err = finish(start_run(tmp_path, run_argv(hub_url, llm, memory), **env))
    assert code == 0, err
    return [o["approval_id"] for o in json.loads(out)["items"] if o["outcome"] == "queued"]


def test_decisions_made_while_a_run_holds_the_domain_are_recorded_and_carried_out_after(
    tmp_path: Path,
) -> None:
    memory = tmp_path / "memory"
    with held_hub(tmp_path, None) as hub:
        block, cancel = _queued(tmp_path, hub.url, memory)
        mem = ["--memory", str(memory)]
        with RunLock(memory, "website", run_id="r-busy"):
            approved = custodian_cli(
                tmp_path, "approvals", "approve", block, "--by", "ana", "--hub", hub.url,
                "--wait", "0", *mem,
            )  # fmt: skip
            rejected = custodian_cli(
                tmp_path, "approvals", "reject", cancel, "--by", "bo", "--reason",
                "resumes next week", "--wait", "0.6", *mem,
            )  # fmt: skip
            assert approved.returncode == 0, approved.stdout + approved.stderr
            assert rejected.returncode == 0, rejected.stdout + rejected.stderr
            assert "approval by ana kept" in approved.stdout
            assert "run r-busy" in approved.stdout and "carried out" in approved.stdout
            assert "rejection by bo kept" in rejected.stdout
            again = custodian_cli(
                tmp_path, "approvals", "reject", block, "--by", "cy", "--reason", "no",
                "--wait", "0", *mem,
            )  # fmt: skip
            assert again.returncode != 0 and "ana already decided it" in again.stderr
            store = ApprovalStore(memory)
            assert store.get(block).status == "pending"  # nothing is carried out yet
            assert hub_get(hub, "/tasks/web-t-4")["status"] != "blocked"
            assert len(Inbox(memory).waiting("website")) == 2

        # The domain is free: the next run carries both decisions out before it starts.
        llm = write_plan(tmp_path / "quiet.md", QUIET)
        code, _, err = finish(start_run(tmp_path, run_argv(hub.url, llm, memory, "--force")))
        assert code == 0, err
        assert "kept decision" in err
        assert store.get(block).status == "executed"
        assert store.get(cancel).status == "rejected"
        assert store.get(cancel).reject_reason == "resumes next week"
        assert hub_get(hub, "/tasks/web-t-4")["status"] == "blocked"
        assert Inbox(memory).all_waiting() == []
        decided = [r.data for r in journal(memory) if r.kind == "approval_decided"]
        assert {(d["approval_id"], d["decision"], d["by"]) for d in decided} == {
            (block, "approved", "ana"),
            (cancel, "rejected", "bo"),
        }


def test_an_approvals_command_carries_out_what_was_recorded_once_the_domain_is_free(
    tmp_path: Path,
) -> None:
    memory = tmp_path / "memory"
    with held_hub(tmp_path, None) as hub:
        block, _ = _queued(tmp_path, hub.url, memory)
        with RunLock(memory, "website", run_id="r-busy"):
            recorded = custodian_cli(
                tmp_path, "approvals", "reject", block, "--by", "bo", "--reason", "later",
                "--wait", "0", "--memory", str(memory),
            )  # fmt: skip
            assert recorded.returncode == 0
        listed = custodian_cli(tmp_path, "approvals", "list", "--memory", str(memory))
        assert listed.returncode == 0
        assert f"carried out a kept decision: {block}: rejected by bo" in listed.stdout
        assert ApprovalStore(memory).get(block).status == "rejected"


def test_a_recorded_decision_without_a_valid_seal_is_never_carried_out(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    with held_hub(tmp_path, None) as hub:
        block, _ = _queued(tmp_path, hub.url, memory, CUSTODIAN_SEAL_KEY=KEY)
        with RunLock(memory, "website", run_id="r-busy"):
            recorded = custodian_cli(
                tmp_path, "approvals", "reject", block, "--by", "bo", "--reason", "later",
                "--wait", "0", "--memory", str(memory), CUSTODIAN_SEAL_KEY=KEY,
            )  # fmt: skip
            assert recorded.returncode == 0, recorded.stdout + recorded.stderr
        [path] = (memory / "inbox" / "website").glob("*.json")
        forged = json.loads(path.read_text())
        forged["fields"]["by"] = "mallory"
        path.write_text(json.dumps(forged))
        listed = custodian_cli(
            tmp_path, "approvals", "list", "--memory", str(memory), CUSTODIAN_SEAL_KEY=KEY
        )
        assert listed.returncode == 6, listed.stdout + listed.stderr
        assert "not sealed with the seal key" in listed.stdout + listed.stderr
        assert ApprovalStore(memory, None).get(block, verify=False).status == "pending"
