"""A person's newer word (issue #29): it lifts deference, and a grant may ask for it.

A person's decision on a task wins against Custodian; an event of a person's on that task,
newer than the change and speaking for the move (a blocker for `blocked`, a milestone for
`done`), lets the write go to the ordinary rules, and what says why it runs cites the event.
A grant issued with `--evidence newer` covers only a write that cites such an event. The pure
rules first, then the CLI against the reference hub.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import httpx
import pytest

from custodian_hub import ReferenceHub
from custodian_runtime.core.authority.authorize import Ruling
from custodian_runtime.core.authority.budgets import RecentWrites, recent_writes
from custodian_runtime.core.authority.evidence import Evidence
from custodian_runtime.core.authority.own_writes import OwnWrite
from custodian_runtime.core.contract import DomainSummary, ProgressEvent, Task
from custodian_runtime.core.limits import Limits
from custodian_runtime.core.ruling.path import Grounds, rule_plan
from custodian_runtime.core.standing.grants import Grant
from custodian_runtime.core.standing.record import Standing
from support.authority import NOW, plan_of, task, website
from support.runs import hub_get
from support.standing import Cli, note_of

HUB = "hub_id:h-1"


def _stamp(hours_ago: float) -> str:
    return (NOW - timedelta(hours=hours_ago)).isoformat().replace("+00:00", "Z")


def _event(event_id: str, hours_ago: float, kind: str = "blocker", source: str = "ben") -> Any:
    return ProgressEvent(
        id=event_id, workstream_id="ws-web", task_id="t-prog", event_type=kind,
        summary="Waiting on the vendor again.", source=source,
        created_at=NOW - timedelta(hours=hours_ago),
    )  # fmt: skip


def _observed(*events: ProgressEvent, changed_hours_ago: float = 48) -> DomainSummary:
    """website() with t-prog set back to in_progress `changed_hours_ago`, and `events`."""
    observed = website()
    moved: Task = task("t-prog", "ws-web", "in_progress").model_copy(
        update={"updated_at": NOW - timedelta(hours=changed_hours_ago)}
    )
    workstreams = tuple(
        ws.model_copy(update={"tasks": tuple(moved if t.id == "t-prog" else t for t in ws.tasks)})
        for ws in observed.workstreams
    )
    return observed.model_copy(update={"workstreams": workstreams, "recent_events": events})


def _approved_block(hours_ago: float = 72) -> OwnWrite:
    """A person approved Custodian's move of t-prog to blocked `hours_ago`; then it moved."""
    return OwnWrite(
        at=_stamp(hours_ago), run_id="r-1", index=0, operation="set_task_status",
        task_id="t-prog", status="blocked", by="person:ana",
        after={"status": "blocked", "updated_at": _stamp(hours_ago)},
    )  # fmt: skip


def _grant(**extra: Any) -> Grant:
    return Grant(
        id="grant-0123456789ab", domain="website", operation="set_task_status",
        where={"status": "blocked"}, max_uses=5, expires_at=NOW + timedelta(days=7),
        by="ana", reason="routine blocks", hub_id=HUB, issued_at=NOW - timedelta(days=5),
        **extra,
    )  # fmt: skip


def _rule(
    observed: DomainSummary, *evidence: str, grants: tuple[Grant, ...] = (), to: str = "blocked",
    writes: tuple[OwnWrite, ...] = (), limits: Limits | None = None,
) -> Ruling:  # fmt: skip
    params: dict[str, Any] = {"task_id": "t-prog", "status": to}
    if evidence:
        params["evidence"] = list(evidence)
    plan = plan_of(proposals=[{"operation": "set_task_status", "params": params}])
    grounds = Grounds(
        recent=RecentWrites(NOW, writes), standing=Standing(grants=grants), hub_id=HUB, now=NOW,
        evidence=Evidence.of(observed), limits=limits or Limits(),
    )  # fmt: skip
    return rule_plan(plan, observed, grounds)[0]


# --- deference reads the person's newer word -------------------------------------------------


def test_a_persons_change_on_the_hub_still_defers_a_write_that_cites_nothing() -> None:
    ruling = _rule(_observed())
    assert ruling.outcome == "queue" and ruling.code == "deferred", ruling
    assert ruling.word is None


def test_a_persons_newer_blocker_lifts_the_deference_to_their_change() -> None:
    observed = _observed(_event("ev-new", 24))
    ruling = _rule(observed, "ev-new")
    assert ruling.outcome == "queue" and ruling.code == "routine", ruling
    assert ruling.word is not None and "event ev-new, a blocker from 'ben'" in ruling.word


@pytest.mark.parametrize(
    ("event", "why"),
    [
        (_event("ev-old", 72), "older than the task's last change"),
        (_event("ev-note", 24, kind="note"), "does not speak for a move to blocked"),
        (_event("ev-own", 24, source="custodian"), "unless a person's event newer"),
    ],
)
def test_an_older_a_custodian_or_an_unfitting_event_lifts_nothing(
    event: ProgressEvent, why: str
) -> None:
    ruling = _rule(_observed(event), event.id)
    assert ruling.code == "deferred" and why in ruling.reason, ruling.reason


def test_a_newer_word_lifts_a_persons_approved_decision_and_the_sentence_cites_it() -> None:
    # A person approved blocked three days ago; the team unblocked; ben says it is stuck again.
    writes = (_approved_block(72),)
    # Held, not asked again: her approval stands until a newer word of a person.
    held = _rule(_observed(), writes=writes)
    assert held.code == "held_deference" and held.outcome == "deny", held.reason
    assert "held: ana approved setting task t-prog to blocked" in held.reason
    assert "no newer word from a person supports the change" in held.reason
    before = _rule(_observed(_event("ev-old", 80, kind="blocker")), "ev-old", writes=writes)
    assert before.code == "held_deference"  # the word predates the person's decision
    ruling = _rule(_observed(_event("ev-new", 24)), "ev-new", writes=writes)
    assert ruling.code == "routine" and ruling.word is not None, ruling.reason


def test_a_person_setting_back_an_old_write_of_custodians_holds_it_for_the_window() -> None:
    # Custodian blocked t-prog 20 days ago (past a 14-day window); ben set it back two days ago.
    window = Limits(defer_days=14)
    old = OwnWrite(
        at=_stamp(24 * 20), run_id="r-0", index=0, operation="set_task_status",
        task_id="t-prog", status="blocked", by="policy",
        after={"status": "blocked", "updated_at": _stamp(24 * 20)},
    )  # fmt: skip
    kept = recent_writes(window, [old], NOW)
    assert kept.writes == (old,)  # the checkpoint's month of status writes is read back
    held = _rule(_observed(), writes=kept.writes, limits=window)
    assert held.outcome == "deny" and held.code == "held_deference", held.reason
    assert "after Custodian set it to blocked (run r-0)" in held.reason
    # Once their change is older than the window, the person is asked (queued), not held.
    asked = _rule(_observed(changed_hours_ago=24 * 15), writes=kept.writes, limits=window)
    assert asked.outcome == "queue" and asked.code != "held_deference", asked.reason


def test_a_sanctioned_move_under_a_persons_decision_runs_on_their_newer_word() -> None:
    block = _approved_block(72).model_copy(update={"operation": "set_task_status"})
    observed = _observed(_event("ev-go", 24, kind="note"), changed_hours_ago=72)
    moved = observed.model_copy(
        update={"workstreams": tuple(
            ws.model_copy(update={"tasks": tuple(
                t.model_copy(update={"status": "blocked"}) if t.id == "t-prog" else t
                for t in ws.tasks)})
            for ws in observed.workstreams)}
    )  # fmt: skip
    plan = plan_of(
        tasks_to_update=[{"task_id": "t-prog", "status": "in_progress", "evidence": ["ev-go"]}]
    )
    grounds = Grounds(recent=RecentWrites(NOW, (block,)), now=NOW, evidence=Evidence.of(moved))
    ruling = rule_plan(plan, moved, grounds)[0]
    assert ruling.outcome == "execute", ruling.reason
    assert "a person's newer word supports it: event ev-go, a note from 'ben'" in ruling.reason


# --- a grant that asks for evidence ------------------------------------------------------------


def test_a_grant_without_the_requirement_decodes_as_before() -> None:
    old = _grant().model_dump(mode="json")
    del old["evidence"]
    assert Grant.model_validate(old).evidence is None
    assert Grant.model_validate({**old, "evidence": "newer"}).evidence == "newer"


def test_a_grant_that_asks_for_evidence_covers_only_a_move_citing_a_newer_word() -> None:
    asks = (_grant(evidence="newer"),)
    fresh = _observed(_event("ev-new", 24), _event("ev-old", 72), changed_hours_ago=60)
    assert _rule(fresh, grants=asks).outcome == "queue"
    assert _rule(fresh, "ev-old", grants=asks).outcome == "queue"
    ruled = _rule(fresh, "ev-new", grants=asks)
    assert ruled.outcome == "execute" and ruled.grant == "grant-0123456789ab", ruled.reason
    assert "event ev-new" in ruled.reason
    # Without the requirement the grant covers the bare move, as it always did.
    assert _rule(_observed(changed_hours_ago=24 * 30), grants=(_grant(),)).outcome == "execute"


# --- end to end --------------------------------------------------------------------------------


def _blocker(hub: ReferenceHub, task_id: str) -> str:
    body = {"workstream_id": "web-ws-1", "task_id": task_id, "event_type": "blocker",
            "summary": "The vendor went quiet again.", "source": "ben"}  # fmt: skip
    response = httpx.post(f"{hub.url}/events", json=body, timeout=5)
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def _block(task_id: str, *evidence: str) -> dict[str, Any]:
    params: dict[str, Any] = {"task_id": task_id, "status": "blocked"}
    if evidence:
        params["evidence"] = list(evidence)
    return {"operation": "set_task_status", "params": params, "rationale": "stuck"}


def test_grants_issue_evidence_newer_is_listed_and_refused_where_nothing_is_cited(
    cli: Cli, small_hub: ReferenceHub
) -> None:
    grant = cli.issue(small_hub.url, "--max", "3", "--expires", "7d", "--evidence", "newer")
    [listed] = cli.grants()
    assert listed["id"] == grant and listed["evidence"] == "newer"
    done = cli.refused("--max", "1", "--expires", "1d", "--evidence", "newer",
                       op="create_task", hub_url=small_hub.url)  # fmt: skip
    assert "only a status write" in done.stderr


def test_a_grant_on_evidence_carries_a_block_over_a_persons_change_and_the_note_cites_it(
    cli: Cli, small_hub: ReferenceHub
) -> None:
    cli.issue(small_hub.url, "--max", "3", "--expires", "7d", "--where", "status=blocked",
              "--evidence", "newer")  # fmt: skip
    patched = httpx.patch(f"{small_hub.url}/tasks/web-t-4", json={"status": "todo"}, timeout=5)
    assert patched.status_code == 200  # a person's change on the hub
    [bare] = cli.run(small_hub.url, _block("web-t-4"))["items"]
    assert bare["outcome"] == "queued" and bare.get("grant") is None, bare
    cli.ok("approvals", "reject", bare["approval_id"], "--by", "ana", "--reason", "not yet")
    event = _blocker(small_hub, "web-t-4")
    summary = cli.run(small_hub.url, _block("web-t-4", event))
    [item] = summary["items"]
    assert item["outcome"] == "executed" and item.get("grant"), json.dumps(summary, indent=1)
    assert hub_get(small_hub, "/tasks/web-t-4")["status"] == "blocked"
    assert f"a person's newer word supports it: event {event}" in note_of(summary)


def test_the_offline_planner_raises_no_flag_about_a_move_a_person_just_approved(
    cli: Cli, small_hub: ReferenceHub
) -> None:
    [item] = cli.run(small_hub.url, _block("web-t-1"))["items"]
    assert item["outcome"] == "queued", item
    cli.ok("approvals", "approve", item["approval_id"], "--by", "ana", "--hub", small_hub.url)
    assert hub_get(small_hub, "/tasks/web-t-1")["status"] == "blocked"
    summary = cli.run(small_hub.url, llm="offline")
    flagged = [i["target"] for i in summary["items"] if i["operation"] == "flag_for_human"]
    assert "web-t-1" not in flagged, summary["items"]
    assert "Left alone, as a person recently set or approved their status: web-t-1." in (
        note_of(summary)
    )
