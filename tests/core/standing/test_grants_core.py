"""The pure rules of modes and grants: which grant covers a proposal, or why none does."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from custodian_runtime.core import operations
from custodian_runtime.core.fold.checkpoint import compact, empty, fold
from custodian_runtime.core.fold.prune import SegmentFacts, droppable
from custodian_runtime.core.journal.records import make_record
from custodian_runtime.core.standing.grants import (
    Grant,
    covering,
    grant_problem,
    never_grantable,
    state_of,
)
from custodian_runtime.core.standing.modes import (
    Modes,
    default_mode,
    known_operations,
    mode_problem,
)
from custodian_runtime.core.standing.record import mode_seqs, standing_of

NOW = datetime(2026, 5, 1, 12, tzinfo=UTC)
BLOCK = {"task_id": "web-t-4", "status": "blocked"}


def _grant(**changes: object) -> Grant:
    fields: dict[str, object] = {
        "id": "grant-0123456789ab",
        "domain": "website",
        "operation": "set_task_status",
        "where": {"status": "blocked"},
        "max_uses": 2,
        "expires_at": NOW + timedelta(days=7),
        "by": "ana",
        "reason": "routine",
        "hub_id": "hub_id:h1",
        "issued_at": NOW - timedelta(days=1),
    }
    return Grant.model_validate({**fields, **changes})


def test_a_live_matching_grant_covers_the_proposal() -> None:
    cover = covering("set_task_status", BLOCK, [_grant()], {}, NOW, "hub_id:h1")
    assert cover.grant is not None and cover.grant.id == "grant-0123456789ab"


def test_each_reason_a_grant_does_not_cover_is_named() -> None:
    cases = {
        "is used up": (_grant(), {"grant-0123456789ab": 2}, "hub_id:h1", BLOCK),
        "is expired": (_grant(expires_at=NOW), {}, "hub_id:h1", BLOCK),
        "is revoked": (_grant(revoked=True), {}, "hub_id:h1", BLOCK),
        "is bound to hub hub_id:h1, not hub_id:h2": (_grant(), {}, "hub_id:h2", BLOCK),
        "covers only status=blocked": (_grant(), {}, "hub_id:h1", {**BLOCK, "status": "done"}),
    }
    for why, (grant, uses, hub, params) in cases.items():
        cover = covering("set_task_status", params, [grant], uses, NOW, hub)
        assert cover.grant is None
        assert any(why in reason for reason in cover.why_not), (why, cover.why_not)


def test_never_grantable_and_bounds() -> None:
    week = timedelta(days=7)
    assert "never grantable" in str(grant_problem("write_canon", 1, week))
    assert "never grantable" in str(grant_problem("resolve_decision", 1, week))
    assert "cannot be granted" in str(grant_problem("flag_for_human", 1, week))
    assert "at most 30 days" in str(grant_problem("create_task", 1, timedelta(days=31)))
    assert grant_problem("create_task", 5, timedelta(days=30)) is None
    assert state_of(_grant(), 1, NOW) == "live"


def test_modes_only_narrow() -> None:
    assert default_mode("flag_for_human") == "auto" and default_mode("create_task") == "ask"
    assert "cannot be set to auto" in str(mode_problem("create_task", "auto"))
    assert mode_problem("flag_for_human", "shadow") is None
    assert Modes().of("write_canon") == "ask"


def test_modes_and_grants_read_the_operations_registry() -> None:
    assert set(never_grantable()) == {"write_canon", "resolve_decision"}
    base = operations.spec("resolve_flag")
    bell = replace(base, name="ring_bell", never_granted="a bell is rung by a person's own hand")
    with operations.register(bell):
        assert "ring_bell" in known_operations() and Modes().of("ring_bell") == "ask"
        assert "by a person's own hand" in str(grant_problem("ring_bell", 1, timedelta(days=1)))
        assert mode_problem("ring_bell", "off") is None
    assert "unknown operation" in str(mode_problem("ring_bell", "off"))
    assert "ring_bell" not in Modes().as_record()


def test_the_checkpoint_keeps_grants_and_their_uses_across_runs() -> None:
    issued = make_record(
        None, "person-grant-1", "website", "grant_issued", NOW,
        {"grant": _grant().model_dump(mode="json")},
    )  # fmt: skip
    started = make_record(issued, "r1", "website", "run_started", NOW, {})
    used = make_record(
        started, "r1", "website", "grant_used", NOW,
        {"grant_id": "grant-0123456789ab", "index": 0},
    )  # fmt: skip
    finished = make_record(used, "r1", "website", "finished", NOW, {"status": "completed"})
    records = [issued, started, used, finished]
    later = [finished]
    for n in range(2, 6):  # later runs push everything else out of the checkpoint
        s = make_record(later[-1], f"r{n}", "website", "run_started", NOW, {})
        later += [s, make_record(s, f"r{n}", "website", "finished", NOW, {"status": "completed"})]
    checkpoint = fold(fold(empty("website"), records), later[1:])
    standing = standing_of(checkpoint.records)
    assert [g.id for g in standing.grants] == ["grant-0123456789ab"]
    assert standing.uses["grant-0123456789ab"] == 1
    assert {r.kind for r in compact(checkpoint.records)} >= {"grant_issued", "grant_used"}


def test_a_prune_keeps_the_segment_of_each_operations_latest_mode() -> None:
    first = make_record(
        None, "p1", "website", "policy_set", NOW, {"operation": "flag_for_human", "mode": "off"}
    )
    second = make_record(
        first, "p2", "website", "policy_set", NOW, {"operation": "flag_for_human", "mode": "ask"}
    )
    other = make_record(second, "r1", "website", "run_started", NOW, {})
    assert mode_seqs([first, second, other]) == [2]
    segments = [SegmentFacts(1, first), SegmentFacts(2, second), SegmentFacts(3, other)]
    assert droppable(segments, [2]) == 1
    assert droppable(segments, []) == 3
    assert Modes().of("flag_for_human") == "auto"
    assert standing_of([first, second]).modes.of("flag_for_human") == "ask"
