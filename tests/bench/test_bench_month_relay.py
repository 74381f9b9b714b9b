"""The month's second world (bench/relay_world.py), six days of both arms, so it cannot rot.

Six days: the person reads the report on day 4, and on day 5's morning South sets back what
Custodian blocked on its own under what that issued.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType


def test_six_days_of_two_teams_reject_only_the_guarded_creates_and_break_no_rule(
    bench: ModuleType, tmp_path: Path
) -> None:
    arms = bench.both_arms(bench.WORLDS["relay"], tmp_path, 6, 7)
    today, levers = arms
    for arm in arms:
        assert arm.runs["exit 0"] == 6, arm.runs
        assert arm.written["harmful"] == 0 and arm.harmed_on_hub == 0
        assert arm.overridden == [] and arm.asked_again == []
        assert arm.ledger.judged["reject"] >= 1  # a new task in rel-ws-5
    assert today.ledger.judged.keys() <= {"approve", "reject"}
    assert levers.ledger.ran and today.ledger.ran == []
    assert levers.judged <= today.judged


def test_the_relay_world_is_seeded_and_its_harmful_class_is_the_guarded_creates(
    bench: ModuleType,
) -> None:
    import relay_world

    data = relay_world.seed()
    assert len(data["tasks"]) == 48 and len(data["workstreams"]) == 6
    assert relay_world.harmful("create_task", {"workstream_id": "rel-ws-5", "title": "x"})
    assert not relay_world.harmful("create_task", {"workstream_id": "rel-ws-4", "title": "x"})
    assert not relay_world.harmful("set_task_status", {"task_id": "rel-t-01", "status": "blocked"})
