"""Approved items that cannot run are refused before anything is authorized or written.

Canon writes stay inside the canon directory: an absolute path, a `..` component or a symlink
planted inside the canon that points outside are refused, and the file outside never appears.
An operation Custodian cannot perform is refused too, and leaves no open chain behind.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from custodian_hub import ReferenceHub
from custodian_runtime.core import operations
from custodian_runtime.core.operations import OperationSpec
from custodian_runtime.journal.run_journal import MemoryJournal
from custodian_runtime.statehub.client import StateHubClient
from custodian_runtime.writes import APPROVED_CALLS, SANCTIONED_CALLS, Calls, send
from support.runs import CANON, CliResult, plan_response, run_cli, run_plan, tree_digest
from support.spine import journal

GOOD = "domains/website-launch.md"
CONTENT = "# Launch checklist\n\nShip the sitemap with the relaunch.\n"


@pytest.fixture
def canon(tmp_path: Path) -> Path:
    """A private copy of the repository's canon."""
    copy = tmp_path / "canon"
    shutil.copytree(CANON, copy)
    return copy


def _queue(
    tmp_path: Path, mp: pytest.MonkeyPatch, hub: ReferenceHub, canon: Path, proposal: dict[str, Any]
) -> str:
    result = run_plan(
        tmp_path, mp, hub.url, {"proposals": [proposal]}, "--json", "--force", canon=canon
    )
    assert result.code == 0, result.stderr
    queued = result.json()["queued"]
    assert len(queued) == 1, result.json()
    return str(queued[0]["approval_id"])


def _approve(
    tmp_path: Path, mp: pytest.MonkeyPatch, hub: ReferenceHub, canon: Path, approval_id: str
) -> CliResult:
    argv = ["approvals", "--memory", str(tmp_path / "memory"), "approve", approval_id]
    argv += ["--by", "ana", "--hub", hub.url]
    return run_cli(argv, tmp_path, mp, CUSTODIAN_CANON_DIR=str(canon))


def _canon_proposal(path: str) -> dict[str, Any]:
    return {
        "operation": "write_canon",
        "rationale": "r",
        "params": {"path": path, "content": CONTENT},
    }


def _rewrite_path(tmp_path: Path, approval_id: str, path: str) -> None:
    """Edit a queued item's path by hand, as someone with access to the queue could."""
    file = tmp_path / "memory" / "approvals" / f"{approval_id}.json"
    item = json.loads(file.read_text(encoding="utf-8"))
    item["params"]["path"] = path
    item["precondition"] = {"file_sha256": None}
    file.write_text(json.dumps(item), encoding="utf-8")


def _status(tmp_path: Path, approval_id: str) -> str:
    file = tmp_path / "memory" / "approvals" / f"{approval_id}.json"
    return str(json.loads(file.read_text(encoding="utf-8"))["status"])


def _assert_refused_with_no_chain(tmp_path: Path, approval_id: str) -> None:
    records = [r for r in journal(tmp_path / "memory") if approval_id in r.run_id]
    assert [(r.kind, r.data.get("decision")) for r in records] == [("approval_decided", "refused")]
    assert _status(tmp_path, approval_id) == "failed"


def test_a_good_canon_path_is_written_atomically_inside_the_canon(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub, canon: Path
) -> None:
    approval_id = _queue(tmp_path, monkeypatch, small_hub, canon, _canon_proposal(GOOD))
    assert not (canon / GOOD).exists()
    ok = _approve(tmp_path, monkeypatch, small_hub, canon, approval_id)
    assert ok.code == 0, ok.stderr + ok.stdout
    assert (canon / GOOD).read_text(encoding="utf-8") == CONTENT
    assert not list(canon.rglob(".*.tmp"))  # no temporary file left beside it
    receipt = [r for r in journal(tmp_path / "memory") if r.kind == "receipt"][-1]
    assert receipt.data["response_sha256"] == hashlib.sha256(CONTENT.encode()).hexdigest()
    assert _status(tmp_path, approval_id) == "executed"


@pytest.mark.parametrize("kind", ["absolute", "dotdot"])
def test_an_escaping_path_edited_into_the_queue_is_refused(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    small_hub: ReferenceHub,
    canon: Path,
    kind: str,
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    approval_id = _queue(tmp_path, monkeypatch, small_hub, canon, _canon_proposal(GOOD))
    path = str(outside / "pwn.md") if kind == "absolute" else "../outside/pwn.md"
    _rewrite_path(tmp_path, approval_id, path)
    before = tree_digest(canon)
    refused = _approve(tmp_path, monkeypatch, small_hub, canon, approval_id)
    assert refused.code == 2, refused.stdout
    assert "refused before anything ran" in refused.stdout
    assert not (outside / "pwn.md").exists()
    assert list(outside.iterdir()) == []
    assert tree_digest(canon) == before
    _assert_refused_with_no_chain(tmp_path, approval_id)


def test_a_symlink_planted_in_the_canon_after_the_proposal_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub, canon: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / "keep.md"
    victim.write_text("do not touch\n", encoding="utf-8")
    approval_id = _queue(tmp_path, monkeypatch, small_hub, canon, _canon_proposal("notes/keep.md"))
    (canon / "notes").symlink_to(outside, target_is_directory=True)
    refused = _approve(tmp_path, monkeypatch, small_hub, canon, approval_id)
    assert refused.code == 2, refused.stdout
    assert "leads outside the canon directory" in refused.stdout
    assert victim.read_text(encoding="utf-8") == "do not touch\n"
    assert sorted(p.name for p in outside.iterdir()) == ["keep.md"]
    _assert_refused_with_no_chain(tmp_path, approval_id)


def test_a_proposal_with_an_escaping_path_is_denied_when_the_run_rules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub, canon: Path
) -> None:
    answer = tmp_path / "answer.md"
    plan = {"proposals": [_canon_proposal("/etc/x.md"), _canon_proposal("../x.md")]}
    answer.write_text(plan_response(plan), encoding="utf-8")
    argv = ["run", "--domain", "website", "--hub", small_hub.url, "--llm", f"file:{answer}"]
    argv += ["--memory", str(tmp_path / "memory"), "--canon", str(canon), "--json"]
    result = run_cli(argv, tmp_path, monkeypatch)
    assert result.code == 0 and result.json()["queued"] == []
    reasons = " ".join(d["reason"] for d in result.json()["denied"])
    assert "is absolute" in reasons and "'..' component" in reasons


class _NoParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


_GONE = OperationSpec(
    name="drop_database",
    section="proposals",
    params=_NoParams,
    default="approvable",
    fields="{}",
    request="DELETE /",
    landed=lambda params, landing: None,
    describe=lambda params, lookup: "Drop the database",
)


def test_an_operation_custodian_cannot_perform_is_refused_and_later_runs_stay_healthy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub, canon: Path
) -> None:
    proposal = {"operation": "drop_database", "rationale": "attacker", "params": {}}
    # Queued while a build knew the operation; this build does not (a run denies it now).
    with operations.register(_GONE):
        approval_id = _queue(tmp_path, monkeypatch, small_hub, canon, proposal)
    refused = _approve(tmp_path, monkeypatch, small_hub, canon, approval_id)
    assert refused.code == 2 and "no way to perform 'drop_database'" in refused.stdout
    _assert_refused_with_no_chain(tmp_path, approval_id)
    # Nothing is left for the next run to reconcile: it runs and the replay is clean.
    quiet = tmp_path / "quiet.md"
    quiet.write_text(plan_response({"observations": ["quiet"]}), encoding="utf-8")
    argv = ["run", "--domain", "website", "--hub", small_hub.url, "--llm", f"file:{quiet}"]
    argv += ["--memory", str(tmp_path / "memory"), "--canon", str(canon), "--json", "--force"]
    assert run_cli(argv, tmp_path, monkeypatch).code == 0
    memory = str(tmp_path / "memory")
    inspected = run_cli(
        ["inspect", "--domain", "website", "--memory", memory], tmp_path, monkeypatch
    )
    assert inspected.code == 0 and "replay: ok" in inspected.stdout


@pytest.mark.parametrize(
    ("operation", "calls"),
    [("drop_database", APPROVED_CALLS), ("create_task", SANCTIONED_CALLS)],
    ids=["unknown-operation", "approved-write-through-the-sanctioned-table"],
)
def test_a_write_that_cannot_be_sent_closes_its_chain_with_failed(
    operation: str, calls: Calls
) -> None:
    # Nothing listens on port 9: a request that left would fail with a connection error instead.
    journal_ = MemoryJournal("r1", "website", lambda: datetime(2026, 1, 1, tzinfo=UTC))
    params = {"workstream_id": "web-ws-1", "title": "x"}
    with StateHubClient("http://127.0.0.1:9") as client:
        sent = send(
            journal_, client, calls, index=0, operation=operation, params=params, run_id="r1",
            key="k",
        )  # fmt: skip
    assert sent.kind == "failed" and sent.hub_id is None
    assert sent.error == (
        f"{operation} cannot be sent to the hub with these params (KeyError('{operation}'))"
    )
    assert [r.kind for r in journal_.records] == ["dispatched", "failed"]
