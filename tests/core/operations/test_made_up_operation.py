"""A made-up operation, registered by the test alone, goes through every part of the runtime.

`add_comment` is approvable and posts a note event through the hub's existing `POST /events`.
Nothing else is edited: the plan, the authority, the prompt, the journal, the note, the review
page, `approvals approve` (the in-process CLI), reconcile and eval all read it from its spec.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import BaseModel, ConfigDict

from custodian_hub import ReferenceHub
from custodian_runtime.core import contract, operations
from custodian_runtime.core.contract import DomainSummary, Id, ShortText
from custodian_runtime.core.operations import OWN_SOURCE, Landing, Lookup, OperationSpec
from custodian_runtime.core.ruling.reconcile import reconcile_step
from custodian_runtime.core.ruling.spine import PendingWrite
from custodian_runtime.core.view import with_run_mark
from support.review import review_page, review_settings
from support.runs import CANON, hub_get, plan_response, run_args, run_cli, small_dataset
from support.spine import journal

TEXT = "Needs a second reviewer before launch"


class AddComment(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    workstream_id: Id
    task_id: Id
    text: ShortText


def _call(client: Any, p: Any, run_id: str, key: str) -> Any:
    summary = with_run_mark(f"Comment: {p['text']}", run_id)
    body = contract.NewEvent(
        workstream_id=p["workstream_id"],
        task_id=p["task_id"],
        event_type="note",
        summary=summary,
        source=OWN_SOURCE,
    )
    return client.add_event(body, idempotency_key=key)


def _landed(p: Any, landing: Landing) -> str | None:
    for event in (*landing.events, *landing.view.events):
        if event.task_id == p["task_id"] and f"Comment: {p['text']}" in event.summary:
            return event.id
    return None


def _describe(p: Any, lookup: Lookup) -> str:
    return f"Comment on {lookup.named('task', p['task_id'])}: “{p['text']}”"


ADD_COMMENT = OperationSpec(
    name="add_comment",
    section="proposals",
    params=AddComment,
    default="approvable",
    fields="{workstream_id, task_id, text}",
    request="POST /events",
    landed=_landed,
    describe=_describe,
    call=_call,
    targets=("task_id", "workstream_id"),
)
PARAMS = {"workstream_id": "web-ws-1", "task_id": "web-t-3", "text": TEXT}
PROPOSAL = {"operation": "add_comment", "params": PARAMS, "rationale": "launch checklist"}


@pytest.fixture
def add_comment() -> Iterator[OperationSpec]:
    with operations.register(ADD_COMMENT) as spec:
        yield spec


def _answer(tmp_path: Path) -> str:
    answer = tmp_path / "answer.md"
    answer.write_text(plan_response({"proposals": [PROPOSAL]}), "utf-8")
    return f"file:{answer}"


def _run_add_comment(tmp_path: Path, mp: pytest.MonkeyPatch, hub: ReferenceHub, *extra: str) -> Any:
    argv = run_args(hub.url, _answer(tmp_path), tmp_path / "memory", "--json", *extra)
    return run_cli(argv, tmp_path, mp)


def _page(memory: Path, hub: ReferenceHub, cwd: Path) -> str:
    settings = review_settings(memory, hub.url, cwd)
    with review_page(settings) as server, httpx.Client(timeout=10) as browser:
        assert browser.get(server.url, follow_redirects=True).status_code == 200
        return browser.get(f"http://{server.address}/approvals").text


def test_a_made_up_operation_is_planned_queued_approved_reconciled_and_scored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub, add_comment: Any
) -> None:
    dry = _run_add_comment(tmp_path, monkeypatch, small_hub, "--dry-run", "--show-prompt")
    assert dry.code == 0, dry.stderr
    assert "- `add_comment` {workstream_id, task_id, text}" in dry.stderr  # the prompt offers it
    assert [i["operation"] for i in dry.json()["would_queue"]] == ["add_comment"]

    result = _run_add_comment(tmp_path, monkeypatch, small_hub)
    assert result.code == 0, result.stderr
    (queued,) = result.json()["queued"]
    assert (queued["operation"], queued["target"]) == ("add_comment", "web-t-3")
    memory = tmp_path / "memory"
    rulings = [r.data for r in journal(memory) if r.kind == "ruling"]
    assert [(r["operation"], r["outcome"]) for r in rulings] == [("add_comment", "queue")]
    (note,) = (memory / "working").glob("*-website.md")
    assert "add_comment" in note.read_text("utf-8") and TEXT in note.read_text("utf-8")

    page = _page(memory, small_hub, tmp_path)
    assert f'data-approval-id="{queued["approval_id"]}"' in page and "add_comment" in page
    verdict = re.search(r"the authority rules: <strong>([^<]*)</strong>", page)
    assert verdict is not None, page
    assert verdict.group(1) == "would run"

    approve = ["approvals", "--memory", str(memory), "approve", queued["approval_id"], "--by"]
    done = run_cli([*approve, "ana", "--hub", small_hub.url], tmp_path, monkeypatch)
    assert done.code == 0, done.stderr
    events = hub_get(small_hub, "/events?task_id=web-t-3")["events"]
    (made,) = [e for e in events if f"Comment: {TEXT}" in e["summary"]]
    assert made["source"] == OWN_SOURCE
    item = json.loads((memory / "approvals" / f"{queued['approval_id']}.json").read_text("utf-8"))
    assert (item["status"], item["result"]["hub_id"]) == ("executed", made["id"])

    # Reconcile of a killed approval finds the comment on the hub and sends nothing again.
    observed = DomainSummary.model_validate(hub_get(small_hub, "/domains/website/summary"))
    killed = PendingWrite("r-killed", 0, "add_comment", PARAMS, "k", "f" * 64, 1, True)
    step = reconcile_step(killed, observed, (), datetime.now(UTC))
    assert (step.action, step.hub_id) == ("found", made["id"])
    lookup = Lookup("website", titles={"web-t-3": "Write launch announcement"})
    assert operations.describe("add_comment", PARAMS, lookup) == (
        f"Comment on task web-t-3 ‘Write launch announcement’: “{TEXT}”"
    )


def test_eval_scores_a_made_up_operation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, add_comment: Any
) -> None:
    scenarios = tmp_path / "scenarios"
    scenarios.mkdir()
    scenario = {
        "description": "A comment a person approves.",
        "category": "made-up",
        "domain": "website",
        "now": datetime.now(UTC).isoformat(),
        "seed": small_dataset(),
        "expectations": [
            {"kind": "must_queue", "operation": "add_comment", "mentioning": "web-t-3"},
            {"kind": "nothing_executes"},
        ],
    }
    (scenarios / "comment.json").write_text(json.dumps(scenario), "utf-8")
    argv = ["eval", "--llm", _answer(tmp_path), "--scenarios", str(scenarios), "--json"]
    result = run_cli([*argv, "--canon", str(CANON)], tmp_path, monkeypatch)
    assert result.code == 0, result.stdout + result.stderr
    assert '"add_comment"' in result.stdout and "would_queue" in result.stdout
