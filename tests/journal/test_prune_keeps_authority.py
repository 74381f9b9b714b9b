"""Finding 4: a prune keeps what the authority needs, before and after a checkpoint rebuild.

Deference and the rolling budgets count Custodian's own writes of the last 31 days, which the
checkpoint keeps and a rebuild reads back from the segments a prune leaves; rejection memory is
in the approval queue. `journal prune` refuses a `--keep` shorter than that window, naming it, and
every authority input is the same before prune, after prune and after a checkpoint rebuild.
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from custodian_runtime.core.approvals.items import history_for, new_item, recently_rejected
from custodian_runtime.core.authority.budgets import RecentWrites
from custodian_runtime.core.plan.extract import fingerprint
from custodian_runtime.errors import PruneRefused
from custodian_runtime.journal.person.queue import ApprovalStore
from custodian_runtime.journal.prune import prune
from custodian_runtime.journal.store import JournalStore
from support.journal import DOMAIN, StepClock
from support.runs import run_cli

NOW = datetime.now(UTC)


def _write_run(
    store: JournalStore, run_id: str, at: datetime, operation: str, params: dict[str, Any]
) -> None:
    """One completed run whose one write the policy authorized and the hub took."""
    fp = fingerprint(operation, params)
    writer = store.writer(DOMAIN, run_id, StepClock(at, timedelta(seconds=1)))
    writer.append("run_started", {"model_spec": "offline", "pad": "x" * 600})
    writer.append(
        "ruling",
        {
            "index": 0,
            "operation": operation,
            "target": None,
            "params": params,
            "fingerprint": fp,
            "outcome": "execute",
            "reason": "sanctioned",
        },
    )
    writer.append(
        "authorized",
        {
            "index": 0,
            "operation": operation,
            "params": params,
            "fingerprint": fp,
            "idempotency_key": f"k-{run_id}",
            "nonce": "0" * 12,
            "by": "policy",
        },
    )
    writer.append("dispatched", {"index": 0, "idempotency_key": f"k-{run_id}"})
    after = {"status": params.get("status"), "updated_at": at.isoformat(), "version": 2}
    writer.append(
        "receipt",
        {
            "index": 0,
            "status_code": 200,
            "hub_id": f"h-{run_id}",
            "replayed": False,
            "response_sha256": "d" * 64,
            "attempts": 1,
            **({"task_after": after} if "status" in params else {}),
        },
    )
    writer.append("finished", {"status": "completed", "exit_code": 0, "counts": {"executed": 1}})
    store.commit(writer)


def _history(memory: Path) -> JournalStore:
    """Old writes (200 days), status writes inside the deference window, events inside 24 h."""
    store = JournalStore(memory, segment_bytes=4096)
    event = {
        "workstream_id": "web-ws-1",
        "event_type": "note",
        "rests_on": ["web-t-1"],
        "summary": "looked",
    }
    for n in range(30):
        _write_run(
            store, f"old{n:02d}", NOW - timedelta(days=200, hours=n), "add_progress_event", event
        )
    for n, days in enumerate((29, 20, 10)):
        status = {"task_id": f"web-t-{n}", "status": "done", "evidence": ["ev-1"]}
        _write_run(store, f"status{n}", NOW - timedelta(days=days), "update_task_status", status)
    for n in range(3):
        _write_run(store, f"recent{n}", NOW - timedelta(hours=5 - n), "add_progress_event", event)
    return store


def _reject(memory: Path) -> ApprovalStore:
    approvals = ApprovalStore(memory)
    params = {"task_id": "web-t-9", "status": "blocked"}
    item = new_item(
        approval_id="apr-00000000-0000",
        domain=DOMAIN,
        operation="set_task_status",
        params=params,
        rationale=None,
        run_id="status0",
        fingerprint=fingerprint("set_task_status", params),
        precondition={},
        now=NOW - timedelta(days=3),
        ttl_days=14,
    )
    approvals.save(
        item.model_copy(
            update={
                "status": "rejected",
                "decided_at": NOW - timedelta(days=2),
                "decided_by": "ana",
                "reject_reason": "not yet",
            }
        )
    )
    return approvals


def _authority_inputs(store: JournalStore, approvals: ApprovalStore) -> dict[str, Any]:
    """What the authority reads: own writes (deference, budgets) and the rejection memory."""
    recent = RecentWrites(NOW, store.open(DOMAIN).checkpoint.writes)
    mine = recent.since(timedelta(days=31))
    return {
        "deference_30d": [w.model_dump() for w in recent.since(timedelta(days=30))],
        "deference_14d": [w.model_dump() for w in recent.since(timedelta(days=14))],
        "budget_24h": Counter(w.operation for w in recent.since(timedelta(hours=24))),
        "status_per_task_720h": Counter(w.task_id for w in recent.since(timedelta(hours=720))),
        "own_writes_31d": [w.model_dump() for w in mine],
        "rejections": history_for(approvals.all(), DOMAIN, NOW).rejected,
        "recently_rejected": [i.id for i in recently_rejected(approvals.all(), DOMAIN, NOW)],
    }


def test_every_authority_input_is_the_same_after_prune_and_after_a_rebuild(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    store = _history(memory)
    approvals = _reject(memory)
    before = _authority_inputs(store, approvals)
    assert len(before["own_writes_31d"]) == 6 and before["budget_24h"]["add_progress_event"] == 3
    assert len(before["deference_14d"]) == 4 and before["rejections"]

    done = prune(memory, DOMAIN, timedelta(days=31), NOW)
    assert done.segments > 0 and done.anchor is not None  # the 200-day-old segments went
    assert {r.run_id for r in store.scan(DOMAIN).records} >= {"status0", "recent2"}
    assert _authority_inputs(store, approvals) == before

    store.layout(DOMAIN).checkpoint.unlink()  # rebuilt from the anchor and the segments left
    assert store.open(DOMAIN).rebuilt is not None
    assert _authority_inputs(store, approvals) == before


@pytest.mark.parametrize("keep", ["36h", "30d", "4w"])
def test_a_keep_shorter_than_the_authority_window_is_refused_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, keep: str
) -> None:
    memory = tmp_path / "memory"
    store = _history(memory)
    files = sorted(p for p in memory.rglob("*") if p.is_file() and "locks" not in p.parts)
    argv = ["journal", "prune", "--domain", DOMAIN, "--keep", keep, "--memory", str(memory)]
    result = run_cli(argv, tmp_path, monkeypatch)
    assert result.code == 2
    assert f"--keep {keep.replace('4w', '28d')} is shorter than the 31 days" in result.stderr
    assert "CUSTODIAN_DEFER_DAYS" in result.stderr and "--keep 31d or more" in result.stderr
    assert sorted(p for p in memory.rglob("*") if p.is_file() and "locks" not in p.parts) == files
    with pytest.raises(PruneRefused):
        prune(memory, DOMAIN, timedelta(days=30, hours=23), NOW)
    assert store.open(DOMAIN).rebuilt is None
