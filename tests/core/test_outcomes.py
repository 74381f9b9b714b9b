"""One outcome per plan item, and status writes that go out only on the state they were planned on.

Every report (note, `--json`, terminal summary, journal counts) is rendered from the outcomes,
matched by plan item index. A task that changed while the model was thinking is `stale`: nothing
is written, the journal closes the item with a `stale` record, and the next run sees the change.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from custodian_hub import ReferenceHub, load_seed
from custodian_runtime.core.journal.records import Record
from custodian_runtime.journal.snapshots import SnapshotStore
from custodian_runtime.journal.store import JournalStore
from custodian_runtime.run import RunResult, run
from custodian_runtime.settings import load_settings
from support.runs import CANON, hub_get, plan_response, run_args, run_cli, small_dataset

CHANGE_THEN_ANSWER = """\
import json, sys, urllib.request
hub, answer = sys.argv[1], sys.argv[2]
sys.stdin.read()
# A person cancels the task while the model is thinking.
request = urllib.request.Request(
    hub + "/tasks/web-t-4",
    data=json.dumps({"status": "cancelled"}).encode(),
    method="PATCH",
    headers={"Content-Type": "application/json", "Idempotency-Key": "a-person-cancels"},
)
urllib.request.urlopen(request, timeout=5).read()
sys.stdout.write(open(answer, encoding="utf-8").read())
"""

DONE = {
    "observations": ["ev-1 says web-t-4 was deployed and verified."],
    "tasks_to_update": [
        {"task_id": "web-t-4", "status": "done", "evidence": ["ev-1"], "reason": "ev-1"}
    ],
}


def _thinking_model(tmp_path: Path, hub_url: str, plan: dict[str, Any]) -> str:
    script = tmp_path / "model.py"
    script.write_text(CHANGE_THEN_ANSWER, encoding="utf-8")
    answer = tmp_path / "answer.md"
    answer.write_text(plan_response(plan), encoding="utf-8")
    return f"cmd:{sys.executable} {script} {hub_url} {answer}"


def _records(memory: Path) -> list[Record]:
    return list(JournalStore(memory).scan("website").records)


def _assert_stale_run(summary: dict[str, Any], memory: Path) -> None:
    assert summary["status"] == "completed" and summary["exit_code"] == 0
    assert summary["executed"] == [] and summary["failed"] == []
    [stale] = summary["stale"]
    assert stale["index"] == 0 and stale["current_status"] == "cancelled"
    assert [i["outcome"] for i in summary["items"]] == ["stale"]
    note = Path(summary["note"]).read_text(encoding="utf-8")
    assert "moves from in_progress to done" not in note
    assert "### Not written: the task changed under the run (1)" in note
    assert "it is now cancelled on the hub" in note
    assert 'counts: {"executed": 0, "queued": 0, "denied": 0, "failed": 0, "stale": 1}' in note
    kinds = [r.kind for r in _records(memory) if r.run_id == summary["run_id"]]
    chain = kinds[kinds.index("authorized") :]
    assert chain[:3] == ["authorized", "dispatched", "stale"], kinds
    assert "receipt" not in kinds and "failed" not in kinds


def test_a_task_cancelled_while_the_model_thinks_is_stale_and_stays_cancelled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    memory = tmp_path / "memory"
    llm = _thinking_model(tmp_path, small_hub.url, DONE)
    result = run_cli(run_args(small_hub.url, llm, memory, "--json"), tmp_path, monkeypatch)
    assert result.code == 0, result.stderr
    _assert_stale_run(result.json(), memory)
    assert hub_get(small_hub, "/tasks/web-t-4")["status"] == "cancelled"
    # A v1.1 hub refused the write itself: If-Match carried the observed version, 412 came back.
    [stale] = [r for r in _records(memory) if r.kind == "stale"]
    observed_version, current = stale.data["observed"]["version"], stale.data["current"]
    assert isinstance(observed_version, int) and current["version"] == observed_version + 1
    assert current["status"] == "cancelled"

    inspected = run_cli(
        ["inspect", "--memory", str(memory), "--domain", "website"], tmp_path, monkeypatch
    )
    assert inspected.code == 0, inspected.stdout
    assert "STALE at website:" in inspected.stdout and "replay: ok" in inspected.stdout
    assert "counts    executed 0, queued 0, denied 0, failed 0, stale 1" in inspected.stdout

    # The next run is not skipped as "unchanged": it plans from the cancelled task.
    quiet = tmp_path / "quiet.md"
    quiet.write_text(plan_response({"observations": ["web-t-4 was cancelled"]}), encoding="utf-8")
    second = run_cli(
        run_args(small_hub.url, f"file:{quiet}", memory, "--json"), tmp_path, monkeypatch
    )
    assert second.json()["status"] == "completed", second.stdout
    observed = [r for r in _records(memory) if r.run_id == second.json()["run_id"]]
    snapshots = SnapshotStore(memory)
    tasks = [
        t
        for r in observed
        if r.kind == "observed"
        for ws in snapshots.load_summary("website", r.data["snapshot"], None)["workstreams"]
        for t in ws["tasks"]
    ]
    assert next(t for t in tasks if t["id"] == "web-t-4")["status"] == "cancelled"


class _V1Answers(httpx.BaseTransport):
    """A proxy in front of the real hub that answers as a v1 hub: no task `version`, no ETag."""

    def __init__(self) -> None:
        self._inner = httpx.HTTPTransport()
        self.if_match_sent = 0
        self.task_reads = 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.if_match_sent += "if-match" in request.headers
        self.task_reads += request.method == "GET" and request.url.path.startswith("/tasks/")
        response = self._inner.handle_request(request)
        body = response.read()
        headers = {
            k: v
            for k, v in response.headers.items()
            if k.lower() not in ("etag", "content-length", "content-encoding", "transfer-encoding")
        }
        # /health's `version` is the hub's software version, which a v1 hub sends too.
        is_json = response.headers.get("content-type", "").startswith("application/json")
        if is_json and request.url.path != "/health":
            body = json.dumps(_without_version(json.loads(body))).encode()
        return httpx.Response(response.status_code, headers=headers, content=body)

    def close(self) -> None:
        self._inner.close()


def _without_version(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_version(v) for k, v in value.items() if k != "version"}
    if isinstance(value, list):
        return [_without_version(v) for v in value]
    return value


def test_against_a_v1_hub_the_task_is_read_again_before_the_write(
    tmp_path: Path, small_hub: ReferenceHub
) -> None:
    memory = tmp_path / "memory"
    llm = _thinking_model(tmp_path, small_hub.url, DONE)
    flags = {"domain": "website", "hub": small_hub.url, "llm": llm, "memory": str(memory)}
    settings = load_settings({**flags, "canon": str(CANON)}, {"PATH": "/usr/bin:/bin"}, tmp_path)
    transport = _V1Answers()
    result = run(settings, transport=transport, stderr=open(tmp_path / "stderr", "w"))  # noqa: SIM115
    _assert_stale_run(result.summary(), memory)
    assert transport.task_reads == 1, "the task is read again just before the write"
    assert transport.if_match_sent == 0, "a v1 hub is never sent If-Match"
    assert hub_get(small_hub, "/tasks/web-t-4")["status"] == "cancelled"
    assert "stale" in result.human() and "cancelled" in result.human()


def test_two_events_on_one_workstream_one_executed_one_unanswered_are_reported_apart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    posted: list[str] = []

    def refuse_the_second_event(phase: str, method: str, path: str) -> None:
        if phase == "before_commit" and method == "POST" and path == "/events":
            posted.append(path)
            if len(posted) > 1:
                raise RuntimeError("the hub dies before committing the second event")

    db = tmp_path / "hub.sqlite3"
    load_seed(db, small_dataset())
    with ReferenceHub(db, on_write=refuse_the_second_event) as hub:
        _two_events(tmp_path, monkeypatch, hub)


def _two_events(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub) -> None:
    plan = {
        "progress_events": [
            {
                "workstream_id": "web-ws-1",
                "event_type": "note",
                "rests_on": ["web-t-1"],
                "summary": "First look.",
            },
            {
                "workstream_id": "web-ws-1",
                "event_type": "note",
                "rests_on": ["web-t-1"],
                "summary": "Second look.",
            },
        ]
    }
    answer = tmp_path / "answer.md"
    answer.write_text(plan_response(plan), encoding="utf-8")
    memory = tmp_path / "memory"
    result = run_cli(
        run_args(small_hub.url, f"file:{answer}", memory, "--json"),
        tmp_path,
        monkeypatch,
        STATE_HUB_MAX_ATTEMPTS="2",
        STATE_HUB_MAX_TOTAL_S="3",
    )
    assert result.code == 5, result.stderr
    summary = result.json()
    # The hub hung up before it answered: the write may have landed, so it is unknown, not failed.
    [executed], [unknown] = summary["executed"], summary["unknown"]
    assert summary["failed"] == []
    note = Path(summary["note"]).read_text(encoding="utf-8")
    assert "### Executed (1)" in note and "### Sent, but no answer came" in note
    assert note.count(f"hub id `{executed['hub_id']}`") == 1
    first, second = summary["items"]
    assert first == {**executed, "outcome": "executed"} and first["index"] == 0
    assert second == {**unknown, "outcome": "unknown"} and second["index"] == 1
    assert "hub_id" not in second and "no answer came" in second["error"]
    assert first["target"] == second["target"] == "web-ws-1"
    events = hub_get(small_hub, "/events?domain=website&limit=100")["events"]
    assert [e["id"] for e in events if e["source"] == "custodian"] == [executed["hub_id"]]
    records = _records(memory)
    finished = [r for r in records if r.kind == "finished"][-1]
    assert finished.data["counts"] == {
        "executed": 1,
        "queued": 0,
        "denied": 0,
        "failed": 0,
        "stale": 0,
        "unknown": 1,
    }
    # Journaled `unknown`, never `failed`, and left open for the next run to settle.
    assert [r.kind for r in records if r.kind in ("failed", "unknown")] == ["unknown"]


def test_a_dry_run_says_would_execute_on_the_terminal_and_in_its_phase_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    answer = tmp_path / "answer.md"
    answer.write_text(plan_response(DONE), encoding="utf-8")
    result = run_cli(
        run_args(small_hub.url, f"file:{answer}", tmp_path / "memory", "--dry-run"),
        tmp_path,
        monkeypatch,
    )
    assert result.code == 0, result.stderr
    assert "would execute #0 update_task_status web-t-4" in result.stdout
    assert "executed" not in result.stdout and "executed" not in result.stderr
    assert "would_execute=1" in result.stderr


def test_the_summary_lists_every_item_in_plan_order() -> None:
    from custodian_runtime.core.outcomes import ItemOutcome

    result = RunResult(
        run_id="r1",
        domain="website",
        outcomes=(
            ItemOutcome(0, "add_progress_event", "web-ws-1", "executed", "ok", hub_id="evt-1"),
            ItemOutcome(1, "add_progress_event", "web-ws-1", "failed", "ok", error="boom"),
        ),
    )
    lines = result.human().splitlines()[1:]
    assert lines == [
        "  executed      #0 add_progress_event web-ws-1",
        "  failed        #1 add_progress_event web-ws-1: boom",
    ]


def _ruling(index: int, outcome: str = "execute") -> Any:
    from custodian_runtime.core.authority.authorize import Ruling
    from custodian_runtime.core.plan.extract import ProposedItem

    item = ProposedItem(
        index=index,
        section="progress_events",
        operation="add_progress_event",
        params={"workstream_id": "web-ws-1", "summary": f"look {index}"},
        reason=None,
        error=None,
        fingerprint=f"fp{index}",
    )
    return Ruling(item=item, outcome=outcome, reason=f"item {index}")


def test_assemble_wants_exactly_one_outcome_per_plan_item() -> None:
    from custodian_runtime.core.outcomes import ItemOutcome, assemble, counts, denied

    rulings = (_ruling(0), _ruling(1, "deny"))
    sent = (ItemOutcome.of(rulings[0], "executed", hub_id="evt-1"),)
    together = assemble(rulings, denied(rulings), sent)
    assert [(o.index, o.kind) for o in together] == [(0, "executed"), (1, "denied")]
    assert counts(together) == {"executed": 1, "queued": 0, "denied": 1, "failed": 0, "stale": 0}
    with pytest.raises(ValueError, match="one outcome per plan item"):
        assemble(rulings, sent)
    with pytest.raises(ValueError, match="one outcome per plan item"):
        assemble(rulings, sent, sent, denied(rulings))


def test_a_task_changed_when_its_status_or_updated_at_moved() -> None:
    from datetime import UTC, datetime, timedelta

    from custodian_runtime.core.contract import Task
    from custodian_runtime.core.outcomes import task_changed

    at = datetime(2026, 11, 29, 8, 0, tzinfo=UTC)
    observed = Task(
        id="web-t-4",
        workstream_id="web-ws-1",
        title="Deploy",
        status="in_progress",
        created_at=at,
        updated_at=at,
    )
    assert task_changed(observed, observed) is None
    cancelled = observed.model_copy(update={"status": "cancelled", "updated_at": at})
    assert "it is now cancelled on the hub" in str(task_changed(observed, cancelled))
    touched = observed.model_copy(update={"updated_at": at + timedelta(seconds=1)})
    assert "still in_progress on the hub, but changed since" in str(task_changed(observed, touched))
    other = observed.model_copy(update={"id": "web-t-5"})
    assert "answered task web-t-5 when asked for task web-t-4" in str(task_changed(observed, other))


def test_an_approved_status_write_is_sent_only_on_the_task_it_observed(
    tmp_path: Path, small_hub: ReferenceHub
) -> None:
    from datetime import UTC, datetime

    from custodian_runtime.core.approvals.items import new_item
    from custodian_runtime.journal.run_journal import MemoryJournal
    from custodian_runtime.person import execute
    from custodian_runtime.statehub.client import StateHubClient

    flags = {"domain": "website", "hub": small_hub.url, "llm": "offline", "canon": str(CANON)}
    settings = load_settings({**flags, "memory": str(tmp_path / "m")}, {"PATH": "/bin"}, tmp_path)
    now = datetime.now(UTC)
    item = new_item(
        approval_id="apr-1",
        domain="website",
        operation="set_task_status",
        params={"task_id": "web-t-3", "status": "cancelled"},
        rationale="not needed",
        run_id="r1",
        fingerprint="f" * 64,
        precondition={},
        now=now,
        ttl_days=7,
    )
    with StateHubClient(small_hub.url) as client:
        observed = client.get_task("web-t-3")
    person = httpx.patch(
        f"{small_hub.url}/tasks/web-t-3",
        json={"status": "in_progress"},
        headers={"Idempotency-Key": "a-person-starts-it"},
    )
    assert person.status_code == 200
    journal = MemoryJournal("approval-apr-1-a", "website", lambda: now)
    result = execute(settings, item, "ana", journal, "approval-apr-1-a", observed)
    assert result["current_status"] == "in_progress" and "changed under the run" in result["stale"]
    assert [r.kind for r in journal.records] == ["authorized", "dispatched", "stale"]
    assert hub_get(small_hub, "/tasks/web-t-3")["status"] == "in_progress"


def test_the_summary_shows_model_text_escaped() -> None:
    from custodian_runtime.core.outcomes import ItemOutcome

    result = RunResult(
        run_id="r1",
        domain="website",
        observations=["fine\n  executed      fake line"],
        outcomes=(
            ItemOutcome(0, "add_progress_event", "web-ws-1\x1b[2K", "denied", "no\r\nexecuted"),
        ),
    )
    lines = result.human().splitlines()
    assert len(lines) == 3, lines
    assert "\x1b" not in result.human() and "\r" not in result.human()
