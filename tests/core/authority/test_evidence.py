"""Evidence before a status changes: the pure rule, and scenarios against the reference hub."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from custodian_hub import ReferenceHub
from custodian_runtime.core.authority.authorize import authorize
from custodian_runtime.core.authority.evidence import Evidence, own_write_ids
from custodian_runtime.core.authority.own_writes import OwnWrite
from custodian_runtime.core.contract import DomainSummary, ProgressEvent
from custodian_runtime.core.plan.extract import extract_plan
from support.authority import NOW, plan_of, website
from support.runs import CANON, hub_get, run_cli, run_plan


def _event(
    event_id: str,
    task_id: str | None = "t-prog",
    source: str = "ana",
    summary: str = "done",
    event_type: str = "milestone",
) -> ProgressEvent:
    return ProgressEvent(
        id=event_id,
        workstream_id="ws-web",
        task_id=task_id,
        event_type=event_type,  # type: ignore[arg-type]
        summary=summary,
        source=source,
        created_at=NOW - timedelta(hours=1),
    )


def _observed(*events: ProgressEvent) -> DomainSummary:
    return website().model_copy(update={"recent_events": events})


def _rule(update: dict[str, Any], observed: DomainSummary, **kw: Any) -> tuple[str, str]:
    ruling = authorize(plan_of(tasks_to_update=[update]), observed, **kw)[0]
    return ruling.outcome, ruling.reason


def test_a_status_change_with_a_persons_event_on_the_task_executes() -> None:
    update = {"task_id": "t-prog", "status": "done", "evidence": ["ev-1"]}
    assert _rule(update, _observed(_event("ev-1")))[0] == "execute"


def test_done_citing_only_a_note_is_queued_naming_what_was_missing() -> None:
    update = {"task_id": "t-prog", "status": "done", "evidence": ["evt-301"]}
    outcome, reason = _rule(update, _observed(_event("evt-301", event_type="note")))
    assert outcome == "queue"
    assert "queued for a person's approval" in reason
    assert "done needs a milestone or status_change event among its evidence" in reason
    assert "(evt-301 is a note)" in reason


def test_done_citing_no_milestone_names_each_cited_events_type() -> None:
    events = (
        _event("ev-1", event_type="observation"),
        _event("ev-2", event_type="blocker"),
    )
    update = {"task_id": "t-prog", "status": "done", "evidence": ["ev-1", "ev-2"]}
    outcome, reason = _rule(update, _observed(*events))
    assert outcome == "queue"
    assert "(ev-1 is an observation, ev-2 is a blocker)" in reason


@pytest.mark.parametrize(
    ("kinds", "status", "task"),
    [
        (("milestone",), "done", "t-prog"),
        (("status_change",), "done", "t-prog"),
        (("note", "milestone"), "done", "t-prog"),
        (("note",), "in_progress", "t-todo"),
    ],
)
def test_done_with_a_milestone_or_status_change_and_in_progress_with_a_note_execute(
    kinds: tuple[str, ...], status: str, task: str
) -> None:
    events = tuple(_event(f"ev-{n}", task_id=task, event_type=kind) for n, kind in enumerate(kinds))
    update = {"task_id": task, "status": status, "evidence": [e.id for e in events]}
    assert _rule(update, _observed(*events))[0] == "execute"


@pytest.mark.parametrize(
    ("events", "evidence", "missing"),
    [
        ((), None, "it cites no evidence"),
        ((), ["ev-9"], "event ev-9 is not in this run's observation"),
        ((_event("ev-1", task_id="t-todo"),), ["ev-1"], "event ev-1 is on task t-todo"),
        ((_event("ev-1", task_id=None),), ["ev-1"], "event ev-1 is on no task"),
        ((_event("ev-1", source="custodian"),), ["ev-1"], "source is 'custodian'"),
        (
            (_event("ev-1", summary="Done. [custodian run 2026-x]"),),
            ["ev-1"],
            "carries Custodian's run mark",
        ),
        (
            (_event("ev-1"), _event("ev-2", task_id="t-todo")),
            ["ev-1", "ev-2"],
            "event ev-2 is on task t-todo",
        ),
    ],
)
def test_without_evidence_the_change_is_queued_with_what_was_missing(
    events: tuple[ProgressEvent, ...], evidence: list[str] | None, missing: str
) -> None:
    update: dict[str, Any] = {"task_id": "t-prog", "status": "done"}
    if evidence is not None:
        update["evidence"] = evidence
    outcome, reason = _rule(update, _observed(*events))
    assert outcome == "queue"
    assert "queued for a person's approval" in reason and missing in reason


def test_an_event_among_custodians_own_receipts_is_not_evidence() -> None:
    observed = _observed(_event("ev-1"))
    update = {"task_id": "t-prog", "status": "done", "evidence": ["ev-1"]}
    own = Evidence.of(observed, own_ids=["ev-1"])
    outcome, reason = _rule(update, observed, evidence=own)
    assert outcome == "queue" and "one of Custodian's own writes" in reason


def test_an_event_fetched_beyond_the_summary_counts() -> None:
    observed = _observed()
    update = {"task_id": "t-prog", "status": "done", "evidence": ["ev-old"]}
    fetched = Evidence.of(observed, [_event("ev-old")])
    assert _rule(update, observed, evidence=fetched)[0] == "execute"


def test_evidence_is_part_of_the_items_identity_and_bounded() -> None:
    one = plan_of(tasks_to_update=[{"task_id": "t-prog", "status": "done", "evidence": ["a"]}])
    two = plan_of(tasks_to_update=[{"task_id": "t-prog", "status": "done", "evidence": ["b"]}])
    assert one.items[0].fingerprint != two.items[0].fingerprint
    many = [f"ev-{n}" for n in range(6)]
    too_many = plan_of(tasks_to_update=[{"task_id": "t-prog", "status": "done", "evidence": many}])
    assert too_many.items[0].error is not None
    empty = plan_of(tasks_to_update=[{"task_id": "t-prog", "status": "done", "evidence": []}])
    assert empty.items[0].error is not None


# --- scenarios against the reference hub -----------------------------------------------------


def _post_event(
    hub: ReferenceHub, task: str, source: str, summary: str, event_type: str = "note"
) -> str:
    body = {
        "workstream_id": "web-ws-1",
        "task_id": task,
        "event_type": event_type,
        "summary": summary,
        "source": source,
    }
    response = httpx.post(f"{hub.url}/events", json=body)
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def test_a_cited_event_outside_the_summary_window_is_fetched_and_counts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    old = _post_event(small_hub, "web-t-1", "ana", "Pricing page shipped.", "milestone")
    for n in range(60):  # push it out of the summary's 50 recent events
        _post_event(small_hub, "web-t-3", "ben", f"draft {n}")
    summary = hub_get(small_hub, "/domains/website/summary")
    assert old not in {e["id"] for e in summary["recent_events"]}
    plan = {"tasks_to_update": [{"task_id": "web-t-1", "status": "done", "evidence": [old]}]}
    result = run_plan(tmp_path, monkeypatch, small_hub.url, plan, "--json")
    assert result.code == 0, result.stderr
    assert [a["operation"] for a in result.json()["executed"]] == ["update_task_status"]
    assert hub_get(small_hub, "/tasks/web-t-1")["status"] == "done"
    note = Path(result.json()["note"]).read_text(encoding="utf-8")
    assert f"status in_progress → done, evidence {old}" in note  # outside the summary: id only


def test_custodians_own_event_as_evidence_queues_and_the_hub_is_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    own = _post_event(small_hub, "web-t-1", "custodian", "Pricing page done.")
    other = _post_event(small_hub, "web-t-4", "ana", "CDN done.")
    mine = _post_event(small_hub, "web-t-4", "bot", "CDN done. [custodian run 2026-x]")
    plan = {
        "tasks_to_update": [
            {"task_id": "web-t-1", "status": "done", "evidence": [own]},
            {"task_id": "web-t-4", "status": "done", "evidence": [other, "ev-1", mine]},
            {"task_id": "web-t-3", "status": "in_progress"},
        ]
    }
    result = run_plan(tmp_path, monkeypatch, small_hub.url, plan, "--json")
    assert result.code == 0, result.stderr
    summary = result.json()
    assert summary["executed"] == [] and summary["denied"] == []
    reasons = {q["target"]: q["reason"] for q in summary["queued"]}
    assert "written by Custodian" in reasons["web-t-1"]
    assert f"event {mine} was written by Custodian" in reasons["web-t-4"]
    assert "cites no evidence" in reasons["web-t-3"]
    for task, status in (
        ("web-t-1", "in_progress"),
        ("web-t-4", "in_progress"),
        ("web-t-3", "todo"),
    ):
        assert hub_get(small_hub, f"/tasks/{task}")["status"] == status
    note = Path(summary["note"]).read_text(encoding="utf-8")
    said = "“CDN done.”, ev-1 “CDN config deployed to production and verified.”"
    assert f"status in_progress → done, evidence {other} {said}, {mine} “CDN done." in note
    assert "status todo → in_progress, no evidence cited" in note


def test_a_queued_change_a_person_approves_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    plan = {"tasks_to_update": [{"task_id": "web-t-3", "status": "in_progress"}]}
    summary = run_plan(tmp_path, monkeypatch, small_hub.url, plan, "--json").json()
    approval = summary["queued"][0]["approval_id"]
    argv = ["approvals", "approve", approval, "--by", "ana", "--hub", small_hub.url]
    argv += ["--memory", str(tmp_path / "memory"), "--canon", str(CANON)]
    approved = run_cli(argv, tmp_path, monkeypatch)
    assert approved.code == 0, approved.stderr
    assert hub_get(small_hub, "/tasks/web-t-3")["status"] == "in_progress"


def test_the_offline_planner_cites_a_persons_event_and_is_quiet_the_second_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = tmp_path / "memory"
    argv = ["run", "--domain", "website", "--hub", "embedded", "--llm", "offline", "--json"]
    argv += ["--memory", str(memory), "--canon", str(CANON), "--force"]
    first = run_cli(argv, tmp_path, monkeypatch)
    assert first.code == 0, first.stderr
    assert first.json()["denied"] == []
    second = run_cli(argv, tmp_path, monkeypatch)
    assert second.code == 0, second.stderr
    assert second.json()["denied"] == []
    assert second.json()["executed"] == []
    for outcome in (*first.json()["executed"], *first.json()["queued"]):
        assert outcome["target"] not in ("web-ws-4", "web-ws-5")  # paused and done: no events


def test_offline_done_comes_only_with_a_persons_event() -> None:
    from custodian_runtime.core.tooling.offline_planner import offline_plan
    from custodian_runtime.core.tooling.planning_facts import PlanningFacts

    by_person = _event("ev-1", summary="Work is done and merged.")
    by_itself = _event("ev-2", source="custodian", summary="Work is done.")
    for events, expected in (((by_person,), [["ev-1"]]), ((by_itself,), [])):
        facts = PlanningFacts(domain="website", now=NOW, summary=_observed(*events))
        plan = extract_plan(offline_plan(facts))
        document = json.loads(plan.raw_json)
        assert [u["evidence"] for u in document["tasks_to_update"]] == expected
        rulings = authorize(plan, facts.summary)
        updates = [r for r in rulings if r.item.operation == "update_task_status"]
        assert all(r.outcome == "execute" for r in updates)


def test_an_event_custodian_wrote_weeks_ago_is_still_its_own() -> None:
    """The checkpoint keeps own writes for 31 days; the journal tail alone would have forgotten."""
    kept = [
        OwnWrite(
            at="2026-11-01T08:00:00.000000Z",
            run_id="r-old",
            index=0,
            operation="add_progress_event",
            hub_id="ev-1",
        )
    ]
    assert own_write_ids([], kept) == frozenset({"ev-1"})
    observed = _observed(_event("ev-1"))
    update = {"task_id": "t-prog", "status": "done", "evidence": ["ev-1"]}
    own = Evidence.of(observed, own_ids=own_write_ids([], kept))
    outcome, reason = _rule(update, observed, evidence=own)
    assert outcome == "queue" and "one of Custodian's own writes" in reason
