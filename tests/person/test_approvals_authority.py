"""Approve goes through the one authority: the approval file is evidence, the hub is the truth.

Hole 2: a queued item edited by hand (params, status, precondition, fingerprint) is refused,
marked failed with the reason, writes nothing, and its approval run does not replay as a clean
write. Hole 6: a second approval of an equal proposal is a new write with its own hub key.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from custodian_hub import ReferenceHub
from custodian_runtime.clock import simulated_clock
from custodian_runtime.core.limits import Limits
from custodian_runtime.core.plan.extract import fingerprint
from support.runs import CliResult, hub_get, run_cli, run_plan
from support.spine import journal

BLOCK = {"tasks_to_update": [{"task_id": "web-t-3", "status": "blocked", "reason": "waits"}]}


def _queue(tmp_path: Path, mp: pytest.MonkeyPatch, hub: ReferenceHub) -> str:
    [queued] = run_plan(tmp_path, mp, hub.url, BLOCK, "--json", "--force").ok().json()["queued"]
    assert queued["operation"] == "set_task_status"
    return str(queued["approval_id"])


def _approve(tmp_path: Path, mp: pytest.MonkeyPatch, hub: ReferenceHub, aid: str) -> CliResult:
    argv = ["approvals", "--memory", str(tmp_path / "memory"), "approve", aid, "--by", "ana"]
    return run_cli([*argv, "--hub", hub.url], tmp_path, mp)


def _file(tmp_path: Path, aid: str) -> Path:
    return tmp_path / "memory" / "approvals" / f"{aid}.json"


def _edit(tmp_path: Path, aid: str, **changes: Any) -> None:
    """Rewrite fields of a queued item by hand, as someone with access to the queue could."""
    path = _file(tmp_path, aid)
    item = json.loads(path.read_text(encoding="utf-8"))
    item.update(changes)
    path.write_text(json.dumps(item), encoding="utf-8")


def _item(tmp_path: Path, aid: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(_file(tmp_path, aid).read_text(encoding="utf-8"))
    return data


OTHER = {"task_id": "plat-t-1", "status": "cancelled"}
TAMPERING: dict[str, dict[str, Any]] = {
    "other-domain-empty-precondition": {"params": OTHER, "precondition": {}},
    "other-domain-refingerprinted": {
        "params": OTHER,
        "precondition": {},
        "fingerprint": fingerprint("set_task_status", OTHER),
    },
    "status-only-old-fingerprint": {"params": {"task_id": "web-t-3", "status": "cancelled"}},
    "precondition-emptied": {"precondition": {}},
}


@pytest.mark.parametrize("case", list(TAMPERING))
def test_an_edited_item_is_failed_with_the_reason_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub, case: str
) -> None:
    aid = _queue(tmp_path, monkeypatch, small_hub)
    _edit(tmp_path, aid, **TAMPERING[case])
    before = {t: hub_get(small_hub, f"/tasks/{t}")["status"] for t in ("web-t-3", "plat-t-1")}

    result = _approve(tmp_path, monkeypatch, small_hub, aid)
    assert result.code == 2, (result.stdout, result.stderr)
    assert "refused" in result.stdout
    after = {t: hub_get(small_hub, f"/tasks/{t}")["status"] for t in ("web-t-3", "plat-t-1")}
    assert after == before == {"web-t-3": "todo", "plat-t-1": "todo"}
    item = _item(tmp_path, aid)
    assert item["status"] == "failed" and item["result"]["error"]
    records = [r for r in journal(tmp_path / "memory") if r.run_id.startswith(f"approval-{aid}")]
    kinds = [r.kind for r in records]
    assert kinds == ["approval_decided", "ruling"] and records[1].data["outcome"] == "deny"
    assert records[0].data["decision"] == "refused"
    inspected = run_cli(
        ["inspect", records[0].run_id, "--memory", str(tmp_path / "memory")], tmp_path, monkeypatch
    )
    assert "DENIED" in inspected.stdout and "receipt at" not in inspected.stdout
    # The replay names the edited item: the approval run is not a clean record.
    assert inspected.code == 6 and "the approved item was edited" in inspected.stdout


def test_an_untouched_item_still_executes_and_replays_ok(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    aid = _queue(tmp_path, monkeypatch, small_hub)
    result = _approve(tmp_path, monkeypatch, small_hub, aid)
    assert result.code == 0, result.stderr
    assert hub_get(small_hub, "/tasks/web-t-3")["status"] == "blocked"
    records = [r for r in journal(tmp_path / "memory") if r.run_id.startswith(f"approval-{aid}")]
    kinds = [r.kind for r in records]
    assert kinds == ["approval_decided", "ruling", "authorized", "dispatched", "receipt"]
    inspected = run_cli(
        ["inspect", "--domain", "website", "--memory", str(tmp_path / "memory")],
        tmp_path,
        monkeypatch,
    )
    assert inspected.code == 0 and inspected.stdout.rstrip().endswith("replay: ok")


def test_a_second_approval_of_an_equal_proposal_is_a_new_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    first = _queue(tmp_path, monkeypatch, small_hub)
    assert _approve(tmp_path, monkeypatch, small_hub, first).code == 0
    assert hub_get(small_hub, "/tasks/web-t-3")["status"] == "blocked"
    # Another person resets the task; past the deference window (within it, their reset holds
    # the proposal), the same proposal comes back and is approved again.
    reset = httpx.patch(f"{small_hub.url}/tasks/web-t-3", json={"status": "todo"}, timeout=5)
    assert reset.status_code == 200, reset.text
    later = datetime.now(UTC) + timedelta(days=Limits().defer_days + 1)
    with simulated_clock(lambda: later):
        second = _queue(tmp_path, monkeypatch, small_hub)
    assert second != first
    assert _item(tmp_path, second)["fingerprint"] == _item(tmp_path, first)["fingerprint"]

    with simulated_clock(lambda: later):
        result = _approve(tmp_path, monkeypatch, small_hub, second)
    assert result.code == 0, result.stderr
    assert "executed" in result.stdout
    assert hub_get(small_hub, "/tasks/web-t-3")["status"] == "blocked"
    records = journal(tmp_path / "memory")
    keys = {
        aid: [r.data["idempotency_key"] for r in records if r.kind == "authorized"
              and r.run_id.rsplit("-", 1)[0] == f"approval-{aid}"]
        for aid in (first, second)
    }  # fmt: skip
    assert len(keys[first]) == len(keys[second]) == 1 and keys[first] != keys[second]
    assert second in keys[second][0]
    [receipt] = [
        r for r in records if r.kind == "receipt" and r.run_id.startswith(f"approval-{second}-")
    ]
    assert receipt.data["replayed"] is False
