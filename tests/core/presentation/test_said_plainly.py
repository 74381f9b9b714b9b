"""What a person reads says what happened in plain words: a create's title is not cut to one
character, a grant's write names its grant, a person's name keeps its letters, and only an
operation that runs on evidence is said to cite none."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

from custodian_hub import ReferenceHub
from custodian_runtime.audit.replay import in_todays_words
from custodian_runtime.core.approvals.items import WaitingBecause, new_item
from custodian_runtime.core.outcomes import ItemOutcome
from custodian_runtime.core.presentation.approval_text import list_lines
from custodian_runtime.core.presentation.display import item_line, status_change, why
from support.authority import NOW
from support.runs import plan_response, run_cli

TITLE = "Find the cause of the checkout p95 regression (1.1 s to 1.3 s)"


def test_a_listed_create_shows_its_target_then_its_title() -> None:
    item = new_item(
        approval_id="apr-c4a190ea-053e", domain="website", operation="create_task",
        params={"workstream_id": "web-ws-2", "status": "todo", "title": TITLE}, rationale="r",
        run_id="r1", fingerprint="c4a190ea" * 8, precondition={}, now=NOW, ttl_days=14,
    )  # fmt: skip
    head, _ = list_lines(item, "pending", NOW + timedelta(seconds=3))
    assert len(head) <= 100
    assert 'create_task  workstream_id=web-ws-2 title="Find the caus' in head


def test_a_run_line_names_the_grant_an_item_ran_under() -> None:
    ran = ItemOutcome(0, "create_task", "web-ws-2", "executed", "x", code="stated",
                      clause="executed (grant grant-0123456789ab), issued by ana: triage.",
                      grant="grant-0123456789ab")  # fmt: skip
    line = item_line(ran, title="Checkout performance", said="“Find the cause”")
    assert line.endswith(" [under grant-0123456789ab]") and len(line) <= 100
    plain = ItemOutcome(0, "add_progress_event", "web-t-1", "executed", "x", code="executes")
    assert "under" not in item_line(plain, title=None, said="“x”")


def test_a_clause_that_begins_with_a_name_keeps_its_letters() -> None:
    clause = "alex approved setting task t-1 to done at 2026-11-30T07:00:00Z (run r1)"
    deferred = ItemOutcome(0, "set_task_status", "t-1", "queued", "x", code="deferred",
                           clause=clause)  # fmt: skip
    assert why(deferred) == clause


def test_no_evidence_is_said_only_of_an_operation_that_runs_on_it() -> None:
    params = {"task_id": "t-1", "status": "blocked"}
    assert status_change("set_task_status", params, "in_progress", {}) == (
        "status in_progress → blocked"
    )
    done = {"task_id": "t-1", "status": "done"}
    assert status_change("update_task_status", done, "in_progress", {}).endswith(
        ", no evidence cited"
    )
    cited = {**params, "evidence": ["ev-1"]}
    assert status_change("set_task_status", cited, None, {}) == "status → blocked, evidence ev-1"


def test_approve_says_a_sentence_and_json_only_when_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    create = {"operation": "create_task", "rationale": "The FAQ is missing.",
              "params": {"workstream_id": "web-ws-1", "title": "Draft FAQ"}}  # fmt: skip
    other = {**create, "params": {"workstream_id": "web-ws-1", "title": "Draft terms"}}
    answer = tmp_path / "answer.md"
    answer.write_text(plan_response({"proposals": [create, other]}), "utf-8")
    memory = ["--memory", str(tmp_path / "memory")]
    argv = ["run", "--domain", "website", "--hub", small_hub.url, "--llm", f"file:{answer}"]
    summary = run_cli([*argv, *memory, "--json"], tmp_path, monkeypatch).json()
    first, second = (q["approval_id"] for q in summary["queued"])
    approve = ["approvals", "approve", first, "--by", "alex", "--hub", small_hub.url, *memory]
    said = run_cli(approve, tmp_path, monkeypatch)
    assert said.code == 0, said.stdout + said.stderr
    assert said.stdout.startswith(f"{first}: Approved by alex on ")
    assert "and executed; the hub answered hub id " in said.stdout and "{" not in said.stdout
    reject = ["approvals", "reject", second, "--by", "alex", "--reason", "later", "--json"]
    as_json = json.loads(run_cli([*reject, *memory], tmp_path, monkeypatch).stdout)
    assert as_json["exit_code"] == 0 and as_json["item"]["status"] == "rejected"
    assert as_json["message"].startswith(second) and as_json["item"]["decided_by"] == "alex"


def test_replay_reads_a_grants_older_words_as_the_same_decision() -> None:
    older = (
        "Plan item #0 (create_task) executes: executed (grant grant-0123456789ab), issued by "
        "ana: triage."
    )
    assert in_todays_words(older) == (
        "Plan item #0 (create_task) executes under grant grant-0123456789ab, issued by ana: triage."
    )
    denied = "Plan item #1 (create_task) is denied: a run may queue at most 2 proposals."
    assert in_todays_words(denied) == denied


def test_a_listed_item_says_the_kind_of_reason_it_waits_where_there_is_room() -> None:
    item = new_item(
        approval_id="apr-473f25d7-0c2b", domain="website", operation="set_task_status",
        params={"task_id": "web-t-23", "status": "blocked"}, rationale="no update for 41 days",
        run_id="r1", fingerprint="473f25d7" * 8, precondition={}, now=NOW, ttl_days=14,
        waiting=WaitingBecause(code="approvable", text="set_task_status always needs a person."),
    )  # fmt: skip
    _, second = list_lines(item, "pending", NOW)
    assert second == "    no update for 41 days  · waits: approvable"
    long = item.model_copy(update={"rationale": "why " * 40})
    _, cut = list_lines(long, "pending", NOW)
    assert len(cut) == 100 and cut.endswith("…") and "waits:" not in cut
    older = item.model_copy(update={"waiting_because": None})
    assert list_lines(older, "pending", NOW)[1] == "    no update for 41 days"
    for decided in ("executed", "rejected", "expired"):  # a decided item waits for nothing
        assert list_lines(item, decided, NOW)[1] == "    no update for 41 days", decided
