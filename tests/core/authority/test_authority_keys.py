"""run_key and precondition: what the shell sends, what an approval is checked against."""

from __future__ import annotations

import pytest

from custodian_runtime.core.authority.precondition import precondition
from custodian_runtime.core.journal.keys import run_key
from custodian_runtime.core.plan.extract import ProposedItem
from support.authority import plan_of, proposal, website

FP = "ab" * 32
NONCE = "0f1e2d3c4b5a"


def test_the_idempotency_key_names_the_run_the_item_and_the_authorization() -> None:
    assert run_key("20261130T080000Z-website", FP, NONCE) == (
        f"custodian-20261130T080000Z-website-{FP[:32]}-{NONCE}"
    )


@pytest.mark.parametrize("run_id", ["", "a b/ç\n\x00", "r" * 1000])
def test_the_idempotency_key_is_printable_ascii_of_at_most_255(run_id: str) -> None:
    key = run_key(run_id, FP, NONCE)
    assert 1 <= len(key) <= 255
    assert all(33 <= ord(ch) <= 126 for ch in key)
    assert key.endswith(f"{FP[:32]}-{NONCE}")


def test_different_runs_items_or_authorizations_give_different_keys() -> None:
    assert run_key("run-1", FP, NONCE) != run_key("run-2", FP, NONCE)
    assert run_key("run-1", FP, NONCE) != run_key("run-1", "cd" * 32, NONCE)
    assert run_key("run-1", FP, NONCE) != run_key("run-1", FP, "a" * 12)


def _item(entry: dict[str, object]) -> ProposedItem:
    (item,) = plan_of(proposals=[entry]).items
    return item


def test_a_task_operation_records_the_task_state() -> None:
    item = _item(proposal("set_task_status", task_id="t-todo", status="cancelled"))
    assert precondition(item, website()) == {
        "task": {"id": "t-todo", "status": "todo", "updated_at": "2026-11-29T08:00:00Z"}
    }


def test_resolving_records_the_decision_or_flag_state() -> None:
    decided = _item(proposal("resolve_decision", decision_id="d-1", resolution="yes"))
    assert precondition(decided, website()) == {"decision": {"id": "d-1", "status": "open"}}
    resolved = _item(proposal("resolve_flag", flag_id="f-1"))
    assert precondition(resolved, website()) == {"flag": {"id": "f-1", "status": "open"}}


def test_creating_records_the_parent_id_and_status_and_the_same_titles() -> None:
    created = _item(proposal("create_task", workstream_id="ws-docs", title="FAQ"))
    assert precondition(created, website()) == {
        "workstream": {"id": "ws-docs", "status": "active"},
        "same_title": [],
    }
    recorded = _item(proposal("record_decision", title="CDN?"))
    assert precondition(recorded, website()) == {"domain": {"id": "website"}, "same_title": []}
    assert precondition(
        _item(proposal("create_workstream", domain="website", title="x")), website()
    ) == {"domain": {"id": "website"}, "same_title": []}


def test_write_canon_has_no_hub_precondition() -> None:
    item = _item(proposal("write_canon", path="canon/x.md", content="x"))
    assert precondition(item, website()) == {}


def test_an_unknown_operation_records_whatever_known_targets_it_names() -> None:
    item = _item(proposal("reassign", task_id="t-prog", workstream_id="ws-web", who="bo"))
    state = precondition(item, website())
    assert state["task"]["status"] == "in_progress"
    assert state["workstream"] == {
        "id": "ws-web",
        "status": "active",
        "updated_at": "2026-11-28T08:00:00Z",
    }
