"""The pure matcher of shadow items: what `landed` says, once, within 7 days, never Custodian's own.

And the agreement rate that counts them, with the suggestions it earns (core/standing/).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from custodian_runtime.core.authority.authorize import Ruling, authorize
from custodian_runtime.core.authority.own_writes import OwnWrite
from custodian_runtime.core.contract import DomainSummary, Task
from custodian_runtime.core.fold.checkpoint import compact, empty, fold
from custodian_runtime.core.journal.kinds import Entry, Shadowed, encode
from custodian_runtime.core.journal.records import Record, format_at, make_record
from custodian_runtime.core.limits import Limits
from custodian_runtime.core.standing.agreement import (
    SUGGEST_MIN_DECIDED,
    Agreement,
    agreement,
)
from custodian_runtime.core.standing.modes import Modes, ModeSetting
from custodian_runtime.core.standing.record import Standing
from custodian_runtime.core.standing.rule import Ground, apply_standing
from custodian_runtime.core.standing.shadow import (
    SHADOW_WINDOW,
    ShadowCount,
    matches,
    own_changes,
    shadow_counts,
    shadowed,
    waiting,
)
from support.authority import NOW, plan_of, proposal, task, website

HUB = "hub_id:test-hub"


def _shadow_rulings(*items: dict[str, Any], section: str = "proposals") -> tuple[Ruling, ...]:
    """The rulings of a plan whose operations a person set to shadow."""
    plan = plan_of(**{section: list(items)})
    rulings = authorize(plan, website(), Limits())
    modes = Modes()
    for r in rulings:
        setting = ModeSetting(r.item.operation, "shadow", "ana", "try it", NOW)
        modes = modes.with_setting(setting)
    return apply_standing(rulings, Ground(Standing(modes), None, NOW, Limits()))


def _after(prev: Record, run_id: str, entry: Entry, at: datetime) -> Record:
    kind, data = encode(entry)
    return make_record(prev, run_id, "website", kind, at, data)


def _journal(*entries: Shadowed, at: datetime = NOW) -> list[Record]:
    records: list[Record] = [make_record(None, "r1", "website", "run_started", at, {})]
    for entry in entries:
        records.append(_after(records[-1], "r1", entry, at))
    records.append(make_record(records[-1], "r1", "website", "finished", at, {}))
    return records


def _with_task(summary: DomainSummary, changed: Task) -> DomainSummary:
    workstreams = tuple(
        ws.model_copy(update={"tasks": tuple(
            changed if t.id == changed.id else t for t in ws.tasks
        ) + ((changed,) if ws.id == changed.workstream_id
             and changed.id not in {t.id for t in ws.tasks} else ())})
        for ws in summary.workstreams
    )  # fmt: skip
    return summary.model_copy(update={"workstreams": workstreams})


def _blocked_later() -> DomainSummary:
    return _with_task(website(), task("t-todo", "ws-web", "blocked"))


def _status_shadow(status: str = "blocked") -> Shadowed:
    [ruling] = _shadow_rulings(proposal("set_task_status", task_id="t-todo", status=status))
    entry = shadowed(ruling, website(), HUB)
    assert entry is not None
    return entry


def test_a_shadow_ruling_is_journaled_with_what_it_would_do_and_its_target_as_observed() -> None:
    [queued] = _shadow_rulings(proposal("set_task_status", task_id="t-todo", status="blocked"))
    assert queued.outcome == "deny" and queued.shadow == "queue"
    entry = shadowed(queued, website(), HUB)
    assert entry is not None and entry.would == "queue" and entry.hub == HUB
    assert entry.params == {"task_id": "t-todo", "status": "blocked"}
    assert (entry.observed or {})["task"]["status"] == "todo"
    [executed] = _shadow_rulings(
        {
            "workstream_id": "ws-web",
            "event_type": "note",
            "rests_on": ["t-prog"],
            "summary": "A note.",
        },
        section="progress_events",
    )
    assert executed.shadow == "execute"
    plain = authorize(plan_of(tasks_to_flag=[{"task_id": "t-todo", "note": "n"}]), website())
    assert shadowed(plain[0], website(), HUB) is None


def test_a_status_write_matches_only_the_status_it_sets_on_the_same_hub() -> None:
    records = _journal(_status_shadow())
    items = waiting(records, NOW + timedelta(days=1))
    [match] = matches(items, _blocked_later(), [], HUB)
    assert match.hub_id == "t-todo" and match.entry().shadow == records[1].ref
    assert match.report()["would"] == "queue"
    done = _with_task(website(), task("t-todo", "ws-web", "done"))
    assert matches(items, done, [], HUB) == []  # another status: no match
    assert matches(items, website(), [], HUB) == []  # unchanged
    assert matches(items, _blocked_later(), [], "hub_id:other") == []  # another hub


def test_a_change_custodian_made_itself_is_no_persons() -> None:
    records = _journal(_status_shadow())
    items = waiting(records, NOW + timedelta(days=1))
    later = format_at(NOW + timedelta(hours=2))
    mine = OwnWrite(at=later, run_id="r2", index=0, operation="set_task_status",
                    task_id="t-todo", status="blocked", by="person:ana")  # fmt: skip
    assert matches(items, _blocked_later(), own_changes([], [mine]), HUB) == []
    earlier = mine.model_copy(update={"at": format_at(NOW - timedelta(hours=2))})
    assert len(matches(items, _blocked_later(), own_changes([], [earlier]), HUB)) == 1
    # A write Custodian authorized (its receipt not folded yet) counts as its own too.
    authorized = make_record(
        records[-1], "r2", "website", "authorized", NOW + timedelta(hours=1),
        {"index": 0, "operation": "update_task_status",
         "params": {"task_id": "t-todo", "status": "blocked"}},
    )  # fmt: skip
    assert matches(items, _blocked_later(), own_changes([authorized], []), HUB) == []


def test_a_create_matches_a_new_item_with_its_title_and_a_flag_an_open_flag() -> None:
    [create] = _shadow_rulings(proposal("create_task", workstream_id="ws-web", title="Add a map"))
    [flag] = _shadow_rulings({"task_id": "t-todo", "note": "stuck"}, section="tasks_to_flag")
    entries = [shadowed(r, website(), HUB) for r in (create, flag)]
    records = _journal(*[e for e in entries if e is not None])
    items = waiting(records, NOW + timedelta(days=2))
    new = task("t-new", "ws-web", "todo").model_copy(update={"title": "add a map"})
    person_flag = website().open_flags[0].model_copy(update={"id": "f-2", "task_id": "t-todo"})
    later = _with_task(website(), new)
    later = later.model_copy(update={"open_flags": (*later.open_flags, person_flag)})
    found = {m.item.entry.operation: m.hub_id for m in matches(items, later, [], HUB)}
    assert found == {"create_task": "t-new", "flag_for_human": "f-2"}
    own = OwnWrite(at=format_at(NOW + timedelta(hours=1)), run_id="r2", index=0,
                   operation="create_task", hub_id="t-new", by="person:ana")  # fmt: skip
    mine = own_changes([], [own])
    assert [m.item.entry.operation for m in matches(items, later, mine, HUB)] == ["flag_for_human"]


def test_a_progress_event_is_found_only_by_its_run_mark_so_no_person_matches_it() -> None:
    [event] = _shadow_rulings(
        {
            "workstream_id": "ws-web",
            "event_type": "note",
            "rests_on": ["t-prog"],
            "summary": "Moved on.",
        },
        section="progress_events",
    )
    entry = shadowed(event, website(), HUB)
    assert entry is not None
    items = waiting(_journal(entry), NOW + timedelta(days=1))
    assert matches(items, website(), [], HUB) == []


def test_matched_once_and_never_past_seven_days() -> None:
    records = _journal(_status_shadow())
    [match] = matches(waiting(records, NOW + timedelta(days=1)), _blocked_later(), [], HUB)
    matched = _after(records[-1], "r2", match.entry(), NOW + timedelta(days=1))
    assert waiting([*records, matched], NOW + timedelta(days=1)) == []
    assert waiting(records, NOW + SHADOW_WINDOW) != []
    assert waiting(records, NOW + SHADOW_WINDOW + timedelta(seconds=1)) == []


def test_the_checkpoint_keeps_a_waiting_shadow_item_for_the_window_and_drops_a_matched_one() -> (
    None
):
    records = _journal(_status_shadow())
    later = [records[-1]]
    for n, days in enumerate((1, 2), start=2):  # later runs push everything else out
        at = NOW + timedelta(days=days)
        started = make_record(later[-1], f"r{n}", "website", "run_started", at, {})
        later += [started, make_record(started, f"r{n}", "website", "finished", at, {})]
    checkpoint = fold(fold(empty("website"), records), later[1:])
    assert checkpoint.records == compact([*records, *later[1:]])
    assert [r.kind for r in checkpoint.records].count("shadowed") == 1
    past = NOW + SHADOW_WINDOW + timedelta(minutes=1)
    tail = make_record(later[-1], "r9", "website", "run_started", past, {})
    assert "shadowed" not in {r.kind for r in fold(checkpoint, [tail]).records}
    [match] = matches(waiting(checkpoint.records, NOW), _blocked_later(), [], HUB)
    found = _after(later[-1], "r9", match.entry(), NOW + timedelta(days=3))
    ended = make_record(found, "r9", "website", "finished", NOW + timedelta(days=3), {})
    after = fold(checkpoint, [found, ended])
    assert "shadowed" not in {r.kind for r in after.records}
    assert waiting(after.records, NOW + timedelta(days=3)) == []


def test_shadow_counts_per_operation_in_the_window() -> None:
    records = _journal(_status_shadow(), _status_shadow("cancelled"))
    [match] = matches(waiting(records, NOW), _blocked_later(), [], HUB)
    matched = _after(records[-1], "r2", match.entry(), NOW)
    counts = shadow_counts([*records, matched], NOW - timedelta(days=1))
    assert counts == {"set_task_status": ShadowCount("set_task_status", 2, 1)}
    assert shadow_counts(records, NOW + timedelta(seconds=1)) == {}


def test_the_rate_counts_shadow_items_as_decided_and_expired_as_no_decision() -> None:
    row = Agreement("set_task_status", proposals=6, approved=3, rejected=1, expired=2,
                    shadow=4, shadow_matched=3)  # fmt: skip
    assert row.decided == 8 and row.rate == (3 + 3) / (3 + 1 + 4)
    assert Agreement("x").rate is None
    [only] = agreement([], NOW, 30, {"update_task_status": ShadowCount("update_task_status", 2)})
    assert (only.proposals, only.shadow, only.shadow_matched, only.rate) == (0, 2, 0, 0.0)


def test_suggestions_keep_the_thresholds_and_only_ever_print_a_command() -> None:
    n = SUGGEST_MIN_DECIDED
    shadow = Agreement("set_task_status", shadow=n, shadow_matched=n)
    assert shadow.suggestion("website", "shadow") == (
        "custodian policy set --domain website --operation set_task_status --mode ask "
        "--reason='policy report: 8 of 8 shadow items done the same by a person, "
        "lower bound 0.68'"
    )
    sanctioned = Agreement("update_task_status", shadow=n, shadow_matched=n)
    assert "--operation update_task_status --mode auto" in str(
        sanctioned.suggestion("website", "shadow")
    )
    assert (
        Agreement("set_task_status", shadow=n, shadow_matched=n - 2).suggestion("website", "shadow")
        is None
    )  # 6 of 8: a lower bound of 0.41
    assert (
        Agreement("set_task_status", shadow=n - 1, shadow_matched=n - 1).suggestion(
            "website", "shadow"
        )
        is None
    )  # too few
    mixed = Agreement("set_task_status", approved=6, rejected=0, shadow=4, shadow_matched=3)
    assert mixed.suggestion("website") is None  # 9 of 10: a lower bound of 0.60
    assert str(mixed.as_json("website")["none_because"]).startswith("below the threshold")
    clean = Agreement("set_task_status", approved=n)
    assert "grants issue" in str(clean.suggestion("website"))
    assert clean.suggestion("website", "off") is None
    assert Agreement("write_canon", approved=n).suggestion("website") is None
    progress = Agreement("add_progress_event", approved=n)
    assert "--mode auto" in str(progress.suggestion("website", "ask"))
    assert progress.suggestion("website", "auto") is None  # the mode it has
