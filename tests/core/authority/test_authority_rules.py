"""authorize: every rule, and the sentence it gives a person."""

from __future__ import annotations

from typing import Any

import pytest

from custodian_runtime.core.authority.authorize import ApprovalHistory, Ruling, authorize
from custodian_runtime.core.limits import Limits
from custodian_runtime.core.plan.extract import Plan, ProposedItem, fingerprint
from support.authority import plan_of, platform, proposal, website


def _rule(**sections: Any) -> list[Ruling]:
    return list(authorize(plan_of(**sections), website(), Limits(), ApprovalHistory()))


def _one(**sections: Any) -> Ruling:
    (ruling,) = _rule(**sections)
    return ruling


def _event(ws: str = "ws-web", **extra: Any) -> dict[str, Any]:
    return {
        "workstream_id": ws,
        "event_type": "note",
        "rests_on": ["t-prog"],
        "summary": "Checked in.",
        **extra,
    }


# --- execute ---------------------------------------------------------------------------------


def test_the_three_sanctioned_writes_execute_on_ids_of_the_domain() -> None:
    rulings = _rule(
        progress_events=[_event(task_id="t-prog")],
        tasks_to_update=[{"task_id": "t-prog", "status": "done", "evidence": ["ev-t-prog"]}],
        tasks_to_flag=[{"task_id": "t-todo", "note": "Nobody owns this."}],
    )
    assert [r.outcome for r in rulings] == ["execute"] * 3
    assert rulings[0].reason == (
        "Plan item #0 (add_progress_event) executes: a note event is added to workstream "
        "ws-web about task t-prog (append-only)."
    )
    assert rulings[1].reason == (
        "Plan item #1 (update_task_status) executes: task t-prog moves from in_progress to done "
        "(reversible)."
    )
    assert "task t-todo is flagged for a person" in rulings[2].reason


def test_a_sanctioned_op_proposed_under_proposals_is_handled_as_that_op() -> None:
    ruling = _one(
        proposals=[
            proposal(
                "update_task_status", task_id="t-todo", status="in_progress", evidence=["ev-t-todo"]
            )
        ]
    )
    assert ruling.outcome == "execute"


def test_rulings_follow_plan_order_one_per_item() -> None:
    plan = plan_of(
        tasks_to_flag=[{"task_id": "nope", "note": "n"}],
        proposals=[proposal("resolve_flag", flag_id="f-1")],
        progress_events=[_event()],
    )
    rulings = authorize(plan, website(), Limits(), ApprovalHistory())
    assert [r.item for r in rulings] == list(plan.items)
    assert [r.outcome for r in rulings] == ["deny", "queue", "execute"]


# --- deny: form ------------------------------------------------------------------------------


def test_a_malformed_item_is_denied_with_its_validation_error() -> None:
    ruling = _one(tasks_to_update=[{"task_id": "t-prog", "status": "finished"}])
    assert ruling.outcome == "deny"
    assert ruling.reason.startswith("Plan item #0 (set_task_status) is denied: it is malformed (")
    assert "'finished'" in ruling.reason


def _hand_built(operation: str, params: dict[str, Any], fp: str | None = None) -> Ruling:
    item = ProposedItem(
        0, "proposals", operation, params, None, None, fp or fingerprint(operation, params)
    )
    (ruling,) = authorize(Plan("", (), (item,), "{}"), website(), Limits(), ApprovalHistory())
    return ruling


def test_hand_built_items_are_checked_again_not_trusted() -> None:
    blocked = _hand_built("update_task_status", {"task_id": "t-todo", "status": "blocked"})
    assert blocked.outcome == "deny"
    assert "may only set done or in_progress" in blocked.reason
    extra = _hand_built("add_progress_event", {**_event(), "source": "me"})
    assert extra.outcome == "deny" and "source: Extra inputs are not permitted" in extra.reason
    nulled = _hand_built("add_progress_event", {**_event(), "task_id": None})
    assert nulled.outcome == "deny" and "not in normal form" in nulled.reason
    forged = _hand_built("add_progress_event", _event(), fp="0" * 64)
    assert forged.outcome == "deny" and "fingerprint does not match" in forged.reason
    not_a_dict = _hand_built("flag_for_human", ["t-todo"])  # type: ignore[arg-type]
    assert not_a_dict.outcome == "deny" and "params must be a JSON object" in not_a_dict.reason


# --- deny: ids outside the observed domain ---------------------------------------------------


@pytest.mark.parametrize(
    ("sections", "message"),
    [
        ({"progress_events": [_event("ws-plat")]}, "workstream_id 'ws-plat' is not a workstream"),
        ({"progress_events": [_event(task_id="t-plat")]}, "task_id 't-plat' is not a task"),
        ({"progress_events": [_event(task_id="t-docs")]}, "t-docs belongs to workstream ws-docs"),
        ({"tasks_to_update": [{"task_id": "t-plat", "status": "done"}]}, "'t-plat' is not a task"),
        ({"tasks_to_flag": [{"task_id": "t-plat", "note": "n"}]}, "'t-plat' is not a task"),
        ({"tasks_to_update": [{"task_id": "t-plat", "status": "blocked"}]}, "'t-plat'"),
        ({"proposals": [proposal("create_task", workstream_id="ws-plat", title="x")]}, "ws-plat"),
        (
            {"proposals": [proposal("resolve_decision", decision_id="d-plat", resolution="y")]},
            "not an open decision",
        ),
        ({"proposals": [proposal("resolve_flag", flag_id="f-plat")]}, "not an open flag"),
        (
            {"proposals": [proposal("record_decision", title="t", workstream_id="ws-plat")]},
            "ws-plat",
        ),
        (
            {"proposals": [proposal("create_workstream", domain="platform", title="x")]},
            "names domain 'platform'",
        ),
        (
            {"proposals": [proposal("set_task_status", task_id="t-plat", status="blocked")]},
            "'t-plat' is not a task",
        ),
    ],
)
def test_ids_outside_the_observed_domain_are_denied(sections: dict[str, Any], message: str) -> None:
    ruling = _one(**sections)
    assert ruling.outcome == "deny"
    assert message in ruling.reason
    assert ruling.reason.endswith(".")


def test_every_id_of_another_domain_is_denied_even_though_the_hub_knows_it() -> None:
    other = platform()
    plat = other.workstreams[0]
    ruling = _one(progress_events=[_event(plat.id, task_id=plat.tasks[0].id)])
    assert ruling.outcome == "deny"
    assert "of the observed domain website" in ruling.reason


def test_resolved_decisions_and_flags_are_not_targets() -> None:
    summary = website().model_copy(update={"open_flags": (), "open_decisions": ()})
    plan = plan_of(
        proposals=[
            proposal("resolve_flag", flag_id="f-1"),
            proposal("resolve_decision", decision_id="d-1", resolution="done"),
        ]
    )
    rulings = authorize(plan, summary, Limits(), ApprovalHistory())
    assert [r.outcome for r in rulings] == ["deny", "deny"]


# --- deny: state ------------------------------------------------------------------------------


def test_a_status_update_to_the_current_status_is_denied() -> None:
    ruling = _one(
        tasks_to_update=[{"task_id": "t-done", "status": "done", "evidence": ["ev-t-done"]}]
    )
    assert ruling.outcome == "deny"
    assert (
        ruling.reason == "Plan item #0 (update_task_status) is denied: task t-done is already done."
    )
    queued = _one(tasks_to_update=[{"task_id": "t-block", "status": "blocked"}])
    assert queued.outcome == "deny" and "already blocked" in queued.reason


def test_a_flag_on_a_task_with_an_open_flag_is_denied() -> None:
    ruling = _one(tasks_to_flag=[{"task_id": "t-block", "note": "Still blocked."}])
    assert ruling.outcome == "deny"
    assert "task t-block already has an open flag" in ruling.reason


# --- deny: duplicates -------------------------------------------------------------------------


def test_a_repeated_item_is_denied_pointing_at_the_first() -> None:
    rulings = _rule(progress_events=[_event(), _event(reason="again")])
    assert [r.outcome for r in rulings] == ["execute", "deny"]
    assert "repeats plan item #0 word for word" in rulings[1].reason


def test_two_status_changes_on_one_task_deny_the_later() -> None:
    rulings = _rule(
        tasks_to_update=[
            {"task_id": "t-prog", "status": "done", "evidence": ["ev-t-prog"]},
            {"task_id": "t-prog", "status": "blocked"},
            {"task_id": "t-todo", "status": "cancelled"},
            {"task_id": "t-todo", "status": "in_progress", "evidence": ["ev-t-todo"]},
        ]
    )
    assert [r.outcome for r in rulings] == ["execute", "deny", "queue", "deny"]
    assert "plan item #0 already sets the status of task t-prog" in rulings[1].reason
    assert "plan item #2 already sets the status of task t-todo" in rulings[3].reason


def test_a_denied_status_change_does_not_block_a_later_valid_one() -> None:
    rulings = _rule(
        tasks_to_update=[
            {"task_id": "t-done", "status": "done", "evidence": ["ev-t-done"]},
            {"task_id": "t-done", "status": "in_progress", "evidence": ["ev-t-done"]},
        ]
    )
    assert [r.outcome for r in rulings] == ["deny", "execute"]


def test_two_flags_on_one_task_deny_the_later() -> None:
    rulings = _rule(
        tasks_to_flag=[{"task_id": "t-todo", "note": "a"}, {"task_id": "t-todo", "note": "b"}]
    )
    assert [r.outcome for r in rulings] == ["execute", "deny"]
    assert "plan item #0 already flags task t-todo" in rulings[1].reason


# --- caps -------------------------------------------------------------------------------------


def test_each_cap_stops_executes_and_says_so() -> None:
    limits = Limits(max_events=2, max_status_updates=1, max_flags=1, max_queued=1)
    plan = plan_of(
        progress_events=[_event(summary=f"event {n}") for n in range(3)],
        tasks_to_update=[
            {"task_id": "t-prog", "status": "done", "evidence": ["ev-t-prog"]},
            {"task_id": "t-todo", "status": "in_progress", "evidence": ["ev-t-todo"]},
        ],
        tasks_to_flag=[{"task_id": "t-todo", "note": "a"}, {"task_id": "t-prog", "note": "b"}],
        proposals=[
            proposal("resolve_flag", flag_id="f-1"),
            proposal("resolve_decision", decision_id="d-1", resolution="Fastly."),
        ],
    )
    rulings = authorize(plan, website(), limits, ApprovalHistory())
    assert [r.outcome for r in rulings] == [
        "execute", "execute", "deny",
        "execute", "deny",
        "execute", "deny",
        "queue", "deny",
    ]  # fmt: skip
    assert "at most 2 add_progress_event" in rulings[2].reason
    assert "at most 1 update_task_status" in rulings[4].reason
    assert "at most 1 flag_for_human" in rulings[6].reason
    assert "may queue at most 1 proposals" in rulings[8].reason


def test_the_default_caps() -> None:
    limits = Limits()
    assert (limits.max_events, limits.max_status_updates, limits.max_flags, limits.max_queued) == (
        20,
        20,
        10,
        10,
    )
    rulings = _rule(progress_events=[_event(summary=f"event {n}") for n in range(25)])
    assert [r.outcome for r in rulings].count("execute") == 20


# --- queue ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "entry",
    [
        proposal("set_task_status", task_id="t-todo", status="cancelled"),
        proposal("create_workstream", domain="website", title="SEO"),
        proposal("create_task", workstream_id="ws-docs", title="Write the FAQ"),
        proposal("record_decision", title="Which CDN?"),
        proposal("resolve_decision", decision_id="d-1", resolution="Fastly."),
        proposal("resolve_flag", flag_id="f-1"),
        proposal("write_canon", path="canon/notes/week-48.md", content="# Week 48\n"),
    ],
)
def test_every_other_known_write_is_queued_for_a_person(entry: dict[str, Any]) -> None:
    ruling = _one(proposals=[entry])
    assert ruling.outcome == "queue"
    assert ruling.reason.endswith(
        "is queued for a person's approval: it is a write that Custodian may not make on its own."
    )


def test_an_unknown_operation_or_a_stray_key_is_denied_and_the_rest_runs() -> None:
    rulings = _rule(
        progress_events=[_event()],
        proposals=[proposal("archive_everything", older_than="1y")],
        foo=1,
    )
    assert [r.outcome for r in rulings] == ["execute", "deny", "deny"]
    assert "Custodian knows no operation archive_everything" in rulings[1].reason
    assert "'foo' is not a plan section" in rulings[2].reason
    for unknown in ({"task_id": "t-plat"}, {"domain": "platform"}):
        assert _one(proposals=[proposal("reboot", **unknown)]).outcome == "deny"


def test_a_pending_or_rejected_fingerprint_is_not_queued_again() -> None:
    plan = plan_of(
        proposals=[
            proposal("resolve_flag", flag_id="f-1"),
            proposal("resolve_decision", decision_id="d-1", resolution="Fastly."),
        ]
    )
    first, second = plan.items
    history = ApprovalHistory(
        pending={first.fingerprint: "apr-123"}, rejected={second.fingerprint: "rejected by ana: no"}
    )
    rulings = authorize(plan, website(), Limits(), history)
    assert [r.outcome for r in rulings] == ["deny", "deny"]
    assert "already awaits approval as apr-123" in rulings[0].reason
    assert "a person rejected the same proposal before (rejected by ana: no)" in rulings[1].reason


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("/etc/passwd.md", "is absolute"),
        ("C:/canon/x.md", "is absolute"),
        ("canon/../../secrets.md", "'..' component"),
        ("canon//x.md", "empty"),
        ("./x.md", "'.'"),
        ("canon\\x.md", "backslash"),
        ("canon/x\x00.md", "control character"),
        ("canon/x\n.md", "control character"),
        ("canon/x.txt", "does not end in .md"),
        ("canon/", "empty"),
    ],
)
def test_write_canon_needs_a_safe_relative_markdown_path(path: str, message: str) -> None:
    ruling = _one(proposals=[proposal("write_canon", path=path, content="x")])
    assert ruling.outcome == "deny"
    assert message in ruling.reason


def test_write_canon_with_front_matter_every_run_would_refuse_is_denied() -> None:
    wrong = "---\npinned: true\n---\n# Freeze\n"
    ruling = _one(proposals=[proposal("write_canon", path="adr/freeze.md", content=wrong)])
    assert ruling.outcome == "deny"
    assert "the new content's front matter is wrong: canon file adr/freeze.md, line 2" in (
        ruling.reason
    )
    right = "---\npin: true\n---\n# Freeze\n"
    ruling = _one(proposals=[proposal("write_canon", path="adr/freeze.md", content=right)])
    assert ruling.outcome == "queue"
