"""A person's decision wins (CUSTODIAN_DEFER_DAYS, 30 by default).

When a person changed a task after Custodian set its status, Custodian may not change that
task's status on its own for the deference window: the item is queued with the history. A flag
Custodian raised and a person resolved is not raised again on its own, unless someone other than
Custodian wrote on the task since. The journal says what Custodian did; the hub what is true.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from custodian_hub import ReferenceHub
from custodian_runtime.core.authority.authorize import authorize
from custodian_runtime.core.authority.budgets import RecentWrites
from custodian_runtime.core.authority.own_writes import OwnWrite
from custodian_runtime.core.contract import ProgressEvent
from custodian_runtime.core.fold.api import format_at
from custodian_runtime.core.limits import Limits
from custodian_runtime.journal.person.queue import ApprovalStore
from support.authority import NOW, plan_of, website
from support.runs import hub_get, run_cli, run_plan

SET_AT = NOW - timedelta(days=2)


def _set_done(after_status: str = "done") -> OwnWrite:
    after = {"status": after_status, "updated_at": format_at(SET_AT), "version": None}
    return OwnWrite(
        at=format_at(SET_AT), run_id="r-7", index=0, operation="update_task_status",
        task_id="t-prog", status="done", after=after,
    )  # fmt: skip


def _cited_before_the_change() -> Any:
    """The domain with t-prog's milestone 36 hours old: after Custodian's write, before ana's."""
    summary = website()
    events = tuple(
        e.model_copy(update={"created_at": NOW - timedelta(hours=36)}) if e.id == "ev-t-prog" else e
        for e in summary.recent_events
    )
    return summary.model_copy(update={"recent_events": events})


DONE = plan_of(tasks_to_update=[{"task_id": "t-prog", "status": "done", "evidence": ["ev-t-prog"]}])


def test_a_status_a_person_changed_back_is_queued_with_the_history() -> None:
    # Custodian set t-prog done two days ago; the hub shows it in_progress, changed a day ago.
    recent = RecentWrites(NOW, (_set_done(),))
    (ruling,) = authorize(DONE, _cited_before_the_change(), Limits(), None, recent=recent)
    assert ruling.outcome == "queue"
    assert (
        "Custodian set task t-prog to done at 2026-11-28T08:00:00.000000Z (run r-7), and it was "
        "changed since by 'ana': the hub shows in_progress, updated at "
        f"2026-11-29T08:00:00Z. For {Limits().defer_days} days after a person's change, this "
        "task's status is a person's decision"
    ) in ruling.reason
    # A person's milestone newer than their change is their newer word: the ordinary rules apply.
    (ruling,) = authorize(DONE, website(), Limits(), None, recent=recent)
    assert ruling.outcome == "execute"
    assert "a person's newer word supports it: event ev-t-prog" in ruling.reason


def test_the_deference_ends_after_the_configured_days() -> None:
    writes, summary = (_set_done(),), _cited_before_the_change()

    def reason_at(days: float, limits: Limits) -> str:
        (ruling,) = authorize(
            DONE, summary, limits, None, recent=RecentWrites(NOW + timedelta(days=days), writes)
        )
        assert ruling.outcome == "queue"
        return ruling.reason

    history = "this task's status is a person's decision"
    older = "is older than the task's last change"
    # Counted from the person's change, a day before NOW: deferred for `defer_days`.
    days = Limits().defer_days
    assert history in reason_at(days - 3, Limits())
    # After it, evidence from before the person's change still cannot undo it (issue #28).
    assert history not in reason_at(days - 1, Limits()) and older in reason_at(days - 1, Limits())
    assert history not in reason_at(0, Limits(defer_days=1))


def test_a_task_nobody_touched_since_is_not_deferred() -> None:
    summary = website()
    web = summary.workstreams[0]
    moved = [
        t.model_copy(update={"status": "done", "updated_at": SET_AT}) if t.id == "t-prog" else t
        for t in web.tasks
    ]
    summary = summary.model_copy(
        update={"workstreams": (web.model_copy(update={"tasks": tuple(moved)}),
                                *summary.workstreams[1:])}
    )  # fmt: skip
    plan = plan_of(
        tasks_to_update=[{"task_id": "t-prog", "status": "in_progress", "evidence": ["ev-t-prog"]}]
    )
    (ruling,) = authorize(plan, summary, Limits(), None, recent=RecentWrites(NOW, (_set_done(),)))
    assert ruling.outcome == "execute"


def _flagged() -> OwnWrite:
    return OwnWrite(
        at=format_at(SET_AT), run_id="r-8", index=0, operation="flag_for_human",
        task_id="t-todo", hub_id="fl-9",
    )  # fmt: skip


def _event(source: str, at_offset: timedelta) -> ProgressEvent:
    return ProgressEvent(
        id=f"ev-{source}", workstream_id="ws-web", task_id="t-todo", event_type="note",
        summary="Looked at it.", source=source, created_at=SET_AT + at_offset,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("events", "outcome"),
    [
        ((), "queue"),
        ((_event("custodian", timedelta(hours=1)),), "queue"),
        ((_event("ana", -timedelta(hours=1)),), "queue"),
        ((_event("ana", timedelta(hours=1)),), "execute"),
        # Dated ahead of the hub's own time (generated at NOW): no word from anyone yet.
        ((_event("ana", timedelta(days=2, hours=3)),), "queue"),
    ],
)
def test_a_resolved_flag_is_raised_again_only_after_someone_else_wrote(
    events: tuple[ProgressEvent, ...], outcome: str
) -> None:
    summary = website().model_copy(update={"recent_events": events})
    plan = plan_of(tasks_to_flag=[{"task_id": "t-todo", "note": "Still no owner."}])
    (ruling,) = authorize(plan, summary, Limits(), None, recent=RecentWrites(NOW, (_flagged(),)))
    assert ruling.outcome == outcome
    if outcome == "queue":
        assert "a person resolved that flag" in ruling.reason and "fl-9" in ruling.reason


# --- scenarios against the real hub ---------------------------------------------------------


def _event_by(hub: ReferenceHub, source: str, task: str, summary: str, kind: str = "note") -> None:
    body = {"workstream_id": "web-ws-1", "task_id": task, "event_type": kind,
            "summary": summary, "source": source}  # fmt: skip
    httpx.post(f"{hub.url}/events", json=body, timeout=5).raise_for_status()


def test_a_person_setting_a_task_back_stops_the_tug_of_war(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    _event_by(small_hub, "ben", "web-t-1", "Pricing page shipped.", "milestone")
    (said,) = hub_get(small_hub, "/events?task_id=web-t-1")["events"]
    done = {"tasks_to_update": [{"task_id": "web-t-1", "status": "done", "evidence": [said["id"]]}]}
    first = run_plan(tmp_path, monkeypatch, small_hub.url, done, "--force", "--json")
    assert [e["operation"] for e in first.json()["executed"]] == ["update_task_status"]
    back = httpx.patch(f"{small_hub.url}/tasks/web-t-1", json={"status": "in_progress"}, timeout=5)
    back.raise_for_status()
    _event_by(small_hub, "ana", "web-t-1", "Not done: the pricing table is still wrong.")
    second = run_plan(tmp_path, monkeypatch, small_hub.url, done, "--force", "--json")
    assert second.code == 0, second.stderr
    assert second.json()["executed"] == [] and second.json()["queued"] == []
    # Held, not asked again: ana's setting it back is her decision, and it stands.
    (held,) = second.json()["denied"]
    assert held["operation"] == "update_task_status" and held["code"] == "held_deference"
    item = hub_get(small_hub, "/tasks/web-t-1")
    assert item["status"] == "in_progress" and item["version"] == 3
    reason = held["reason"]
    assert (
        "is held: 'ana' set task web-t-1 to in_progress after Custodian set it to done" in reason
        and f"(run {first.json()['run_id']})" in reason
    )
    assert "no newer word from a person supports the change" in reason
    note = Path(second.json()["note"]).read_text("utf-8")
    assert "### Held in deference to a person (1)" in note, note
    assert (
        "**Why:** held: 'ana' set task web-t-1 to in_progress after Custodian set it to done"
        in note
    )
    assert ApprovalStore(tmp_path / "memory").all("website", verify=False) == []
    # The journal keeps the hold's code, and `policy report` counts it.
    memory = str(tmp_path / "memory")
    report = run_cli(["policy", "report", "--domain", "website", "--memory", memory], tmp_path,
                     monkeypatch)  # fmt: skip
    assert report.code == 0, report.stderr
    assert "held in deference to a person: 1 in the last 30 days" in report.stdout
    as_json = run_cli(["policy", "report", "--domain", "website", "--memory", memory, "--json"],
                      tmp_path, monkeypatch).json()  # fmt: skip
    assert as_json["held_deference"] == 1


def test_a_resolved_flag_stays_resolved_until_a_person_writes_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    flag = {"tasks_to_flag": [{"task_id": "web-t-3", "note": "The announcement has no owner."}]}
    first = run_plan(tmp_path, monkeypatch, small_hub.url, flag, "--force", "--json")
    (raised,) = first.json()["executed"]
    httpx.patch(f"{small_hub.url}/flags/{raised['hub_id']}", json={"status": "resolved"}, timeout=5)
    second = run_plan(tmp_path, monkeypatch, small_hub.url, flag, "--force", "--json")
    assert second.json()["executed"] == [] and second.json()["queued"] == []
    (held,) = second.json()["denied"]
    assert held["code"] == "held_deference", held
    assert f"held: a person resolved flag {raised['hub_id']}" in held["reason"]
    _event_by(small_hub, "ben", "web-t-3", "Still nobody owns the announcement.")
    again = {"tasks_to_flag": [{"task_id": "web-t-3", "note": "Ben says: still no owner."}]}
    third = run_plan(tmp_path, monkeypatch, small_hub.url, again, "--force", "--json")
    assert [e["operation"] for e in third.json()["executed"]] == ["flag_for_human"]
    open_flags = hub_get(small_hub, "/flags?domain=website&status=open")["flags"]
    assert [f["task_id"] for f in open_flags].count("web-t-3") == 1
