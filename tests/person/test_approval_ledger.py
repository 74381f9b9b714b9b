"""Approval items are a view of the journal: where a file and the journal disagree, the journal
wins, `inspect` reports it, and `approvals repair` rewrites the file.

The core's ledger is checked on records as each decision writes them; the commands on a real
reference hub, with `custodian` run as real processes.
"""

from __future__ import annotations

import json
import sys
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx

from custodian_runtime.core.approvals.items import ApprovalItem, new_item
from custodian_runtime.core.approvals.ledger import (
    Ledger,
    Said,
    disagreements,
    fold_ledger,
    repaired,
)
from custodian_runtime.core.fold import api as core_journal
from custodian_runtime.core.journal.seals import SealKey
from custodian_runtime.journal.lock import RunLock
from custodian_runtime.journal.person.queue import ApprovalStore
from support.runs import hub_get
from support.spine import (
    HOLD_TIMEOUT_S,
    WriteHold,
    custodian_cli,
    finish,
    held_hub,
    journal,
    run_argv,
    start_run,
    write_plan,
)

# The whole call's budget: the held write outlives it, so no answer comes.
SHORT = {"STATE_HUB_MAX_TOTAL_S": "1", "STATE_HUB_MAX_ATTEMPTS": "1"}
LATER_S = 3.0
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
KEY = "k" * 20 + "-seal-key-for-tests-0123456789"
BLOCK = {
    "observations": ["web-t-4 waits on the vendor."],
    "proposals": [
        {
            "operation": "set_task_status",
            "params": {"task_id": "web-t-4", "status": "blocked"},
            "rationale": "the vendor has not answered",
        }
    ],
}


def _journal(*entries: tuple[str, str, dict[str, Any]]) -> list[core_journal.Record]:
    """Records of the website journal from (run id, kind, data), chained in order."""
    records: list[core_journal.Record] = []
    for seq, (run_id, kind, data) in enumerate(entries):
        prev = records[-1] if records else None
        at = T0 + timedelta(seconds=seq)
        records.append(core_journal.make_record(prev, run_id, "website", kind, at, data))
    return records


def _ledger(records: list[core_journal.Record]) -> Ledger:
    """The ledger of a whole journal, as its one reader folds it."""
    return fold_ledger(Ledger(), records)


def _item(status: str = "pending", approval_id: str = "apr-1") -> ApprovalItem:
    item = new_item(
        approval_id=approval_id, domain="website", operation="set_task_status",
        params={"task_id": "t-4", "status": "blocked"}, rationale=None, run_id="r1",
        fingerprint="f" * 64, precondition={}, now=T0, ttl_days=14,
    )  # fmt: skip
    return item.model_copy(update={"status": status})


QUEUED = ("r1", "queued", {"index": 1, "approval_id": "apr-1", "fingerprint": "f" * 64})


def _decided(run: str, decision: str) -> tuple[str, str, dict[str, Any]]:
    data = {"approval_id": "apr-1", "decision": decision, "by": "ana", "reason": None}
    return (run, "approval_decided", data)


def _step(run: str, kind: str, **data: Any) -> tuple[str, str, dict[str, Any]]:
    return (run, kind, {"index": 0, **data})


def test_each_decision_says_the_status_its_file_holds() -> None:
    said = {
        "queued": [QUEUED],
        "rejected": [QUEUED, _decided("a1", "rejected")],
        "refused": [QUEUED, _decided("a1", "refused")],
        "stale decision": [QUEUED, _decided("a1", "stale")],
        "executed": [QUEUED, _decided("a1", "approved"), _step("a1", "receipt")],
        "sent, stale": [QUEUED, _decided("a1", "approved"), _step("a1", "stale")],
        "sent, failed": [QUEUED, _decided("a1", "approved"), _step("a1", "failed")],
        "unknown": [QUEUED, _decided("a1", "approved"), _step("a1", "unknown")],
        # Approved, then killed before any answer: still undecided, as its file says.
        "killed": [QUEUED, _decided("a1", "approved")],
        # A later run finds the killed approval's write on the hub.
        "found": [
            QUEUED,
            _decided("a1", "approved"),
            ("r2", "reconciled", {"index": 0}),
            _step("r2", "receipt", reconciles="a1", found_on_hub=True),
        ],
        # A reject closes the earlier approval's open write: the rejection stands.
        "closed by a reject": [
            QUEUED,
            _decided("a1", "approved"),
            _decided("a2", "rejected"),
            _step("a2", "failed", reconciles="a1", closed="refused"),
        ],
        # A write whose answer never came, closed stale by the next run.
        "unknown, closed": [
            QUEUED,
            _decided("a1", "approved"),
            _step("a1", "unknown"),
            _step("r2", "stale", reconciles="a1", closed="stale"),
        ],
    }
    want = {
        "queued": "pending", "rejected": "rejected", "refused": "failed",
        "stale decision": "stale", "executed": "executed", "sent, stale": "stale",
        "sent, failed": "failed", "unknown": "unknown", "killed": "pending",
        "found": "executed", "closed by a reject": "rejected", "unknown, closed": "stale",
    }  # fmt: skip
    got = {name: _ledger(_journal(*entries)).said["apr-1"].status for name, entries in said.items()}
    assert got == want


def test_the_ref_names_the_record_that_says_it_and_chunks_fold_as_one() -> None:
    records = _journal(QUEUED, _decided("a1", "approved"), _step("a1", "receipt"))
    whole = _ledger(records)
    said = whole.said["apr-1"]
    assert said == Said(status="executed", ref="website:3", at=records[2].at)
    assert fold_ledger(fold_ledger(Ledger(), records[:1]), records[1:]) == whole


def test_a_write_settled_by_hand_leaves_nothing_to_disagree_with() -> None:
    records = _journal(
        QUEUED, _decided("a1", "approved"), _step("a1", "unknown"),
        ("h1", "settled_by_hand", {"run_id_of_the_open_write": "a1", "index": 0}),
    )  # fmt: skip
    assert "apr-1" not in _ledger(records).said


def test_disagreements_name_the_item_both_statuses_and_the_record() -> None:
    ledger = _ledger(_journal(QUEUED, _decided("a1", "approved"), _step("a1", "receipt")))
    [found] = disagreements(ledger, [_item("pending"), _item("pending", "apr-other")], T0)
    assert found.line() == "apr-1 file says pending, journal says executed at website:3"
    assert disagreements(ledger, [_item("executed")], T0) == []
    fixed = repaired(_item("pending"), found, T0)
    assert fixed.status == "executed" and "website:3" in str(fixed.decision_note)


def test_an_expired_pending_item_agrees_with_a_pending_journal() -> None:
    ledger = _ledger(_journal(QUEUED))
    later = T0 + timedelta(days=30)
    assert disagreements(ledger, [_item("pending"), _item("expired")], later) == []
    [early] = disagreements(ledger, [_item("expired")], T0)
    assert (early.file_says, early.journal_says) == ("expired", "pending")


# --- the commands, on a real reference hub -------------------------------------------------


def _queue_block(tmp_path: Path, hub_url: str, memory: Path, **env: str) -> str:
    llm = write_plan(tmp_path / "block.md", BLOCK)
    code, out, err = finish(start_run(tmp_path, run_argv(hub_url, llm, memory), **env))
    assert code == 0, err
    [approval] = [o["approval_id"] for o in json.loads(out)["items"] if o["outcome"] == "queued"]
    return str(approval)


def _cli(tmp_path: Path, *args: str, **env: str) -> tuple[int, str]:
    done = custodian_cli(tmp_path, *args, "--memory", str(tmp_path / "memory"), **env)
    return done.returncode, done.stdout + done.stderr


def _edit_back_to_pending(memory: Path, approval_id: str) -> None:
    """A person edits the executed item's file by hand back to pending."""
    path = memory / "approvals" / f"{approval_id}.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data.update(status="pending", decided_at=None, decided_by=None, result=None)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")


def _receipt_ref(memory: Path) -> str:
    [receipt] = [
        r for r in journal(memory) if r.kind == "receipt" and r.run_id.startswith("approval-")
    ]
    return receipt.ref


def test_an_item_edited_back_to_pending_is_reported_by_inspect_and_repaired(
    tmp_path: Path,
) -> None:
    memory = tmp_path / "memory"
    with held_hub(tmp_path, None) as hub:
        approval = _queue_block(tmp_path, hub.url, memory)
        code, text = _cli(
            tmp_path, "approvals", "approve", approval, "--by", "ana", "--hub", hub.url
        )
        assert code == 0, text
        assert hub_get(hub, "/tasks/web-t-4")["status"] == "blocked"
    code, text = _cli(tmp_path, "inspect", "--domain", "website")
    assert code == 0 and "approvals " not in text and text.rstrip().endswith("replay: ok"), text

    _edit_back_to_pending(memory, approval)
    ref = _receipt_ref(memory)
    code, text = _cli(tmp_path, "inspect", "--domain", "website")
    line = f"{approval} file says pending, journal says executed at {ref}"
    assert code == 6, text
    assert f"approvals 1 item(s) disagree with the journal: {line}" in text
    assert "custodian approvals repair --domain website" in text
    assert text.rstrip().splitlines()[-1].startswith("replay: FAILED")
    code, listed = _cli(tmp_path, "inspect")  # every domain, one line per disagreement
    assert code == 6 and line in listed, listed

    code, text = _cli(tmp_path, "approvals", "repair", "--domain", "website")
    assert code == 0, text
    assert f"website: {approval}: pending -> executed (the journal at {ref})" in text
    assert ApprovalStore(memory).get(approval).status == "executed"
    code, text = _cli(tmp_path, "inspect", "--domain", "website")
    assert code == 0 and text.rstrip().endswith("replay: ok"), text
    code, text = _cli(tmp_path, "approvals", "repair")
    assert code == 0 and "website: every approval item agrees with the journal" in text


def test_a_decision_recorded_while_the_domain_is_busy_is_no_disagreement(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    with held_hub(tmp_path, None) as hub:
        approval = _queue_block(tmp_path, hub.url, memory)
        with RunLock(memory, "website", run_id="r-busy"):
            code, text = _cli(
                tmp_path, "approvals", "approve", approval, "--by", "ana", "--hub", hub.url,
                "--wait", "0",
            )  # fmt: skip
            assert "kept" in text, text
        assert list((memory / "inbox").rglob("*.json")), "the decision was not recorded"
        code, text = _cli(tmp_path, "inspect", "--domain", "website")
        assert code == 0 and "approvals " not in text, text
        assert text.rstrip().endswith("replay: ok"), text


def test_repair_seals_with_the_key_and_refuses_a_file_edited_without_it(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    env = {"CUSTODIAN_SEAL_KEY": KEY}
    with held_hub(tmp_path, None) as hub:
        approval = _queue_block(tmp_path, hub.url, memory, **env)
        args = ("approvals", "approve", approval, "--by", "ana", "--hub", hub.url)
        code, text = _cli(tmp_path, *args, **env)
        assert code == 0, text
    keyed = ApprovalStore(memory, SealKey(KEY))
    executed = keyed.get(approval)

    _edit_back_to_pending(memory, approval)  # by someone without the key: its seal fails
    code, text = _cli(tmp_path, "approvals", "repair", **env)
    assert code == 6 and f"{approval} not repaired" in text, text
    assert ApprovalStore(memory).get(approval).status == "pending"

    keyed.save(executed.model_copy(update={"status": "pending"}))  # sealed, yet not the journal's
    code, text = _cli(tmp_path, "approvals", "repair", **env)
    assert code == 0 and "pending -> executed" in text, text
    assert keyed.get(approval).status == "executed"  # read back verified: the seal holds


def test_a_run_that_closes_an_approvals_unknown_write_keeps_its_item_in_step(
    tmp_path: Path,
) -> None:
    memory = tmp_path / "memory"
    hold = WriteHold(nth=1, phase="before_commit")  # the approval's write, never committed
    with held_hub(tmp_path, hold) as hub:
        approval = _queue_block(tmp_path, hub.url, memory)
        args = ("approvals", "approve", approval, "--by", "ana", "--hub", hub.url)
        approve = start_run(tmp_path, [sys.executable, "-m", "custodian_runtime", *args,
                                       "--memory", str(memory)], **SHORT)  # fmt: skip
        assert hold.reached.wait(HOLD_TIMEOUT_S), "the approval never reached its write"
        threading.Timer(LATER_S, lambda: hold.release(abort=True)).start()
        code, out, err = finish(approve)
        assert code == 5, out + err
        assert ApprovalStore(memory).get(approval).status == "unknown"
        # A person moves the task meanwhile: the approval's write is no longer what it was.
        moved = httpx.patch(f"{hub.url}/tasks/web-t-4", json={"status": "done"}, timeout=5)
        assert moved.status_code == 200, moved.text

        quiet = write_plan(tmp_path / "quiet.md", {"observations": ["Nothing to do."]})
        code, out, err = finish(start_run(tmp_path, run_argv(hub.url, quiet, memory, "--force")))
        assert code == 0, err
        [closed] = json.loads(out)["reconciled"]
        assert closed["outcome"] in ("stale", "refused", "expired"), closed
        assert hub_get(hub, "/tasks/web-t-4")["status"] == "done"
    item = ApprovalStore(memory).get(approval)
    assert item.status == ("stale" if closed["outcome"] == "stale" else "failed")
    code, text = _cli(tmp_path, "inspect", "--domain", "website")
    assert code == 0 and "approvals " not in text, text


def test_a_damaged_item_file_is_reported_by_inspect_not_a_crash(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    with held_hub(tmp_path, None) as hub:
        approval = _queue_block(tmp_path, hub.url, memory)
    (memory / "approvals" / f"{approval}.json").write_text("{not json", encoding="utf-8")
    code, text = _cli(tmp_path, "inspect", "--domain", "website")
    assert code == 6, text
    assert "approvals cannot be compared with the journal: approval file" in text
    assert text.rstrip().splitlines()[-1].startswith("replay: FAILED")
