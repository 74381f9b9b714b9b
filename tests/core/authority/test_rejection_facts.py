"""A rejection holds on the facts it was made on (issue #29).

The same proposal on the same facts is never asked again; a person's event on its target, newer
than the rejection, changes them: it may be asked once more, and its card says what changed.
Pure rules first, then the CLI against the reference hub.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx

from custodian_hub import ReferenceHub
from custodian_runtime.core.approvals.items import ApprovalItem, history_for, new_item
from custodian_runtime.core.authority.authorize import Ruling, authorize
from custodian_runtime.core.contract import DomainSummary, ProgressEvent
from custodian_runtime.core.limits import Limits
from support.authority import NOW, plan_of, proposal, website
from support.standing import Cli

RESOLVE = {"decision_id": "d-1", "resolution": "Go with option A"}


def _rejected(operation: str, params: dict[str, Any], days_ago: float = 7) -> ApprovalItem:
    plan = plan_of(proposals=[proposal(operation, **params)])
    item = new_item(
        approval_id="apr-1", domain="website", operation=operation, params=plan.items[0].params,
        rationale=None, run_id="r", fingerprint=plan.items[0].fingerprint, precondition={},
        now=NOW - timedelta(days=days_ago + 1), ttl_days=14,
    )  # fmt: skip
    return item.model_copy(
        update={
            "status": "rejected",
            "decided_by": "ana",
            "reject_reason": "only leaning",
            "decided_at": NOW - timedelta(days=days_ago),
        }
    )


def _event(event_id: str, days_ago: float, source: str = "ben", task_id: str | None = None) -> Any:
    return ProgressEvent(
        id=event_id, workstream_id="ws-web", task_id=task_id, event_type="note",
        summary="We agreed: option A.", source=source, created_at=NOW - timedelta(days=days_ago),
    )  # fmt: skip


def _observed(*events: ProgressEvent) -> DomainSummary:
    observed = website()
    decisions = tuple(
        d.model_copy(update={"workstream_id": "ws-web"}) for d in observed.open_decisions
    )
    return observed.model_copy(update={"open_decisions": decisions, "recent_events": events})


def _rule(observed: DomainSummary, rejected: ApprovalItem) -> Ruling:
    plan = plan_of(proposals=[proposal("resolve_decision", **RESOLVE)])
    history = history_for([rejected], "website", NOW)
    return authorize(plan, observed, Limits(), history)[0]


def test_the_same_proposal_on_the_same_facts_is_never_asked_again() -> None:
    rejected = _rejected("resolve_decision", RESOLVE)
    for observed in (_observed(), _observed(_event("ev-before", 8))):
        ruling = _rule(observed, rejected)
        assert ruling.outcome == "deny", ruling.reason
        assert "a person rejected the same proposal before (rejected by ana: only leaning" in (
            ruling.reason
        )
        assert "it is asked again only when one changes the facts" in ruling.reason


def test_custodians_own_event_or_one_elsewhere_changes_no_facts() -> None:
    rejected = _rejected("resolve_decision", RESOLVE)
    own = _event("ev-own", 1, source="custodian")
    elsewhere = _event("ev-else", 1).model_copy(update={"workstream_id": "ws-docs"})
    assert _rule(_observed(own, elsewhere), rejected).outcome == "deny"


def test_a_persons_newer_event_on_the_target_lets_it_be_asked_once_more_saying_why() -> None:
    rejected = _rejected("resolve_decision", RESOLVE)
    ruling = _rule(_observed(_event("ev-agreed", 1)), rejected)
    assert ruling.outcome == "queue" and ruling.code == "stated", ruling.reason
    assert "since then, event ev-agreed, a note from 'ben'" in ruling.reason
    assert "changed the facts, so it is asked once more" in ruling.reason
    # Rejected again after that event: the new facts hold, and it is not asked a third time.
    again = _rejected("resolve_decision", RESOLVE, days_ago=0.5)
    assert _rule(_observed(_event("ev-agreed", 1)), again).outcome == "deny"


def test_a_rejection_kept_without_its_time_holds_on_any_facts() -> None:
    rejected = _rejected("resolve_decision", RESOLVE).model_copy(update={"decided_at": None})
    assert _rule(_observed(_event("ev-agreed", 1)), rejected).outcome == "deny"


# --- end to end --------------------------------------------------------------------------------


def _create() -> dict[str, Any]:
    return {
        "operation": "create_task",
        "params": {"workstream_id": "web-ws-1", "title": "Add a sitemap"},
        "rationale": "search engines",
    }


def test_a_rejected_proposal_is_asked_again_once_after_a_persons_newer_event(
    cli: Cli, small_hub: ReferenceHub
) -> None:
    [first] = cli.run(small_hub.url, _create())["items"]
    assert first["outcome"] == "queued", first
    cli.ok("approvals", "reject", first["approval_id"], "--by", "ana", "--reason", "not yet")
    [same] = cli.run(small_hub.url, _create())["items"]
    assert same["outcome"] == "denied" and "no event of a person's" in same["reason"], same
    body = {"workstream_id": "web-ws-1", "event_type": "note", "source": "ben",
            "summary": "SEO review says we need a sitemap after all."}  # fmt: skip
    posted = httpx.post(f"{small_hub.url}/events", json=body, timeout=5)
    assert posted.status_code == 201, posted.text
    event = posted.json()["id"]
    [again] = cli.run(small_hub.url, _create())["items"]
    assert again["outcome"] == "queued", again
    shown = cli.ok("approvals", "show", again["approval_id"], "--json").json()
    assert f"since then, event {event}, a note from 'ben'" in shown["waiting_because"]["text"]
    cli.ok("approvals", "reject", again["approval_id"], "--by", "ana", "--reason", "still no")
    [third] = cli.run(small_hub.url, _create())["items"]
    assert third["outcome"] == "denied", third


def test_under_ask_a_sanctioned_write_rejected_before_is_asked_again_only_on_new_facts() -> None:
    from custodian_runtime.core.ruling.path import Grounds, rule_plan
    from custodian_runtime.core.standing.modes import Modes, ModeSetting
    from custodian_runtime.core.standing.record import Standing

    params = {"task_id": "t-prog", "status": "done", "evidence": ["ev-t-prog"]}
    rejected = _rejected("update_task_status", params, days_ago=0.02)  # after ev-t-prog
    asked = Modes().with_setting(
        ModeSetting("update_task_status", "ask", "ana", "first weeks", NOW - timedelta(days=30))
    )
    plan = plan_of(tasks_to_update=[params])

    def ruled(*events: ProgressEvent) -> Ruling:
        observed = website().model_copy(
            update={"recent_events": (*website().recent_events, *events)}
        )
        grounds = Grounds(history=history_for([rejected], "website", NOW),
                          standing=Standing(modes=asked), now=NOW)  # fmt: skip
        return rule_plan(plan, observed, grounds)[0]

    same = ruled()
    assert same.outcome == "deny" and "no event of a person's" in same.reason, same.reason
    newer = _event("ev-later", 0.005, task_id="t-prog")
    again = ruled(newer)
    assert again.outcome == "queue", again.reason
    assert "since then, event ev-later" in again.reason
    # The newer event is a person's word after the evidence: asked for it (authority/asked.py).
    assert "wrote on task t-prog after the evidence it cites: event ev-later" in again.reason


def test_an_event_dated_ahead_of_the_hubs_own_time_changes_no_facts() -> None:
    # Asked again and rejected again at every run until the hub's clock caught up: not so.
    rejected = _rejected("resolve_decision", RESOLVE, days_ago=0.1)
    ahead = _rule(_observed(_event("ev-ahead", -0.25)), rejected)  # 6 h ahead of generated_at
    assert ahead.outcome == "deny", ahead.reason
    assert "it is asked again only when one changes the facts" in ahead.reason
    near = _rule(_observed(_event("ev-near", -0.002)), rejected)  # within the clock skew
    assert near.outcome != "deny", near.reason
