"""The month's fourth world (bench/support_world.py), three days of one arm, so it cannot rot.

Three days: the model proposes blocks (with and without a newer word), a cancellation, new tasks,
a repeat of another workstream's task, work in a paused workstream and a decision to record;
Lena decides the tasks' items and Priya the decision, by the rules bench/support_people.py
writes down. The week Lena is away, and who decides then, is checked on the pure rules.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from types import ModuleType
from typing import Any


def test_three_days_of_the_support_world_are_decided_by_their_people_and_audited(
    bench: ModuleType, tmp_path: Path
) -> None:
    from month_figures import Arm
    from month_person import Ledger

    arm = Arm("today", levers=False, seed=7, ledger=Ledger())
    bench.live_month(bench.WORLDS["support"], arm, tmp_path, 3)
    assert arm.runs["exit 0"] == 3, arm.runs
    assert arm.against_rule == [] and arm.overridden == [] and arm.asked_again == []
    assert arm.written["harmful"] == 0 and arm.harmed_on_hub == 0
    assert set(arm.ledger.people) == {"lena", "priya"}
    assert arm.ledger.judged["approve"] > 0 and arm.ledger.judged["reject"] > 0
    rules = {why.split(": ", 1)[1] for why in arm.ledger.reasons}
    assert {"paused", "duplicate elsewhere", "no word"} <= rules, arm.ledger.reasons


def test_the_support_world_is_seeded_and_scripted_the_same_for_a_seed(bench: ModuleType) -> None:
    import support_world

    data = support_world.seed()
    assert len(data["tasks"]) == 192 and len(data["workstreams"]) == 12
    assert len({t["id"] for t in data["tasks"]}) == 192
    assert [w["id"] for w in data["workstreams"] if w["status"] == "paused"] == list(
        support_world.PAUSED
    )
    summary = {"workstreams": [{**w, "tasks": [t for t in data["tasks"]
                                               if t["workstream_id"] == w["id"]]}
                               for w in data["workstreams"]],
               "recent_events": data["events"], "open_decisions": data["decisions"],
               "open_flags": []}  # fmt: skip
    one = support_world.answer(summary, 5, 7)
    assert one == support_world.answer(summary, 5, 7) != support_world.answer(summary, 5, 8)
    assert support_world.harmful("set_task_status", {"task_id": "sup-t-000", "status": "blocked"})


def _seen(tasks: list[dict[str, Any]], events: list[dict[str, Any]], day: int, **more: Any) -> Any:
    from month_kit import Words
    from support_people import START, Seen

    workstreams = [
        {"id": "ws-a", "title": "Checkout", "status": "active", "tasks": tasks},
        {"id": "ws-p", "title": "Data export", "status": "paused", "tasks": []},
    ]
    summary = {"workstreams": workstreams, "recent_events": events, **more}
    return Seen.of(summary, Words(), START + timedelta(days=day, hours=1))


def test_lena_decides_tomas_stands_in_her_week_away_and_priya_decides_decisions(
    bench: ModuleType,
) -> None:
    from support_people import START, judge

    old = (START - timedelta(days=40)).isoformat()
    task = {"id": "t-1", "workstream_id": "ws-a", "title": "Fix the coupon field by Friday",
            "status": "todo", "updated_at": old}  # fmt: skip
    cancel = {"task_id": "t-1", "status": "cancelled"}
    # Lena keeps a task that promises a date; Tomas, in her week away, does not read titles.
    lena = judge("set_task_status", cancel, _seen([task], [], 3))
    assert (lena.approve, lena.by, lena.rule) == (False, "lena", "due")
    tomas = judge("set_task_status", cancel, _seen([task], [], 15))
    assert (tomas.approve, tomas.by) == (True, "tomas")
    # An item of a paused workstream waits for Lena that week, with her verdict.
    paused = judge("create_task", {"workstream_id": "ws-p", "title": "New"}, _seen([task], [], 15))
    assert (paused.waits, paused.by, paused.rule) == (True, "lena", "paused")
    # The lead's word: her note is the newest on the task; a newer blocker of the team, before it,
    # does not lift it, for Tomas either.
    working = {**task, "title": "Fix the coupon field", "status": "in_progress"}
    at = (START + timedelta(days=2)).isoformat()
    blocker = {"id": "e-1", "task_id": "t-1", "event_type": "blocker", "source": "ravi",
               "created_at": at}  # fmt: skip
    note = {**blocker, "id": "e-2", "event_type": "note", "source": "lena",
            "created_at": (START + timedelta(days=2, hours=1)).isoformat()}  # fmt: skip
    block = {"task_id": "t-1", "status": "blocked", "evidence": ["e-1"]}
    assert judge("set_task_status", block, _seen([working], [blocker], 3)).approve
    for day in (3, 16):
        assert judge("set_task_status", block, _seen([working], [blocker, note], day)).rule == (
            "lead"
        )
    # A duplicate in another workstream: Lena rejects it, Tomas looks only at its own.
    create = {"workstream_id": "ws-p2", "title": "Repair the coupon field, again"}
    assert judge("create_task", create, _seen([working], [], 3)).rule == "duplicate elsewhere"
    assert judge("create_task", create, _seen([working], [], 16)).approve
    # Priya: a resolution must be one of the options, and not too early.
    decision = {"id": "d-1", "title": "Which provider", "options": ["Stripe", "Adyen"],
                "created_at": (START - timedelta(days=1)).isoformat()}  # fmt: skip
    resolve = {"decision_id": "d-1", "resolution": "stripe"}
    early = judge("resolve_decision", resolve, _seen([], [], 1, open_decisions=[decision]))
    assert (early.by, early.rule) == ("priya", "too early")
    assert judge("resolve_decision", resolve, _seen([], [], 5, open_decisions=[decision])).approve
    other = {**resolve, "resolution": "whatever"}
    assert judge("resolve_decision", other, _seen([], [], 16, open_decisions=[decision])).rule == (
        "not an option"
    )
