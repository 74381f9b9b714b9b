"""History scoped right: a domain's pending and rejected items, matched by a normalized text.

A rejection in one domain never denies another domain's proposal; a near-duplicate of a rejected
proposal ("Add a sitemap." after "Add a sitemap") is denied; a domain's queue holds at most
`max_pending` items, across runs.
"""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from custodian_hub import ReferenceHub
from custodian_runtime.core._normalized import text_key
from custodian_runtime.core.approvals.items import ApprovalItem, history_for, new_item
from custodian_runtime.core.authority.authorize import authorize
from custodian_runtime.core.limits import Limits
from support.authority import NOW, plan_of, proposal, website
from support.runs import run_cli, run_plan


def _item(domain: str, operation: str, params: dict[str, Any], status: str) -> ApprovalItem:
    plan = plan_of(proposals=[proposal(operation, **params)])
    fp = plan.items[0].fingerprint
    item = new_item(
        approval_id=f"apr-{domain}-{fp[:6]}",
        domain=domain,
        operation=operation,
        params=plan.items[0].params,
        rationale=None,
        run_id="r",
        fingerprint=fp,
        precondition={},
        now=NOW - timedelta(days=1),
        ttl_days=14,
    )
    if status == "rejected":
        return item.model_copy(
            update={"status": "rejected", "decided_by": "ana", "reject_reason": "not now"}
        )
    return item


SITEMAP = {"workstream_id": "ws-web", "title": "Add a sitemap"}


@pytest.mark.parametrize(
    "title",
    ["Add a sitemap", "Add a sitemap.", "Add a  sitemap", "add a SITEMAP!", "Ａdd a sitemap"],
)
def test_a_near_duplicate_of_a_rejected_proposal_is_denied(title: str) -> None:
    rejected = _item("website", "create_task", SITEMAP, "rejected")
    history = history_for([rejected], "website", NOW)
    plan = plan_of(proposals=[proposal("create_task", workstream_id="ws-web", title=title)])
    (ruling,) = authorize(plan, website(), Limits(), history)
    assert ruling.outcome == "deny"
    assert "a person rejected the same proposal before (rejected by ana: not now)" in ruling.reason


def test_a_different_title_is_still_queued_after_a_rejection() -> None:
    history = history_for([_item("website", "create_task", SITEMAP, "rejected")], "website", NOW)
    plan = plan_of(proposals=[proposal("create_task", workstream_id="ws-web", title="Add a map")])
    (ruling,) = authorize(plan, website(), Limits(), history)
    assert ruling.outcome == "queue"


def test_text_key_folds_width_case_space_and_trailing_punctuation() -> None:
    one = text_key("create_task", {"title": "Add a sitemap", "workstream_id": "w"})
    assert one == text_key("create_task", {"title": " ＡDD  a\tsitemap...", "workstream_id": "w"})
    assert one != text_key("create_task", {"title": "Add a sitemap", "workstream_id": "x"})
    assert one != text_key("record_decision", {"title": "Add a sitemap", "workstream_id": "w"})


def test_history_of_another_domain_does_not_count() -> None:
    canon = {"path": "domains/notes.md", "content": "# Notes\n"}
    items = [_item("platform", "write_canon", canon, "rejected")]
    items.append(_item("platform", "write_canon", {**canon, "content": "x"}, "pending"))
    history = history_for(items, "website", NOW)
    plan = plan_of(proposals=[proposal("write_canon", **canon)])
    (ruling,) = authorize(plan, website(), Limits(), history)
    assert ruling.outcome == "queue"
    assert history_for(items, "platform", NOW).pending_count == 1


def test_a_full_queue_denies_new_proposals_and_says_so() -> None:
    pending = [
        _item("website", "create_task", {"workstream_id": "ws-web", "title": f"T {n}"}, "pending")
        for n in range(3)
    ]
    history = history_for(pending, "website", NOW)
    plan = plan_of(proposals=[proposal("create_task", workstream_id="ws-web", title="Another one")])
    (ruling,) = authorize(plan, website(), Limits(max_pending=3), history)
    assert ruling.outcome == "deny"
    assert "queue full" in ruling.reason and "3 pending" in ruling.reason


# --- end to end against the real hub ------------------------------------------------------


def test_a_rejection_in_website_does_not_deny_platforms_identical_proposal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    write = {"operation": "write_canon", "params": {"path": "domains/shared.md", "content": "x\n"}}
    first = run_plan(
        tmp_path,
        monkeypatch,
        small_hub.url,
        {"proposals": [write]},
        "--force",
        "--json",
        domain="website",
    )
    (queued,) = first.json()["queued"]
    no = run_cli(
        ["approvals", "--memory", str(tmp_path / "memory"), "reject", queued["approval_id"],
         "--by", "ana", "--reason", "not for website"],
        tmp_path, monkeypatch,
    )  # fmt: skip
    assert no.code == 0, no.stderr
    other = run_plan(
        tmp_path,
        monkeypatch,
        small_hub.url,
        {"proposals": [write]},
        "--force",
        "--json",
        domain="platform",
    )
    assert other.code == 0, other.stderr
    assert [q["operation"] for q in other.json()["queued"]] == ["write_canon"]
    again = run_plan(
        tmp_path,
        monkeypatch,
        small_hub.url,
        {"proposals": [write]},
        "--force",
        "--json",
        domain="website",
    )
    assert any("not for website" in d["reason"] for d in again.json()["denied"])


def test_forced_runs_cannot_grow_a_domains_queue_past_the_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    for run in range(4):
        tasks = [
            {"operation": "create_task", "params": {"workstream_id": "web-ws-1",
             "title": f"Task {run}-{n}"}}
            for n in range(2)
        ]  # fmt: skip
        plan = {"proposals": tasks}
        result = run_plan(
            tmp_path,
            monkeypatch,
            small_hub.url,
            plan,
            "--force",
            "--json",
            CUSTODIAN_MAX_PENDING="5",
        )
        assert result.code == 0, result.stderr
    files = list((tmp_path / "memory" / "approvals").glob("*.json"))
    assert len(files) == 5
    assert any("queue full" in d["reason"] for d in result.json()["denied"])
    note = Path(result.json()["note"]).read_text(encoding="utf-8")
    assert "queue full: the domain already has 5 pending approvals" in note.lower()
    assert all(json.loads(f.read_text())["status"] == "pending" for f in files)
