"""Timestamps from the future: clamped for staleness, marked suspect, never hiding a stale task."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from custodian_runtime.core._timestamps import activity_age
from custodian_runtime.core.context.prompt import build_view
from custodian_runtime.core.contract import DomainSummary, Task
from custodian_runtime.core.plan.extract import extract_plan
from custodian_runtime.core.tooling.offline_planner import offline_plan
from custodian_runtime.core.tooling.planning_facts import PlanningFacts
from test_authority_support import NOW, workstream
from test_context_fixtures import typical_inputs

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
