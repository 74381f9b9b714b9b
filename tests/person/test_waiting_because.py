"""Every queued item says, in one line, why it waits: from its ruling's code and clause and the
standing it met; `approvals show` (text and --json) and the note say it; an item queued before
it was kept shows nothing and still opens."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any, cast

import pytest

from custodian_hub import ReferenceHub
from custodian_runtime.core.approvals.items import ApprovalItem, new_item
from custodian_runtime.core.authority.authorize import Ruling
from custodian_runtime.core.authority.budgets import RecentWrites
from custodian_runtime.core.person.waiting import waiting_because
from custodian_runtime.core.plan.extract import ProposedItem, fingerprint
from custodian_runtime.core.ruling.path import Grounds, fresh_ruling
from custodian_runtime.core.standing.grants import Grant
from custodian_runtime.core.standing.modes import Modes, ModeSetting
from custodian_runtime.core.standing.record import Standing
from custodian_runtime.journal.person.queue import ApprovalStore
from support.authority import NOW, website
from support.runs import plan_response, run_cli

HUB = "hub-0123456789abcdef"


def _item(operation: str, params: dict[str, Any]) -> ProposedItem:
    fp = fingerprint(operation, params)
    return ProposedItem(index=0, section="recorded", operation=operation, params=params,
                        reason="r", error=None, fingerprint=fp)  # fmt: skip


def _ruled(item: ProposedItem, standing: Standing | None = None) -> tuple[Ruling, Grounds]:
    grounds = Grounds(recent=RecentWrites(NOW, ()), standing=standing or Standing(), hub_id=HUB,
                      now=NOW)  # fmt: skip
    return fresh_ruling(item, website(), grounds), grounds


def _because(item: ProposedItem, standing: Standing | None = None) -> tuple[str, str]:
    ruling, grounds = _ruled(item, standing)
    assert ruling.outcome == "queue", ruling.reason
    said = waiting_because(ruling, grounds.ground(website()))
    return said.code, said.text


def _grant(**over: Any) -> Grant:
    fields: dict[str, Any] = {
        "id": "grant-000000000001", "domain": "website", "operation": "create_task", "max_uses": 1,
        "expires_at": NOW + timedelta(days=5), "by": "alex", "reason": "triage week",
        "hub_id": HUB, "issued_at": NOW - timedelta(days=1),
    }  # fmt: skip
    return Grant.model_validate({**fields, **over})


CREATE = {"workstream_id": "ws-web", "title": "Write the launch post"}


def test_an_approvable_write_no_grant_covers_waits_by_default() -> None:
    code, text = _because(_item("create_task", CREATE))
    assert code == "approvable"
    assert text == "create_task always needs a person's approval, and no grant is issued for it."


def test_a_write_never_granted_says_why_from_its_spec() -> None:
    code, text = _because(_item("write_canon", {"path": "domains/website.md", "content": "x\n"}))
    assert code == "approvable"
    assert "never granted: the canon is the project's own word" in text


def test_a_grant_used_up_or_out_of_scope_is_named() -> None:
    used = Standing(grants=(_grant(),), uses={"grant-000000000001": 1})
    code, text = _because(_item("create_task", CREATE), used)
    assert (code, text.endswith("no grant covers it: grant-000000000001 is used up.")) == (
        "grant",
        True,
    )
    narrow = Standing(grants=(_grant(where={"workstream_id": "ws-docs"}),))
    code, text = _because(_item("create_task", CREATE), narrow)
    assert code == "grant" and "grant-000000000001 covers only workstream_id=ws-docs" in text
    # A fact the ruling observed is named with its value, never as unobserved.
    other = Standing(grants=(_grant(on={"workstream": "ws-docs"}),))
    code, text = _because(_item("create_task", CREATE), other)
    assert "covers only workstream=ws-docs, the item has workstream=ws-web" in text, text
    expired = Standing(grants=(_grant(expires_at=NOW - timedelta(hours=1)),))
    assert _because(_item("create_task", CREATE), expired)[1].endswith(
        "grant-000000000001 is expired."
    )


def test_a_status_change_citing_no_evidence_says_so() -> None:
    code, text = _because(_item("update_task_status", {"task_id": "t-prog", "status": "done"}))
    assert code == "evidence"
    assert text.startswith("it cites no evidence: a status change runs on its own only when")


def test_a_mode_set_to_ask_names_who_and_when_as_typed() -> None:
    setting = ModeSetting("add_progress_event", "ask", "alex", "new hire week", NOW)
    standing = Standing(modes=Modes({"add_progress_event": setting}))
    item = _item(
        "add_progress_event",
        {
            "workstream_id": "ws-web",
            "task_id": "t-prog",
            "event_type": "note",
            "rests_on": ["t-prog"],
            "summary": "On.",
        },
    )
    code, text = _because(item, standing)
    assert code == "mode_ask"
    assert text == "alex set add_progress_event to ask at 2026-11-30 08:00 UTC: new hire week."


def test_a_ruling_of_a_code_not_known_here_keeps_its_code_and_clause() -> None:
    ruling, _ = _ruled(_item("create_task", CREATE))
    held = replace(ruling, code=cast(Any, "held_deference"), clause="ana held it at 09:00.")
    said = waiting_because(held)
    assert (said.code, said.text) == ("held_deference", "ana held it at 09:00.")
    deferred = replace(ruling, code="deferred", clause="alex approved setting task t-1 to done.")
    text = waiting_because(deferred).text
    assert text == "in deference to a person: alex approved setting task t-1 to done."


def test_a_run_keeps_why_each_item_waits_and_show_and_the_note_say_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    answer = tmp_path / "answer.md"
    plan = {
        "proposals": [
            {
                "operation": "create_task",
                "rationale": "The FAQ is missing.",
                "params": {"workstream_id": "web-ws-1", "title": "Draft FAQ"},
            }
        ],
        "tasks_to_update": [{"task_id": "web-t-1", "status": "done"}],
    }
    answer.write_text(plan_response(plan), encoding="utf-8")
    env = {"CUSTODIAN_MEMORY_DIR": str(tmp_path / "memory")}
    argv = ["run", "--domain", "website", "--hub", small_hub.url, "--llm", f"file:{answer}"]
    summary = run_cli([*argv, "--json"], tmp_path, monkeypatch, **env).json()
    queued = {q["operation"]: q["approval_id"] for q in summary["queued"]}
    assert set(queued) == {"create_task", "update_task_status"}, summary
    shown = run_cli(["approvals", "show", queued["update_task_status"], "--json"], tmp_path,
                    monkeypatch, **env)  # fmt: skip
    because = json.loads(shown.stdout)["waiting_because"]
    assert because["code"] == "evidence" and because["text"].startswith("it cites no evidence")
    text = run_cli(["approvals", "show", queued["create_task"]], tmp_path, monkeypatch, **env)
    assert "waits because: create_task always needs a person's approval" in text.stdout
    note = Path(summary["note"]).read_text(encoding="utf-8")
    assert "**Waits because:** it cites no evidence" in note
    assert "**Waits because:** create_task always needs" in note


def test_an_item_queued_before_the_reason_was_kept_shows_none_and_opens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = ApprovalStore(tmp_path / "memory")
    old = new_item(approval_id="apr-0123abcd-0001", domain="website", operation="create_task",
                   params=dict(CREATE), rationale="r", run_id="r1", fingerprint="0123abcd" * 8,
                   precondition={}, now=NOW, ttl_days=3650)  # fmt: skip
    data = old.model_dump(mode="json", exclude={"waiting_because"})
    store.save(ApprovalItem.model_validate(data))
    env = {"CUSTODIAN_MEMORY_DIR": str(tmp_path / "memory")}
    text = run_cli(["approvals", "show", old.id], tmp_path, monkeypatch, **env)
    assert text.code == 0 and "waits because" not in text.stdout
    shown = run_cli(["approvals", "show", old.id, "--json"], tmp_path, monkeypatch, **env)
    assert json.loads(shown.stdout)["waiting_because"] is None


def test_a_write_deferring_to_a_persons_approval_names_them_as_typed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    env = {"CUSTODIAN_MEMORY_DIR": str(tmp_path / "memory")}

    def run(plan: dict[str, Any], name: str) -> dict[str, Any]:
        answer = tmp_path / name
        answer.write_text(plan_response(plan), encoding="utf-8")
        argv = ["run", "--domain", "website", "--hub", small_hub.url, "--llm", f"file:{answer}"]
        return run_cli([*argv, "--json", "--force"], tmp_path, monkeypatch, **env).json()

    block = {"operation": "set_task_status", "rationale": "It waits on legal.",
             "params": {"task_id": "web-t-4", "status": "blocked"}}  # fmt: skip
    (queued,) = run({"proposals": [block]}, "block.md")["queued"]
    approve = ["approvals", "approve", queued["approval_id"], "--by", "alex", "--hub",
               small_hub.url]  # fmt: skip
    assert run_cli(approve, tmp_path, monkeypatch, **env).code == 0
    back = {"tasks_to_update": [{"task_id": "web-t-4", "status": "in_progress"}]}
    summary = run(back, "back.md")
    # Asking alex again about the move alex approved is held, not queued; the note names alex
    # as typed.
    assert summary["queued"] == []
    note = Path(summary["note"]).read_text(encoding="utf-8")
    assert "### Held in deference to a person (1)" in note
    assert "**Why:** held: alex approved setting task web-t-4" in note
    assert "Alex" not in note
