"""The person's side of the queue, end to end: list, show, approve, reject, stale, expired."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from custodian_hub import ReferenceHub
from custodian_runtime.core.fold.api import Record
from support.review import CREATE_TASK, RESOLVE
from support.runs import CliResult, hub_get, run_cli, run_plan
from support.spine import journal

PROPOSALS = {"proposals": [CREATE_TASK, RESOLVE]}


def _approvals(tmp_path: Path, mp: pytest.MonkeyPatch, *args: str) -> CliResult:
    return run_cli(["approvals", "--memory", str(tmp_path / "memory"), *args], tmp_path, mp)


def _queued(result: CliResult) -> dict[str, str]:
    """Operation -> approval id of what a run queued."""
    return {q["operation"]: q["approval_id"] for q in result.json()["queued"]}


def _item(tmp_path: Path, approval_id: str) -> dict[str, Any]:
    path = tmp_path / "memory" / "approvals" / f"{approval_id}.json"
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def test_list_and_show_give_the_queue_in_text_and_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    run = run_plan(tmp_path, monkeypatch, small_hub.url, PROPOSALS, "--json")
    ids = _queued(run)
    listed = _approvals(tmp_path, monkeypatch, "list", "--json")
    assert listed.code == 0
    items = listed.json()
    assert {i["id"] for i in items} == set(ids.values())
    for item in items:
        assert {"id", "domain", "operation", "params", "status", "run_id", "created_at"} <= set(
            item
        )
        assert item["status"] == "pending" and item["run_id"] == run.json()["run_id"]
    text = _approvals(tmp_path, monkeypatch, "list")
    assert ids["create_task"] in text.stdout and "workstream_id=web-ws-1" in text.stdout
    assert "decision_id=dec-1" in text.stdout and "pending" in text.stdout
    shown = _approvals(tmp_path, monkeypatch, "show", ids["resolve_decision"], "--json")
    assert shown.code == 0
    assert json.loads(shown.stdout)["params"] == RESOLVE["params"]
    assert json.loads(shown.stdout)["precondition"]["decision"]["status"] == "open"
    as_text = _approvals(tmp_path, monkeypatch, "show", ids["resolve_decision"])
    assert as_text.code == 0 and "  decision_id: dec-1\n" in as_text.stdout
    assert "decision: id=dec-1 status=open" in as_text.stdout
    missing = _approvals(tmp_path, monkeypatch, "show", "apr-000000000000")
    assert missing.code == 2 and "approvals list" in missing.stderr


def test_approve_executes_once_through_the_hub_and_journals_the_chain(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    approval_id = _queued(run_plan(tmp_path, monkeypatch, small_hub.url, PROPOSALS, "--json"))[
        "create_task"
    ]
    ok = _approvals(
        tmp_path, monkeypatch, "approve", approval_id, "--by", "ana", "--hub", small_hub.url
    )
    assert ok.code == 0, ok.stderr
    titles = [t["title"] for ws in _summary_workstreams(small_hub) for t in ws["tasks"]]
    assert titles.count("Add a sitemap") == 1
    item = _item(tmp_path, approval_id)
    assert item["status"] == "executed" and item["decided_by"] == "ana"
    records = _approval_records(tmp_path, approval_id)
    kinds = [r.kind for r in records]
    assert kinds == ["approval_decided", "ruling", "authorized", "dispatched", "receipt"]
    assert records[1].data["outcome"] == "execute" and records[1].data["approval_id"] == approval_id
    assert records[2].data["by"] == "person:ana"
    assert records[4].data["hub_id"] == item["result"]["hub_id"]

    again = _approvals(
        tmp_path, monkeypatch, "approve", approval_id, "--by", "ana", "--hub", small_hub.url
    )
    assert again.code == 2 and "is executed, not pending" in again.stderr
    titles = [t["title"] for ws in _summary_workstreams(small_hub) for t in ws["tasks"]]
    assert titles.count("Add a sitemap") == 1
    inspected = run_cli(
        ["inspect", "--domain", "website", "--memory", str(tmp_path / "memory")],
        tmp_path,
        monkeypatch,
    )
    assert inspected.code == 0, inspected.stdout
    assert "replay: ok" in inspected.stdout


def _approval_records(tmp_path: Path, approval_id: str) -> list[Record]:
    """The journal records of every attempt to decide `approval_id`."""
    prefix = f"approval-{approval_id}-"
    return [r for r in journal(tmp_path / "memory") if r.run_id.startswith(prefix)]


def _summary_workstreams(hub: ReferenceHub) -> list[dict[str, Any]]:
    workstreams: list[dict[str, Any]] = hub_get(hub, "/domains/website/summary")["workstreams"]
    return workstreams


def test_a_changed_target_makes_the_item_stale_and_nothing_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    approval_id = _queued(run_plan(tmp_path, monkeypatch, small_hub.url, PROPOSALS, "--json"))[
        "resolve_decision"
    ]
    # A person settles the decision directly in the hub after the proposal was queued.
    response = httpx.post(
        f"{small_hub.url}/decisions/dec-1/resolve", json={"resolution": "B"}, timeout=5
    )
    assert response.status_code == 200, response.text
    stale = _approvals(
        tmp_path, monkeypatch, "approve", approval_id, "--by", "ana", "--hub", small_hub.url
    )
    assert stale.code == 1 and "stale" in stale.stdout
    decisions = hub_get(small_hub, "/decisions?domain=website")["decisions"]
    assert [d["resolution"] for d in decisions if d["id"] == "dec-1"] == ["B"]
    item = _item(tmp_path, approval_id)
    assert item["status"] == "stale"
    assert item["result"]["proposed_under"]["decision"]["status"] == "open"
    records = _approval_records(tmp_path, approval_id)
    assert [r.kind for r in records] == ["approval_decided", "ruling"]
    assert records[0].data["decision"] == "stale" and records[1].data["outcome"] == "deny"


def test_an_item_older_than_its_ttl_is_expired_and_cannot_be_approved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    approval_id = _queued(run_plan(tmp_path, monkeypatch, small_hub.url, PROPOSALS, "--json"))[
        "create_task"
    ]
    path = tmp_path / "memory" / "approvals" / f"{approval_id}.json"
    item = json.loads(path.read_text(encoding="utf-8"))
    created = datetime.now(UTC) - timedelta(days=15)
    item["created_at"] = created.isoformat()
    item["expires_at"] = (created + timedelta(days=14)).isoformat()
    path.write_text(json.dumps(item), encoding="utf-8")
    listed = _approvals(tmp_path, monkeypatch, "list", "--json", "--status", "expired")
    assert [i["id"] for i in listed.json()] == [approval_id]
    refused = _approvals(
        tmp_path, monkeypatch, "approve", approval_id, "--by", "ana", "--hub", small_hub.url
    )
    assert refused.code == 2 and "is expired, not pending" in refused.stderr
    assert _item(tmp_path, approval_id)["status"] == "expired"
    titles = [t["title"] for ws in _summary_workstreams(small_hub) for t in ws["tasks"]]
    assert "Add a sitemap" not in titles


def test_the_approval_ttl_comes_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    monkeypatch.setenv("CUSTODIAN_APPROVAL_TTL_DAYS", "3")
    approval_id = _queued(run_plan(tmp_path, monkeypatch, small_hub.url, PROPOSALS, "--json"))[
        "create_task"
    ]
    item = _item(tmp_path, approval_id)
    made, expires = (datetime.fromisoformat(item[k]) for k in ("created_at", "expires_at"))
    assert expires - made == timedelta(days=3)


def test_the_same_proposal_in_a_second_run_is_queued_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    first = _queued(run_plan(tmp_path, monkeypatch, small_hub.url, PROPOSALS, "--json"))
    second = run_plan(tmp_path, monkeypatch, small_hub.url, PROPOSALS, "--json", "--force")
    assert second.code == 0 and second.json()["queued"] == []
    reasons = [d["reason"] for d in second.json()["denied"]]
    assert any(f"already awaits approval as {first['create_task']}" in r for r in reasons)
    assert len(list((tmp_path / "memory" / "approvals").glob("*.json"))) == 2


def test_a_rejected_proposal_is_never_queued_again_and_the_next_prompt_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    approval_id = _queued(run_plan(tmp_path, monkeypatch, small_hub.url, PROPOSALS, "--json"))[
        "create_task"
    ]
    reason = "We drop the sitemap until the redesign ships."
    no = _approvals(tmp_path, monkeypatch, "reject", approval_id, "--by", "ben", "--reason", reason)
    assert no.code == 0, no.stderr
    assert _item(tmp_path, approval_id)["status"] == "rejected"
    shown = run_plan(
        tmp_path,
        monkeypatch,
        small_hub.url,
        PROPOSALS,
        "--json",
        "--dry-run",
        "--show-prompt",
        "--force",
    )
    assert shown.code == 0, shown.stderr
    prompt = shown.stderr  # with --json the prompt goes to stderr
    assert "Recently rejected proposals" in prompt and reason in prompt
    assert "Add a sitemap" in prompt
    again = run_plan(tmp_path, monkeypatch, small_hub.url, PROPOSALS, "--json", "--force")
    assert "create_task" not in _queued(again)
    assert any("a person rejected the same proposal" in d["reason"] for d in again.json()["denied"])
    ids = sorted(p.stem for p in (tmp_path / "memory" / "approvals").glob("*.json"))
    assert len(ids) == 2 and approval_id in ids
