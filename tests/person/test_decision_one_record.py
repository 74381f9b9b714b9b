"""A person's decision has one record, the journal; an item file is a view of it.

Each test kills a real `custodian` process (SIGKILL) at a write boundary of a decision, or keeps
words in the inbox while the domain is held, then lets a second person decide the same item. The
journal's decision stands every time: no command believes a file that disagrees with it.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from custodian_runtime.journal.lock import RunLock
from custodian_runtime.journal.person.inbox import Inbox
from custodian_runtime.journal.person.queue import ApprovalStore
from custodian_runtime.review.pending import pending_items
from support.spine import (
    clean_env,
    custodian_cli,
    finish,
    held_hub,
    journal,
    run_argv,
    start_run,
    write_plan,
)

CREATE: dict[str, Any] = {
    "observations": ["The checkout needs a task."],
    "proposals": [
        {
            "operation": "create_task",
            "params": {"workstream_id": "web-ws-1", "title": "Profile checkout", "status": "todo"},
            "rationale": "no task covers the p95 regression",
        }
    ],
}

# A `custodian` process that SIGKILLs itself when it saves the item file of a decision (any
# status but pending): after the journal holds the decision, before its file says so.
KILLED_AT_FILE = """
import os, signal, sys
from custodian_runtime.journal.person.queue import ApprovalStore
from custodian_runtime.review.pending import pending_items
from custodian_runtime.cli import main
saving = ApprovalStore.save
def save(self, item):
    if item.status != "pending":
        os.kill(os.getpid(), signal.SIGKILL)
    return saving(self, item)
ApprovalStore.save = save
raise SystemExit(main(sys.argv[1:]))
"""


def _queue(tmp_path: Path, hub_url: str, memory: Path) -> str:
    llm = write_plan(tmp_path / "create.md", CREATE)
    code, out, err = finish(start_run(tmp_path, run_argv(hub_url, llm, memory)))
    assert code == 0, err
    return str(json.loads(out)["items"][0]["approval_id"])


def _killed_at_file(tmp_path: Path, *args: str, **env: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", KILLED_AT_FILE, *args],
        cwd=tmp_path, env=clean_env(**env), capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == -signal.SIGKILL, done.stderr


def _kept_while_busy(tmp_path: Path, memory: Path, *decision: str) -> None:
    """`approvals DECISION …` while a run has the domain's lock: the word is kept in the inbox."""
    with RunLock(memory, "website", run_id="r-busy"):
        kept = custodian_cli(
            tmp_path, "approvals", *decision, "--wait", "0", "--memory", str(memory)
        )
    assert kept.returncode == 0, kept.stderr


def _decisions(memory: Path) -> list[str]:
    return [str(r.data["decision"]) for r in journal(memory) if r.kind == "approval_decided"]


def _titled(hub_url: str, title: str) -> int:
    import httpx

    tasks = httpx.get(f"{hub_url}/domains/website/summary", timeout=10).text
    return tasks.count(title)


def test_a_reject_journaled_before_a_kill_stands_and_a_second_person_cannot_approve(
    tmp_path: Path,
) -> None:
    memory = tmp_path / "memory"
    mem = ["--memory", str(memory)]
    with held_hub(tmp_path, None) as hub:
        item = _queue(tmp_path, hub.url, memory)
        _killed_at_file(
            tmp_path, "approvals", "reject", item, "--by", "bob", "--reason", "not now", *mem
        )
        # The journal holds bob's reject; the file still says pending.
        assert _decisions(memory) == ["rejected"]
        assert ApprovalStore(memory).get(item).status == "pending"
        # The review page lists no such item: its file is rewritten from the journal first.
        listed = pending_items(ApprovalStore(memory), datetime.now(UTC))
        assert item not in {i.id for i in listed}
        assert ApprovalStore(memory).get(item).status == "rejected"
        repaired = ApprovalStore(memory)
        repaired.save(repaired.get(item).model_copy(update={"status": "pending"}))  # lag again
        carol = custodian_cli(
            tmp_path, "approvals", "approve", item, "--by", "carol", "--hub", hub.url, *mem
        )
        assert carol.returncode != 0
        assert "is rejected, not pending" in carol.stdout + carol.stderr
        assert "the journal says rejected" in carol.stdout + carol.stderr
        assert _titled(hub.url, "Profile checkout") == 0
        assert ApprovalStore(memory).get(item).status == "rejected"  # the file, rewritten
        assert _decisions(memory) == ["rejected"]


def test_a_listing_shows_the_journals_status_and_rewrites_the_file(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    mem = ["--memory", str(memory)]
    with held_hub(tmp_path, None) as hub:
        item = _queue(tmp_path, hub.url, memory)
        _killed_at_file(
            tmp_path, "approvals", "reject", item, "--by", "bob", "--reason", "not now", *mem
        )
        shown = custodian_cli(tmp_path, "approvals", "show", item, "--json", *mem)
        assert shown.returncode == 0, shown.stderr
        assert json.loads(shown.stdout)["status"] == "rejected"
        assert "its file said pending, the journal says rejected" in shown.stderr
        inspected = custodian_cli(tmp_path, "inspect", "--domain", "website", *mem)
        assert inspected.returncode == 0, inspected.stdout


def test_a_kept_reject_killed_while_absorbed_stands(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    mem = ["--memory", str(memory)]
    with held_hub(tmp_path, None) as hub:
        item = _queue(tmp_path, hub.url, memory)
        _kept_while_busy(tmp_path, memory, "reject", item, "--by", "bob", "--reason", "no")
        _killed_at_file(tmp_path, "approvals", "list", *mem)  # absorbs bob's word, then killed
        carol = custodian_cli(
            tmp_path, "approvals", "approve", item, "--by", "carol", "--hub", hub.url, *mem
        )
        assert carol.returncode != 0
        assert _titled(hub.url, "Profile checkout") == 0
        assert _decisions(memory) == ["rejected"]
        assert not Inbox(memory).waiting("website")


def test_a_decision_said_now_waits_behind_a_word_kept_ahead_of_it(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    mem = ["--memory", str(memory)]
    with held_hub(tmp_path, None) as hub:
        item = _queue(tmp_path, hub.url, memory)
        lock = RunLock(memory, "website", run_id="r-busy")
        lock.__enter__()
        try:
            alice = start_run(tmp_path, [
                sys.executable, "-m", "custodian_runtime", "approvals", "approve", item,
                "--by", "alice", "--hub", hub.url, "--wait", "30", *mem,
            ])  # fmt: skip
            bob = custodian_cli(
                tmp_path, "approvals", "reject", item, "--by", "bob", "--reason", "no",
                "--wait", "0", *mem,
            )  # fmt: skip
            assert bob.returncode == 0, bob.stderr
            assert len(Inbox(memory).waiting("website")) == 1
        finally:
            lock.__exit__(None, None, None)
        code, out, err = finish(alice, timeout=60)
        assert code != 0, out
        # bob's word goes first: absorbed as alice's command starts, or ahead of her word when
        # she had been waiting on the lock already (which one depends on how fast she started).
        said = out + err
        assert "carried out first, as it came first" in said or "kept decision" in said
        assert _titled(hub.url, "Profile checkout") == 0
        assert _decisions(memory) == ["rejected"]


def test_a_kept_approve_stays_for_a_command_pointed_at_its_own_hub(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    mem = ["--memory", str(memory)]
    with held_hub(tmp_path, None) as hub:
        item = _queue(tmp_path, hub.url, memory)
        _kept_while_busy(tmp_path, memory, "approve", item, "--by", "ana", "--hub", hub.url)
        other_dir = tmp_path / "other"
        other_dir.mkdir()
        with held_hub(other_dir, None) as other:
            elsewhere = custodian_cli(tmp_path, "approvals", "list", *mem, STATE_HUB_URL=other.url)
            assert "kept, not carried out" in elsewhere.stderr
            # bob, pointed at the other hub too, rejects: kept behind ana's word, not before it.
            bob = custodian_cli(
                tmp_path, "approvals", "reject", item, "--by", "bob", "--reason", "no", *mem,
                STATE_HUB_URL=other.url,
            )  # fmt: skip
        assert bob.returncode != 0
        assert "ana already decided it" in bob.stderr
        assert len(Inbox(memory).waiting("website")) == 1  # untouched
        assert ApprovalStore(memory).get(item).status == "pending"
        here = custodian_cli(tmp_path, "approvals", "list", *mem, STATE_HUB_URL=hub.url)
        assert here.returncode == 0, here.stderr
        assert not Inbox(memory).waiting("website")
        assert ApprovalStore(memory).get(item).status == "executed"
        assert _titled(hub.url, "Profile checkout") == 1


def test_a_word_after_a_thirteen_digit_mark_is_listed_and_carried_out(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    mem = ["--memory", str(memory)]
    with held_hub(tmp_path, None) as hub:
        item = _queue(tmp_path, hub.url, memory)
        inbox = memory / "inbox" / "website"
        inbox.mkdir(parents=True)
        (inbox / "999999999999.done").touch()
        _kept_while_busy(tmp_path, memory, "reject", item, "--by", "bob", "--reason", "no")
        assert (inbox / "1000000000000.json").is_file()
        assert [w.arrival for w in Inbox(memory).waiting("website")] == [1000000000000]
        custodian_cli(tmp_path, "approvals", "list", *mem)
        assert ApprovalStore(memory).get(item).status == "rejected"
        assert _decisions(memory) == ["rejected"]


def test_an_approve_killed_after_its_write_landed_is_executed_for_the_next_person(
    tmp_path: Path,
) -> None:
    memory = tmp_path / "memory"
    mem = ["--memory", str(memory)]
    with held_hub(tmp_path, None) as hub:
        item = _queue(tmp_path, hub.url, memory)
        _killed_at_file(tmp_path, "approvals", "approve", item, "--by", "ana", "--hub", hub.url,
                        *mem)  # fmt: skip
        assert _titled(hub.url, "Profile checkout") == 1
        assert ApprovalStore(memory).get(item).status == "pending"  # the file lags
        bob = custodian_cli(
            tmp_path, "approvals", "reject", item, "--by", "bob", "--reason", "no", *mem
        )
        assert bob.returncode != 0
        assert "is executed, not pending" in bob.stderr
        assert ApprovalStore(memory).get(item).status == "executed"
        assert _decisions(memory) == ["approved"]
        assert _titled(hub.url, "Profile checkout") == 1


def test_a_kept_approve_killed_while_absorbed_is_carried_out_once(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    mem = ["--memory", str(memory)]
    with held_hub(tmp_path, None) as hub:
        item = _queue(tmp_path, hub.url, memory)
        _kept_while_busy(tmp_path, memory, "approve", item, "--by", "ana", "--hub", hub.url)
        # Absorbed, the write sent, then killed before the item file says so.
        _killed_at_file(tmp_path, "approvals", "list", *mem, STATE_HUB_URL=hub.url)
        again = custodian_cli(tmp_path, "approvals", "list", *mem, STATE_HUB_URL=hub.url)
        assert again.returncode == 0, again.stderr
        bob = custodian_cli(
            tmp_path, "approvals", "reject", item, "--by", "bob", "--reason", "no", *mem
        )
        assert bob.returncode != 0
        assert ApprovalStore(memory).get(item).status == "executed"
        assert _titled(hub.url, "Profile checkout") == 1
        assert not Inbox(memory).waiting("website")


def test_the_next_run_rewrites_a_file_its_journal_decided(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    mem = ["--memory", str(memory)]
    with held_hub(tmp_path, None) as hub:
        item = _queue(tmp_path, hub.url, memory)
        _killed_at_file(
            tmp_path, "approvals", "reject", item, "--by", "bob", "--reason", "not now", *mem
        )
        quiet = write_plan(tmp_path / "quiet.md", {"observations": ["Nothing needs doing."]})
        code, _, err = finish(start_run(tmp_path, run_argv(hub.url, quiet, memory, "--force")))
        assert code == 0, err
        assert "file_rewritten_from_journal" in err or "the journal says rejected" in err
        assert ApprovalStore(memory).get(item).status == "rejected"


def test_a_kept_approve_its_own_ruling_refuses_is_journaled_closed_with_the_reason(
    tmp_path: Path,
) -> None:
    memory = tmp_path / "memory"
    mem = ["--memory", str(memory)]
    with held_hub(tmp_path, None) as hub:
        item = _queue(tmp_path, hub.url, memory)
        off = custodian_cli(
            tmp_path, "policy", "set", "--domain", "website", "--operation", "create_task",
            "--mode", "off", "--by", "bo", "--reason", "no new tasks this week", *mem,
        )  # fmt: skip
        assert off.returncode == 0, off.stderr
        _kept_while_busy(tmp_path, memory, "approve", item, "--by", "ana", "--hub", hub.url)
        custodian_cli(tmp_path, "approvals", "list", *mem, STATE_HUB_URL=hub.url)
        assert not Inbox(memory).waiting("website")  # the word's own refusal closes it
        [closed] = [r for r in journal(memory) if r.kind == "approval_decided"]
        assert closed.data["decision"] == "closed" and closed.data["by"] == "ana"
        assert "off" in str(closed.data["reason"])
        assert ApprovalStore(memory).get(item).status == "pending"
        assert _titled(hub.url, "Profile checkout") == 0
