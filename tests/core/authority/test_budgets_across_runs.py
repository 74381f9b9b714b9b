"""Rolling budgets across runs (per domain, counted from the journal's checkpoint).

Ten forced runs by a model that keeps every per-run rule can't write more than the budgets
allow, can't flip one task back and forth, can't re-flag what a person resolved, and people's
events stay in the observed window however many events Custodian wrote.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from custodian_hub import ReferenceHub, load_seed
from custodian_runtime.core.authority.authorize import authorize
from custodian_runtime.core.authority.budgets import RecentWrites, wider_window
from custodian_runtime.core.authority.own_writes import OwnWrite
from custodian_runtime.core.fold.api import format_at
from custodian_runtime.core.limits import Limits
from custodian_runtime.run.observe import read_observation
from custodian_runtime.statehub.client import StateHubClient
from support.authority import NOW, plan_of, website
from support.runs import (
    _ts,
    hub_get,
    run_plan,
    small_dataset,
)


def _own(operation: str, hours_ago: float, n: int, **fields: Any) -> OwnWrite:
    at = format_at(NOW - timedelta(hours=hours_ago))
    return OwnWrite(at=at, run_id=f"r{n}", index=0, operation=operation, **fields)


def _events(count: int, hours_ago: float) -> tuple[OwnWrite, ...]:
    return tuple(_own("add_progress_event", hours_ago, n) for n in range(count))


def _event_plan(count: int) -> Any:
    return plan_of(
        progress_events=[
            {
                "workstream_id": "ws-web",
                "event_type": "note",
                "rests_on": ["t-prog"],
                "summary": f"Note {n}",
            }
            for n in range(count)
        ]
    )


def test_the_event_budget_counts_earlier_runs_and_names_itself() -> None:
    recent = RecentWrites(NOW, _events(38, hours_ago=3))
    rulings = authorize(_event_plan(3), website(), Limits(), None, recent=recent)
    assert [r.outcome for r in rulings] == ["execute", "execute", "deny"]
    assert "the rolling budget of 40 add_progress_event per 24 h for this domain is spent" in (
        rulings[2].reason
    )


def test_writes_older_than_the_window_do_not_count() -> None:
    recent = RecentWrites(NOW, _events(40, hours_ago=25))
    rulings = authorize(_event_plan(2), website(), Limits(), None, recent=recent)
    assert [r.outcome for r in rulings] == ["execute", "execute"]


def test_status_and_flag_budgets_are_configurable() -> None:
    recent = RecentWrites(
        NOW,
        tuple(_own("update_task_status", 1, n, task_id=f"x-{n}", status="done") for n in range(2))
        + tuple(_own("flag_for_human", 1, 10 + n, task_id=f"y-{n}") for n in range(3)),
    )
    plan = plan_of(
        tasks_to_update=[{"task_id": "t-todo", "status": "in_progress", "evidence": ["ev-t-todo"]}],
        tasks_to_flag=[{"task_id": "t-prog", "note": "look"}],
    )
    limits = Limits(budget_status_updates=2, budget_flags=3)
    rulings = authorize(plan, website(), limits, None, recent=recent)
    assert [r.outcome for r in rulings] == ["deny", "deny"]
    assert "rolling budget of 2 update_task_status per 24 h" in rulings[0].reason
    assert "rolling budget of 3 flag_for_human per 24 h" in rulings[1].reason


def test_one_status_change_of_a_task_per_window() -> None:
    plan = plan_of(
        tasks_to_update=[{"task_id": "t-prog", "status": "done", "evidence": ["ev-t-prog"]}]
    )
    writes = (_own("update_task_status", 3, 1, task_id="t-prog", status="in_progress"),)
    (ruling,) = authorize(plan, website(), Limits(), None, recent=RecentWrites(NOW, writes))
    assert ruling.outcome == "deny"
    assert (
        "the rolling budget of 1 status change(s) of one task per 24 h is spent: Custodian set "
        "task t-prog to in_progress at 2026-11-30T05:00:00.000000Z (run r1)"
    ) in ruling.reason
    later = RecentWrites(NOW + timedelta(hours=22), writes)
    (ruling,) = authorize(plan, website(), Limits(), None, recent=later)
    assert ruling.outcome == "execute"


def test_the_window_widens_only_when_custodians_events_fill_it() -> None:
    assert wider_window(["ana"] * 50, 50) is None
    assert wider_window(["custodian"] * 10 + ["ana"] * 39, 50) is None
    assert wider_window(["custodian"] * 50, 50) == 100
    assert wider_window(["custodian"] * 400, 400) == 500
    assert wider_window(["custodian"] * 500, 500) is None


def test_people_stay_visible_when_custodians_events_crowd_the_summary(tmp_path: Path) -> None:
    data = small_dataset()
    data["events"] += [
        {"id": f"ev-c{n}", "workstream_id": "web-ws-1", "event_type": "note",
         "summary": f"Custodian note {n}", "source": "custodian", "created_at": _ts(0.5)}
        for n in range(120)
    ]  # fmt: skip
    db = tmp_path / "hub.sqlite3"
    load_seed(db, data)
    with ReferenceHub(db) as hub, StateHubClient(hub.url) as client:
        seen = read_observation(client, "website").summary.recent_events
    assert "ev-1" in {e.id for e in seen}
    assert len(seen) == 121


# --- ten forced runs against the real hub ---------------------------------------------------


def _greedy_plan(hub: ReferenceHub, run: int) -> dict[str, Any]:
    """20 new events, a flip of web-t-1 citing a person's event, and a flag on web-t-3: every
    per-run rule kept. A person writes again after Custodian's first flip: evidence older than
    the task's last change (that flip) would queue the second before the budget is counted."""
    if run == 1:
        again = {"workstream_id": "web-ws-1", "task_id": "web-t-1", "event_type": "milestone",
                 "summary": "Pricing page checked again.", "source": "ana"}  # fmt: skip
        httpx.post(f"{hub.url}/events", json=again, timeout=5).raise_for_status()
    said = [e["id"] for e in hub_get(hub, "/events?task_id=web-t-1")["events"]]
    status = hub_get(hub, "/tasks/web-t-1")["status"]
    flip = "done" if status == "in_progress" else "in_progress"
    return {
        "progress_events": [
            {
                "workstream_id": "web-ws-1",
                "event_type": "note",
                "rests_on": ["web-t-1"],
                "summary": f"Run {run}, note {n}",
            }
            for n in range(20)
        ],
        "tasks_to_update": [{"task_id": "web-t-1", "status": flip, "evidence": said[:1]}],
        "tasks_to_flag": [{"task_id": "web-t-3", "note": "The announcement has no owner."}],
    }


def test_ten_forced_runs_cannot_exceed_the_rolling_budgets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    said = {"workstream_id": "web-ws-1", "task_id": "web-t-1", "event_type": "milestone",
            "summary": "The pricing page is live.", "source": "ana"}  # fmt: skip
    httpx.post(f"{small_hub.url}/events", json=said, timeout=5).raise_for_status()
    denied: list[str] = []
    for run in range(10):
        result = run_plan(
            tmp_path, monkeypatch, small_hub.url, _greedy_plan(small_hub, run), "--force", "--json"
        )
        assert result.code == 0, result.stderr
        denied += [d["reason"] for d in result.json()["denied"]]
        for flag in hub_get(small_hub, "/flags?domain=website&status=open")["flags"]:
            if flag["task_id"] == "web-t-3":  # a person resolves the flag each time
                httpx.patch(f"{small_hub.url}/flags/{flag['id']}", json={"status": "resolved"})
    events = hub_get(small_hub, "/events?domain=website&limit=1000")["events"]
    assert sum(1 for e in events if e["source"] == "custodian") == 40
    assert hub_get(small_hub, "/tasks/web-t-1")["version"] == 2  # changed once, not ten times
    flags = [f for f in hub_get(small_hub, "/flags?domain=website")["flags"]]
    assert sum(1 for f in flags if f["task_id"] == "web-t-3") == 1
    assert any("rolling budget of 40 add_progress_event per 24 h" in r for r in denied)
    assert any("rolling budget of 1 status change(s) of one task" in r for r in denied)
    summary = hub_get(small_hub, "/domains/website/summary")
    assert "ev-1" in {e["id"] for e in summary["recent_events"]}


def test_windows_longer_than_the_checkpoint_keeps_are_refused() -> None:
    from custodian_runtime.errors import ConfigError
    from custodian_runtime.settings.numbers import limits_from

    assert limits_from({"CUSTODIAN_DEFER_DAYS": "30"}).defer_days == 30
    with pytest.raises(ConfigError, match="CUSTODIAN_DEFER_DAYS must be at most 30"):
        limits_from({"CUSTODIAN_DEFER_DAYS": "31"})
    with pytest.raises(ConfigError, match="CUSTODIAN_BUDGET_WINDOW_HOURS must be at most 720"):
        limits_from({"CUSTODIAN_BUDGET_WINDOW_HOURS": "721"})


def test_a_run_keeps_only_the_writes_its_rules_count() -> None:
    from custodian_runtime.core.authority.budgets import recent_writes

    old_event = _own("add_progress_event", 48, 1)
    old_status = _own("update_task_status", 48, 2, task_id="t-prog", status="done")
    new_event = _own("add_progress_event", 2, 3)
    ancient = _own("flag_for_human", 24 * 20, 4, task_id="t-todo")
    # A 14-day deference window: the 20-day-old flag is past every window a rule counts.
    kept = recent_writes(Limits(defer_days=14), [old_event, old_status, new_event, ancient], NOW)
    assert [w.run_id for w in kept.writes] == ["r2", "r3"]
