"""Finding 3: keys are unique per authorization, so an equal proposal approved again really runs.

Every authorization draws a random nonce (journaled in its `authorized` record) that ends its hub
key. With the queue moved aside or an executed item's file deleted, the same proposal gets a new
approval id and a new key, and the hub really executes it. A replayed answer to a key this memory
never sent before is a failure, never `executed`.
"""

from __future__ import annotations

import io
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from custodian_hub import ReferenceHub
from custodian_runtime.clock import simulated_clock
from custodian_runtime.core.limits import Limits
from custodian_runtime.run import run
from custodian_runtime.settings import load_settings
from support.runs import CANON, CliResult, hub_get, plan_response, run_cli, run_plan
from support.spine import journal

BLOCK = {"tasks_to_update": [{"task_id": "web-t-3", "status": "blocked", "reason": "waits"}]}
EVENT = {
    "progress_events": [
        {
            "workstream_id": "web-ws-1",
            "event_type": "note",
            "rests_on": ["web-t-1"],
            "summary": "Looked at the CDN.",
        }
    ]
}


def _queue(tmp_path: Path, mp: pytest.MonkeyPatch, hub: ReferenceHub) -> str:
    [queued] = run_plan(tmp_path, mp, hub.url, BLOCK, "--json", "--force").ok().json()["queued"]
    return str(queued["approval_id"])


def _approve(tmp_path: Path, mp: pytest.MonkeyPatch, hub: ReferenceHub, aid: str) -> CliResult:
    argv = ["approvals", "--memory", str(tmp_path / "memory"), "approve", aid, "--by", "ana"]
    return run_cli([*argv, "--hub", hub.url], tmp_path, mp)


def _authorized(memory: Path, aid: str) -> list[dict[str, Any]]:
    return [
        r.data
        for r in journal(memory)
        if r.kind == "authorized" and r.run_id.startswith(f"approval-{aid}-")
    ]


def _set_aside(tmp_path: Path, aid: str, how: str) -> None:
    approvals = tmp_path / "memory" / "approvals"
    if how == "queue-moved-aside":
        shutil.move(approvals, tmp_path / "approvals-old")
    else:
        (approvals / f"{aid}.json").unlink()


@pytest.mark.parametrize("how", ["queue-moved-aside", "executed-file-deleted"])
def test_the_same_proposal_approved_again_after_a_reset_really_executes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub, how: str
) -> None:
    memory = tmp_path / "memory"
    first = _queue(tmp_path, monkeypatch, small_hub)
    assert _approve(tmp_path, monkeypatch, small_hub, first).code == 0
    blocked = hub_get(small_hub, "/tasks/web-t-3")
    assert blocked["status"] == "blocked"
    # A person sets the task back; the queue no longer remembers the first approval.
    reset = httpx.patch(f"{small_hub.url}/tasks/web-t-3", json={"status": "todo"}, timeout=5)
    assert reset.status_code == 200, reset.text
    _set_aside(tmp_path, first, how)

    # Within the deference window her reset holds the same proposal (it is not asked again), so
    # it comes back once the window has passed; its authorization still gets a key of its own.
    later = datetime.now(UTC) + timedelta(days=Limits().defer_days + 1)
    with simulated_clock(lambda: later):
        second = _queue(tmp_path, monkeypatch, small_hub)
        assert second != first and second.startswith("apr-") and second[:12] == first[:12]
        result = _approve(tmp_path, monkeypatch, small_hub, second)
    assert result.code == 0, (result.stdout, result.stderr)
    assert result.stdout.startswith(f"{second}: Approved by ") and "and executed" in result.stdout
    # The hub really changed: the status is blocked again, at a newer version.
    now = hub_get(small_hub, "/tasks/web-t-3")
    assert now["status"] == "blocked" and now["version"] > reset.json()["version"]
    [one], [two] = _authorized(memory, first), _authorized(memory, second)
    assert one["idempotency_key"] != two["idempotency_key"]
    for data in (one, two):
        assert data["nonce"] and data["idempotency_key"].endswith(f"-{data['nonce']}")
    [receipt] = [
        r
        for r in journal(memory)
        if r.kind == "receipt" and r.run_id.startswith(f"approval-{second}")
    ]
    assert receipt.data["replayed"] is False


class _ForgedReplay(httpx.BaseTransport):
    """In front of the real hub: every write's answer claims `Idempotent-Replayed: true`."""

    def __init__(self) -> None:
        self._inner = httpx.HTTPTransport()
        self.forged = 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self._inner.handle_request(request)
        body = response.read()
        if request.method == "GET":
            return httpx.Response(response.status_code, headers=response.headers, content=body)
        self.forged += 1
        headers = {k: v for k, v in response.headers.items() if k.lower() != "content-length"}
        headers["Idempotent-Replayed"] = "true"
        return httpx.Response(response.status_code, headers=headers, content=body)

    def close(self) -> None:
        self._inner.close()


def test_a_replayed_answer_to_a_key_never_sent_is_a_failure_not_executed(
    tmp_path: Path, small_hub: ReferenceHub
) -> None:
    memory = tmp_path / "memory"
    answer = tmp_path / "answer.md"
    answer.write_text(plan_response(EVENT), encoding="utf-8")
    flags = {"domain": "website", "hub": small_hub.url, "llm": f"file:{answer}"}
    flags |= {"memory": str(memory), "canon": str(CANON), "force": True}
    transport = _ForgedReplay()
    result = run(load_settings(flags, {}, tmp_path), transport=transport, stderr=io.StringIO())
    assert transport.forged == 1
    summary = result.summary()
    assert result.exit_code == 5 and summary["executed"] == []
    [failed] = summary["failed"]
    assert "replayed an earlier answer" in failed["error"] and "never sent" in failed["error"]
    [record] = [r for r in journal(memory) if r.kind == "failed"]
    assert record.data["code"] == "replayed_unknown_key"
    assert not [r for r in journal(memory) if r.kind == "receipt"]
