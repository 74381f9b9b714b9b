"""Every item is bound to where it came from: the hub it was observed on and the canon.

Two real hubs on loopback seeded with the same data: an item queued on one is refused on the
other (exit 2, nothing written), a write a killed run left on one is not re-sent to the other,
and a new-file write_canon approved with another --canon is refused. Creates carry a real
precondition too: the domain, and no open decision, workstream or task with the same title.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from custodian_hub import ReferenceHub, load_seed
from custodian_runtime.core.authority.authorize import authorize
from custodian_runtime.core.authority.precondition import precondition
from custodian_runtime.core.limits import Limits
from support.authority import plan_of, proposal, website
from support.runs import (
    CANON,
    CliResult,
    hub_get,
    plan_response,
    run_cli,
    run_plan,
    small_dataset,
    tree_digest,
)
from support.spine import (
    THREE_WRITES,
    WriteHold,
    finish,
    journal,
    kill_when_held,
    run_argv,
    start_run,
    write_plan,
)

CREATES = [
    {"operation": "create_task", "params": {"workstream_id": "web-ws-1", "title": "Add a sitemap"}},
    {"operation": "create_workstream", "params": {"domain": "website", "title": "Accessibility"}},
    {
        "operation": "record_decision",
        "params": {"title": "Which CMS?", "workstream_id": "web-ws-1"},
    },
    {"operation": "set_task_status", "params": {"task_id": "web-t-3", "status": "blocked"}},
]


@pytest.fixture
def other_hub(tmp_path: Path) -> Iterator[ReferenceHub]:
    """A second reference hub seeded with the same data (a staging copy)."""
    db = tmp_path / "other.sqlite3"
    load_seed(db, small_dataset())
    with ReferenceHub(db) as hub:
        yield hub


def _queue_all(tmp_path: Path, mp: pytest.MonkeyPatch, hub: ReferenceHub, canon: Path) -> Any:
    result = run_plan(
        tmp_path, mp, hub.url, {"proposals": CREATES}, "--force", "--json", canon=canon
    )
    assert result.code == 0, result.stderr
    return {q["operation"]: q["approval_id"] for q in result.json()["queued"]}


def _approve(
    tmp_path: Path, mp: pytest.MonkeyPatch, hub_url: str, canon: Path, approval_id: str
) -> CliResult:
    argv = ["approvals", "--memory", str(tmp_path / "memory"), "approve", approval_id]
    argv += ["--by", "ana", "--hub", hub_url]
    return run_cli(argv, tmp_path, mp, CUSTODIAN_CANON_DIR=str(canon))


def _hub_state(hub: ReferenceHub) -> str:
    return json.dumps(
        [hub_get(hub, "/domains/website/summary")["workstreams"],
         hub_get(hub, "/decisions?domain=website")], sort_keys=True,
    )  # fmt: skip


def _item(tmp_path: Path, approval_id: str) -> dict[str, Any]:
    path = tmp_path / "memory" / "approvals" / f"{approval_id}.json"
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def test_items_record_the_hub_without_userinfo_and_the_canon(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    queued = _queue_all(tmp_path, monkeypatch, small_hub, CANON)
    item = _item(tmp_path, queued["create_task"])
    assert item["hub"] == f"hub_id:{hub_get(small_hub, '/health')['hub_id']}"
    assert item["hub_at"] == small_hub.url.rstrip("/")
    assert item["canon"] == str(CANON.resolve())
    authorized = [r for r in journal(tmp_path / "memory") if r.kind == "authorized"]
    assert authorized == []  # nothing executed in this run; see the reconcile test below


@pytest.mark.parametrize("operation", [c["operation"] for c in CREATES])
def test_approving_on_another_hub_is_refused_and_writes_nothing(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    small_hub: ReferenceHub,
    other_hub: ReferenceHub,
    operation: str,
) -> None:
    approval_id = _queue_all(tmp_path, monkeypatch, small_hub, CANON)[operation]
    before, records = _hub_state(other_hub), len(journal(tmp_path / "memory"))
    item_before = _item(tmp_path, approval_id)
    refused = _approve(tmp_path, monkeypatch, other_hub.url, CANON, approval_id)
    assert refused.code == 2, refused.stdout + refused.stderr
    said = refused.stdout + refused.stderr
    hub_id = hub_get(small_hub, "/health")["hub_id"]
    assert f"proposed on hub hub_id:{hub_id}" in said and other_hub.url in said
    assert f"--hub {small_hub.url.rstrip('/')}" in said
    assert _hub_state(other_hub) == before
    assert len(journal(tmp_path / "memory")) == records
    assert _item(tmp_path, approval_id) == item_before  # still pending, for the right hub
    ok = _approve(tmp_path, monkeypatch, small_hub.url, CANON, approval_id)
    assert ok.code == 0, ok.stdout + ok.stderr


def test_a_new_canon_file_approved_with_another_canon_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    canon = tmp_path / "canon"
    shutil.copytree(CANON, canon)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    answer = tmp_path / "answer.md"
    write = {"operation": "write_canon", "params": {"path": "domains/new.md", "content": "x\n"}}
    answer.write_text(plan_response({"proposals": [write]}), encoding="utf-8")
    argv = ["run", "--domain", "website", "--hub", small_hub.url, "--llm", f"file:{answer}"]
    argv += ["--memory", str(tmp_path / "memory"), "--canon", str(canon), "--json"]
    (queued,) = run_cli(argv, tmp_path, monkeypatch).json()["queued"]
    refused = _approve(tmp_path, monkeypatch, small_hub.url, elsewhere, queued["approval_id"])
    assert refused.code == 2
    assert f"proposed for the canon {canon.resolve()}" in refused.stdout + refused.stderr
    assert tree_digest(elsewhere) == tree_digest(tmp_path / "nothing")
    assert _item(tmp_path, queued["approval_id"])["status"] == "pending"
    ok = _approve(tmp_path, monkeypatch, small_hub.url, canon, queued["approval_id"])
    assert ok.code == 0 and (canon / "domains" / "new.md").read_text() == "x\n"


def test_an_item_that_records_no_hub_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    approval_id = _queue_all(tmp_path, monkeypatch, small_hub, CANON)["create_task"]
    path = tmp_path / "memory" / "approvals" / f"{approval_id}.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    del data["hub"]
    path.write_text(json.dumps(data), encoding="utf-8")
    refused = _approve(tmp_path, monkeypatch, small_hub.url, CANON, approval_id)
    assert refused.code == 2 and "records no hub" in refused.stdout + refused.stderr


def test_a_killed_runs_write_is_not_resent_to_another_hub(
    tmp_path: Path, other_hub: ReferenceHub
) -> None:
    memory = tmp_path / "memory"
    hold = WriteHold(nth=1, phase="before_commit")
    db = tmp_path / "hub.sqlite3"
    load_seed(db, small_dataset())
    llm = write_plan(tmp_path / "answer.md", THREE_WRITES)
    with ReferenceHub(db, on_write=hold) as hub:
        kill_when_held(
            tmp_path, run_argv(hub.url, llm, memory), hold, "the run never reached the held write"
        )
        hold.release(abort=True)
        first_hub = hub.url
    (authorized,) = [r for r in journal(memory) if r.kind == "authorized"]
    assert authorized.data["hub_at"] == first_hub.rstrip("/")
    assert authorized.data["hub"].startswith("hub_id:")
    before, records = _hub_state(other_hub), len(journal(memory))
    code, _, err = finish(start_run(tmp_path, run_argv(other_hub.url, llm, memory, "--force")))
    assert code == 2, err
    assert f"add_progress_event on hub {authorized.data['hub']}, which is not settled" in err
    assert f"Run once against {first_hub.rstrip('/')} to settle it" in err
    assert _hub_state(other_hub) == before
    events = hub_get(other_hub, "/events?domain=website&limit=1000")["events"]
    assert [e for e in events if e["source"] == "custodian"] == []
    assert not [r for r in journal(memory)[records:] if r.kind in ("dispatched", "authorized")]


# --- creates carry a real precondition ------------------------------------------------------


def _rule(op: str, **params: Any) -> Any:
    (ruling,) = authorize(plan_of(proposals=[proposal(op, **params)]), website(), Limits())
    return ruling


def test_a_create_that_exists_already_is_denied() -> None:
    assert (
        "already has a task titled"
        in _rule("create_task", workstream_id="ws-web", title="task T-TODO.").reason
    )
    assert (
        "already has a workstream titled"
        in _rule("create_workstream", domain="website", title="Workstream ws-docs").reason
    )
    assert (
        "already has an open decision titled"
        in _rule("record_decision", title="Pick a host").reason
    )


def test_creates_store_the_domain_and_the_titles_they_must_not_meet() -> None:
    plan = plan_of(
        proposals=[
            proposal("create_workstream", domain="website", title="Docs"),
            proposal("create_task", workstream_id="ws-web", title="New"),
            proposal("record_decision", title="Which CMS?"),
        ]
    )
    ws, task, decision = (precondition(item, website()) for item in plan.items)
    assert ws == {"domain": {"id": "website"}, "same_title": []}
    assert task["workstream"]["id"] == "ws-web" and task["same_title"] == []
    assert decision == {"domain": {"id": "website"}, "same_title": []}


def test_the_hub_is_named_without_its_userinfo() -> None:
    from custodian_runtime.core.authority.origin import hub_identity_of

    assert hub_identity_of("http://ana:s3cret@Hub.Example:8765/") == "http://hub.example:8765"
    assert hub_identity_of("https://hub.example/api/") == "https://hub.example/api"
