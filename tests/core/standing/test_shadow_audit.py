"""The spine check audits shadow items: a match names a shadow item, and only once (pure core)."""

from __future__ import annotations

from datetime import timedelta

from test_shadow_matcher import HUB, _after, _blocked_later, _shadow_rulings

from custodian_runtime.core.authority.authorize import Ruling
from custodian_runtime.core.journal.kinds import ShadowMatched
from custodian_runtime.core.journal.records import Record, make_record
from custodian_runtime.core.outcomes import ruling_data
from custodian_runtime.core.ruling.trace import Tracker
from custodian_runtime.core.standing.shadow import matches, shadowed, waiting
from support.authority import NOW, proposal, website

LATER = NOW + timedelta(days=1)


def _shadow_run(*, with_ruling: bool = True) -> list[Record]:
    """Run r1: the ruling shadow mode denied, then its `shadowed` record."""
    [ruling] = _shadow_rulings(proposal("set_task_status", task_id="t-todo", status="blocked"))
    records = [make_record(None, "r1", "website", "run_started", NOW, {})]
    if with_ruling:
        records.append(_after(records[-1], "r1", ruling_data(ruling), NOW))
    entry = shadowed(ruling, website(), HUB)
    assert entry is not None
    records.append(_after(records[-1], "r1", entry, NOW))
    records.append(make_record(records[-1], "r1", "website", "finished", NOW, {}))
    return records


def _matched(records: list[Record], run_id: str, entry: ShadowMatched) -> list[Record]:
    return [*records, _after(records[-1], run_id, entry, LATER)]


def _match_of(records: list[Record]) -> ShadowMatched:
    [match] = matches(waiting(records, LATER), _blocked_later(), [], HUB)
    return match.entry()


def _problems(records: list[Record]) -> list[str]:
    return [p.message for p in Tracker().walk(records).problems]


def test_a_match_of_a_shadow_item_once_is_clean() -> None:
    records = _shadow_run()
    assert _problems(_matched(records, "r2", _match_of(records))) == []


def test_a_second_match_of_the_same_shadow_item_is_flagged() -> None:
    records = _shadow_run()
    entry = _match_of(records)
    twice = _matched(_matched(records, "r2", entry), "r3", entry)
    [problem] = _problems(twice)
    assert problem.startswith(f"second match of the shadow item {entry.shadow}")


def test_a_match_naming_a_record_that_is_no_shadow_item_is_flagged() -> None:
    records = _shadow_run()
    forged = _match_of(records).model_copy(update={"shadow": records[0].ref})
    [problem] = _problems(_matched(records, "r2", forged))
    assert problem == f"matches {records[0].ref}, which is no shadowed record of this journal"


def test_a_match_of_a_record_outside_the_walk_is_not_judged() -> None:
    records = _shadow_run()
    entry = _match_of(records)
    # A prune or checkpoint dropped the shadow run's records: the match cannot be judged here.
    assert _problems(_matched(records, "r2", entry)[len(records) :]) == []


def test_a_shadow_item_without_a_denial_ruling_is_flagged() -> None:
    [problem] = _problems(_shadow_run(with_ruling=False))
    assert problem == "shadowed item #0 has no denial ruling in this run"


def test_rulings_shadow_mode_denied_are_denials() -> None:
    [ruling] = _shadow_rulings(proposal("set_task_status", task_id="t-todo", status="blocked"))
    assert isinstance(ruling, Ruling) and ruling.outcome == "deny" and ruling.shadow == "queue"
