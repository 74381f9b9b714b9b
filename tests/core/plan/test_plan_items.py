"""extract_plan: every entry becomes one ProposedItem, validated on its own, nothing dropped."""

from __future__ import annotations

from typing import Any

import pytest

from custodian_runtime.core import operations
from custodian_runtime.core.digest import canonical_json, sha256_hex
from custodian_runtime.core.plan.extract import ProposedItem, fingerprint
from support.authority import plan_of, proposal


def _only(**sections: Any) -> ProposedItem:
    (item,) = plan_of(**sections).items
    return item


def test_the_operation_sets_are_the_contract_ones() -> None:
    sanctioned, approvable = operations.names("sanctioned"), operations.names("approvable")
    assert {"add_progress_event", "update_task_status", "flag_for_human"} == sanctioned
    assert "set_task_status" in approvable
    assert not sanctioned & approvable


def test_a_progress_event_maps_to_add_progress_event_and_keeps_its_reason() -> None:
    entry = {
        "workstream_id": "ws-web",
        "task_id": "t-prog",
        "event_type": "note",
        "rests_on": ["t-prog"],
        "summary": "Deploy went out.",
        "reason": "seen in CI",
    }
    item = _only(progress_events=[entry])
    assert (item.index, item.section, item.operation) == (
        0,
        "progress_events",
        "add_progress_event",
    )
    assert item.params == {
        "workstream_id": "ws-web",
        "task_id": "t-prog",
        "event_type": "note",
        "rests_on": ["t-prog"],
        "summary": "Deploy went out.",
    }
    assert item.reason == "seen in CI"
    assert item.error is None
    assert item.target == "t-prog"


@pytest.mark.parametrize(
    ("status", "operation"),
    [
        ("done", "update_task_status"),
        ("in_progress", "update_task_status"),
        ("todo", "set_task_status"),
        ("blocked", "set_task_status"),
        ("cancelled", "set_task_status"),
    ],
)
def test_a_status_change_is_sanctioned_only_for_done_and_in_progress(
    status: str, operation: str
) -> None:
    item = _only(tasks_to_update=[{"task_id": "t-todo", "status": status}])
    assert item.operation == operation
    assert item.params == {"task_id": "t-todo", "status": status}


def test_a_flag_maps_to_flag_for_human() -> None:
    item = _only(tasks_to_flag=[{"task_id": "t-block", "note": "Stuck for weeks."}])
    assert item.operation == "flag_for_human"
    assert item.params == {"task_id": "t-block", "note": "Stuck for weeks."}
    assert item.reason is None


def test_a_malformed_entry_is_kept_with_its_error_and_the_others_go_on() -> None:
    plan = plan_of(
        tasks_to_update=[
            {"task_id": "t-todo", "status": "finished"},
            {"task_id": "t-prog", "status": "done", "force": True},
            {"task_id": "../etc", "status": "done"},
            "t-done",
            {"task_id": "t-done", "status": "in_progress"},
        ],
        tasks_to_flag=[{"task_id": "t-1", "note": "x" * 2001}],
    )
    errors = [item.error for item in plan.items]
    assert errors[4] is None
    assert errors[0] is not None and "status: Input should be" in errors[0]
    assert "'finished'" in errors[0]
    assert errors[1] == "force: Extra inputs are not permitted (got True)"
    assert errors[2] is not None and errors[2].startswith("task_id: String should match pattern")
    assert errors[3] is not None and "(item)" in errors[3]
    assert errors[5] is not None and "note: String should have at most 2000 characters" in errors[5]
    assert plan.items[3].params == {"value": "t-done"}  # the raw entry, kept for the trace
    assert plan.items[1].params == {"task_id": "t-prog", "status": "done", "force": True}
    assert [item.index for item in plan.items] == list(range(6))


def test_a_malformed_status_entry_is_labelled_with_the_operation_it_meant() -> None:
    plan = plan_of(tasks_to_update=[{"task_id": "t", "status": "blocked", "x": 1}, {"status": 5}])
    assert [item.operation for item in plan.items] == ["set_task_status", "update_task_status"]


def test_a_section_that_is_not_a_list_is_one_malformed_item() -> None:
    plan = plan_of(
        progress_events={"workstream_id": "ws-web"}, observations="all good", tasks_to_flag=None
    )
    assert [(i.section, i.operation) for i in plan.items] == [
        ("progress_events", "add_progress_event"),
        ("observations", "observations"),
    ]
    assert all(i.error and "must be a JSON array" in i.error for i in plan.items)
    assert plan.items[1].params == {"value": "all good"}
    assert plan.observations == ()


def test_items_come_in_plan_order_across_sections() -> None:
    plan = plan_of(
        tasks_to_flag=[{"task_id": "t-block", "note": "n"}],
        progress_events=[
            {
                "workstream_id": "ws-web",
                "event_type": "note",
                "rests_on": ["t-prog"],
                "summary": "s",
            }
        ],
        proposals=[proposal("resolve_flag", flag_id="f-1")],
        tasks_to_update=[{"task_id": "t-prog", "status": "done"}],
    )
    operations = [item.operation for item in plan.items]
    assert operations == [
        "flag_for_human",
        "add_progress_event",
        "resolve_flag",
        "update_task_status",
    ]
    assert [item.index for item in plan.items] == [0, 1, 2, 3]


def test_unknown_top_level_keys_are_kept_as_items_the_authority_denies() -> None:
    plan = plan_of(summary="Looks fine", deploy_now={"service": "web"}, **{"bad key!": 1})
    first, second, third = plan.items
    assert (first.operation, first.params) == ("summary", {"value": "Looks fine"})
    assert (second.operation, second.params) == ("deploy_now", {"value": {"service": "web"}})
    assert third.operation == "bad key!"
    for item in plan.items:
        assert item.error is not None and "is not a plan section (observations, " in item.error


def test_a_top_level_key_named_like_a_known_operation_is_a_stray_key_too() -> None:
    item = _only(create_workstream={"domain": "website", "title": "New"})
    assert item.operation == "create_workstream"
    assert item.error is not None and "goes in proposals" in item.error


OPERATION_EXAMPLES: list[tuple[str, dict[str, Any]]] = [
    ("set_task_status", {"task_id": "t-todo", "status": "cancelled"}),
    ("create_workstream", {"domain": "website", "title": "SEO", "owner": "ana"}),
    (
        "create_task",
        {
            "workstream_id": "ws-web",
            "title": "Fix links",
            "description": "All of them.",
            "status": "todo",
            "assignee": "bo",
            "due": "2026-12-24",
        },
    ),
    (
        "record_decision",
        {"title": "Host?", "context": "c", "options": ["a", "b"], "workstream_id": "ws-web"},
    ),
    ("resolve_decision", {"decision_id": "d-1", "resolution": "Go with a."}),
    ("resolve_flag", {"flag_id": "f-1"}),
    ("write_canon", {"path": "canon/notes/week.md", "content": "# Week\n"}),
    (
        "add_progress_event",
        {
            "workstream_id": "ws-web",
            "event_type": "milestone",
            "rests_on": ["t-prog"],
            "summary": "v2",
        },
    ),
    ("update_task_status", {"task_id": "t-todo", "status": "in_progress"}),
    ("flag_for_human", {"task_id": "t-todo", "note": "Who owns this?"}),
]


@pytest.mark.parametrize(("operation", "params"), OPERATION_EXAMPLES)
def test_each_known_operation_is_validated_against_its_schema(
    operation: str, params: dict[str, Any]
) -> None:
    item = _only(proposals=[{**proposal(operation, **params), "rationale": "because"}])
    assert (item.operation, item.params, item.error) == (operation, params, None)
    assert item.reason == "because"
    broken = _only(proposals=[proposal(operation, **params, surprise=1)])
    assert broken.error is not None and "surprise: Extra inputs are not permitted" in broken.error
    assert broken.operation == operation


def test_a_proposed_update_to_another_status_is_routed_to_a_person() -> None:
    item = _only(proposals=[proposal("update_task_status", task_id="t-todo", status="blocked")])
    assert item.operation == "set_task_status"


def test_an_unknown_operation_keeps_its_params_as_given() -> None:
    params = {"anything": [1, {"deep": None}], "task_id": "t-plat"}
    item = _only(proposals=[{"operation": "rename_repo", "params": params, "reason": "r"}])
    assert (item.operation, item.params, item.error, item.reason) == (
        "rename_repo",
        params,
        None,
        "r",
    )


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"operation": "resolve_flag"}, "flag_id: Field required"),
        ({"params": {}}, "operation: Field required"),
        ({"operation": "x y", "params": {}}, "operation: String should match pattern"),
        ({"operation": "x", "params": [1]}, "params: Input should be a valid dictionary"),
        ({"operation": "x", "params": {}, "why": "?"}, "why: Extra inputs are not permitted"),
        ({"operation": "create_task", "params": {"workstream_id": "w", "title": ""}}, "title"),
        (
            {
                "operation": "create_task",
                "params": {"workstream_id": "w", "title": "t", "due": "soon"},
            },
            "due",
        ),
        (
            {"operation": "create_workstream", "params": {"domain": "Web Site", "title": "t"}},
            "domain",
        ),
    ],
)
def test_malformed_proposals_say_what_is_wrong(entry: dict[str, Any], message: str) -> None:
    item = _only(proposals=[entry])
    assert item.error is not None and message in item.error


def test_reason_and_rationale_are_both_kept() -> None:
    entry = {**proposal("resolve_flag", flag_id="f-1"), "reason": "fixed", "rationale": "seen"}
    assert _only(proposals=[entry]).reason == "fixed — seen"


def test_params_are_normalized_so_an_explicit_null_is_the_same_item_as_an_omitted_field() -> None:
    plain = _only(
        progress_events=[
            {"workstream_id": "w", "event_type": "note", "rests_on": ["t"], "summary": "s"}
        ]
    )
    nulled = _only(
        progress_events=[
            {
                "workstream_id": "w",
                "task_id": None,
                "event_type": "note",
                "rests_on": ["t"],
                "summary": "s",
            }
        ]
    )
    assert plain.params == nulled.params
    assert plain.fingerprint == nulled.fingerprint


def test_the_fingerprint_is_the_sha256_of_the_canonical_operation_and_params() -> None:
    item = _only(tasks_to_update=[{"task_id": "t-prog", "status": "done", "reason": "merged"}])
    expected = sha256_hex(canonical_json({"operation": item.operation, "params": item.params}))
    assert item.fingerprint == expected == fingerprint("update_task_status", item.params)
    assert fingerprint("update_task_status", {"status": "done", "task_id": "t-prog"}) == expected
    assert fingerprint("set_task_status", item.params) != expected


@pytest.mark.parametrize(
    ("params", "target"),
    [
        ({"task_id": "t", "workstream_id": "w"}, "t"),
        ({"decision_id": "d"}, "d"),
        ({"flag_id": "f"}, "f"),
        ({"path": "a.md"}, "a.md"),
        ({"workstream_id": "w"}, "w"),
        ({"domain": "website"}, "website"),
        ({"value": 1}, None),
    ],
)
def test_target_is_the_main_id_or_path(params: dict[str, Any], target: str | None) -> None:
    item = ProposedItem(0, "proposals", "op", params, None, None, fingerprint("op", params))
    assert item.target == target
