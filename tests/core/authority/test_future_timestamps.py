"""Timestamps from the future: clamped for staleness, marked suspect, never hiding a stale task."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from test_newer_word import HUB, _grant, _observed

from conftest import HubClock
from custodian_hub import ReferenceHub, load_seed
from custodian_runtime.core._timestamps import SKEW, activity_age
from custodian_runtime.core.authority.authorize import Ruling
from custodian_runtime.core.authority.budgets import RecentWrites
from custodian_runtime.core.authority.evidence import Evidence, evidence_problem, newer_word
from custodian_runtime.core.context.prompt import build_view
from custodian_runtime.core.contract import DomainSummary, ProgressEvent, Task
from custodian_runtime.core.plan.extract import extract_plan
from custodian_runtime.core.ruling.path import Grounds, rule_plan
from custodian_runtime.core.standing.grants import Grant
from custodian_runtime.core.standing.record import Standing
from custodian_runtime.core.tooling.offline_planner import offline_plan
from custodian_runtime.core.tooling.planning_facts import PlanningFacts
from support.authority import NOW, plan_of, task, website, workstream
from support.context import typical_inputs
from support.runs import hub_get, small_dataset
from support.standing import Cli, note_of

FAR = datetime(9999, 1, 1, tzinfo=UTC)


def _task(task_id: str, *, updated: datetime, created: datetime) -> Task:
    return Task(
        id=task_id,
        workstream_id="ws-web",
        title=f"Task {task_id}",
        status="in_progress",
        created_at=created,
        updated_at=updated,
    )


def _summary(*tasks: Task) -> DomainSummary:
    return DomainSummary(
        domain="website", generated_at=NOW, workstreams=(workstream("ws-web", "website", [*tasks]),)
    )


def _item(summary: DomainSummary, task_id: str) -> str:
    view = build_view(typical_inputs(summary=summary, now=NOW))
    items = [i for s in view.sections for i in s.items if task_id in i]
    assert len(items) == 1
    return items[0]


def test_a_task_updated_in_9999_is_not_fresh_its_age_counts_from_what_can_be_trusted() -> None:
    age = activity_age(FAR, NOW - timedelta(days=40), None, NOW)
    assert (age.days, age.suspect) == (40, True)
    unknown = activity_age(FAR, FAR, None, NOW)
    assert unknown.days is None and unknown.stale(14)
    near = activity_age(NOW + timedelta(minutes=1), NOW - timedelta(days=40), None, NOW)
    assert (near.days, near.suspect) == (0, False)  # a little clock skew is not suspect


def test_the_prompt_marks_a_future_time_suspect_and_the_task_stale() -> None:
    summary = _summary(
        _task("t-far", updated=FAR, created=NOW - timedelta(days=40)),
        _task("t-fresh", updated=NOW - timedelta(days=1), created=NOW - timedelta(days=2)),
    )
    far = _item(summary, "t-far")
    assert "9999" not in far
    assert "suspect" in far.lower() and "stale" in far.lower()
    fresh = _item(summary, "t-fresh")
    assert "suspect" not in fresh.lower() and "stale" not in fresh.lower()
    view = build_view(typical_inputs(summary=summary, now=NOW))
    in_progress = next(s for s in view.sections if s.key == "in_progress")
    assert "t-far" in in_progress.items[0]  # least recent activity first, not last


def test_the_offline_planner_flags_a_task_whose_times_are_all_in_the_future() -> None:
    summary = _summary(_task("t-far", updated=FAR, created=FAR))
    text = offline_plan(PlanningFacts(domain="website", now=NOW, summary=summary))
    flags = json.loads(extract_plan(text).raw_json)["tasks_to_flag"]
    assert [f["task_id"] for f in flags] == ["t-far"]
    assert "future" in flags[0]["note"] and "unknown" in flags[0]["note"]


# --- time from the hub: an event dated ahead of the hub's own clock (issue #36) ---------------


def _hub_clock_ahead_then_eli_blocks(hub: ReferenceHub, clock: HubClock) -> tuple[str, str]:
    """The hub's clock runs 3 h ahead while ben posts a milestone on web-t-4; set right, Eli
    then sets the task blocked on the hub and says so. The milestone's id and Eli's event's."""
    clock.advance(timedelta(hours=3))
    shipped = _post(hub, "milestone", "ben", "Deployed the CDN config: done.")
    clock.advance(timedelta(hours=-3))
    patched = httpx.patch(f"{hub.url}/tasks/web-t-4", json={"status": "blocked"}, timeout=5)
    assert patched.status_code == 200, patched.text
    said = _post(hub, "status_change", "eli", "Set to blocked: the CDN rollback failed.")
    return shipped, said


def _post(hub: ReferenceHub, kind: str, source: str, summary: str) -> str:
    body = {"workstream_id": "web-ws-1", "task_id": "web-t-4", "event_type": kind,
            "summary": summary, "source": source}  # fmt: skip
    response = httpx.post(f"{hub.url}/events", json=body, timeout=5)
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


@pytest.fixture
def clock() -> HubClock:
    """The hub's clock: the wall clock when the test began, moved by hand."""
    return HubClock(datetime.now(UTC))


@pytest.fixture
def clocked_hub(tmp_path: Path, clock: HubClock) -> Iterator[ReferenceHub]:
    """The small dataset on a hub whose clock is `clock`."""
    db = tmp_path / "hub.sqlite3"
    load_seed(db, small_dataset())
    with ReferenceHub(db, clock=clock) as running:
        yield running


@pytest.mark.parametrize("operation", ["update_task_status", "set_task_status"])
def test_an_event_dated_ahead_of_the_hub_does_not_undo_a_persons_later_change(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    clocked_hub: ReferenceHub,
    clock: HubClock,
    operation: str,
) -> None:
    shipped, said = _hub_clock_ahead_then_eli_blocks(clocked_hub, clock)
    cli = Cli(tmp_path, monkeypatch)
    move = {"task_id": "web-t-4", "status": "done", "evidence": [shipped]}
    if operation == "update_task_status":
        summary = cli.run(clocked_hub.url, plan={"tasks_to_update": [move]})
    else:
        proposal = {"operation": operation, "params": move, "rationale": "shipped"}
        summary = cli.run(clocked_hub.url, proposal)
    [item] = summary["items"]
    assert hub_get(clocked_hub, "/tasks/web-t-4")["status"] == "blocked", item
    assert item["outcome"] != "executed", item
    note = note_of(summary)
    assert f"event {shipped} is dated" in note and "ahead of the hub's own time" in note, note
    assert "no evidence" in note and f"(event {said})" in note  # Eli's word holds


def test_an_event_ahead_of_the_hubs_generated_at_is_no_evidence_a_little_skew_is() -> None:
    said = _person_event("ev-said", NOW - timedelta(hours=1), "status_change")
    for ahead, holds in ((timedelta(hours=2), False), (SKEW - timedelta(seconds=1), True)):
        shipped = _person_event("ev-ship", NOW + ahead, "milestone")
        seen = Evidence.of(_blocked_by_eli(said, shipped))
        move = {"task_id": "t-prog", "status": "done", "evidence": ["ev-ship"]}
        problem = evidence_problem(move, seen)
        assert (problem is None) is holds, problem
        blocked = _blocked_by_eli(said, shipped).workstreams[0].tasks
        task = next(t for t in blocked if t.id == "t-prog")
        assert (newer_word(move, task, seen) is not None) is holds
    assert problem is None


def _person_event(event_id: str, at: datetime, kind: str) -> ProgressEvent:
    return ProgressEvent(
        id=event_id, workstream_id="ws-web", task_id="t-prog", event_type=kind,  # type: ignore[arg-type]
        summary="Deployed: done.", source="eli", created_at=at,
    )  # fmt: skip


def _blocked_by_eli(*events: ProgressEvent) -> DomainSummary:
    """website() (generated at NOW) with t-prog set blocked an hour ago, and `events`."""
    observed = website()
    moved = task("t-prog", "ws-web", "blocked").model_copy(
        update={"updated_at": NOW - timedelta(hours=1)}
    )
    workstreams = tuple(
        ws.model_copy(update={"tasks": tuple(moved if t.id == "t-prog" else t for t in ws.tasks)})
        for ws in observed.workstreams
    )
    return observed.model_copy(update={"workstreams": workstreams, "recent_events": events})


def test_no_grant_carries_a_write_over_a_persons_change_issued_after_it_or_ahead_of_the_hub() -> (
    None
):
    observed = _observed(changed_hours_ago=2)  # a person's change, generated at NOW
    fresh = _grant().model_copy(update={"issued_at": NOW - timedelta(hours=1)})
    ahead = _grant().model_copy(update={"issued_at": NOW + timedelta(hours=1)})

    def ruled(grant: Grant) -> Ruling:
        # This host's clock reads 2 h ahead of the hub.
        grounds = Grounds(
            recent=RecentWrites(NOW), standing=Standing(grants=(grant,)), hub_id=HUB,
            now=NOW + timedelta(hours=2), evidence=Evidence.of(observed),
        )  # fmt: skip
        plan = plan_of(proposals=[{"operation": "set_task_status", "params": _to_blocked}])
        return rule_plan(plan, observed, grounds)[0]

    for grant in (fresh, ahead):  # a grant names no task: neither is a word on this one
        kept = ruled(grant)
        assert kept.outcome == "queue" and kept.grant is None, kept.reason
        assert kept.code == "deferred" and "changed on the hub" in kept.reason, kept.reason


_to_blocked = {"task_id": "t-prog", "status": "blocked"}


def test_the_offline_planner_cites_no_event_dated_ahead_of_the_hub() -> None:
    def done_for(at: datetime) -> list[str]:
        shipped = _person_event("ev-ship", at, "milestone")
        moved = task("t-prog", "ws-web", "in_progress").model_copy(
            update={"updated_at": NOW - timedelta(days=3)}
        )
        observed = _blocked_by_eli(shipped)
        workstreams = tuple(
            ws.model_copy(
                update={"tasks": tuple(moved if t.id == "t-prog" else t for t in ws.tasks)}
            )
            for ws in observed.workstreams
        )
        summary = observed.model_copy(update={"workstreams": workstreams})
        text = offline_plan(PlanningFacts(domain="website", now=NOW, summary=summary))
        updates = json.loads(extract_plan(text).raw_json)["tasks_to_update"]
        return [u["task_id"] for u in updates]

    assert done_for(NOW - timedelta(hours=1)) == ["t-prog"]
    assert done_for(NOW + timedelta(hours=2)) == []
