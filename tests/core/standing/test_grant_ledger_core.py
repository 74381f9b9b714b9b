"""The pure grant ledger: re-send a killed grant write or close it, and replay's standing."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from types import MappingProxyType

from custodian_runtime.core.authority.authorize import ReasonCode, Ruling
from custodian_runtime.core.fold.prune import SegmentFacts, decide
from custodian_runtime.core.journal.records import make_record
from custodian_runtime.core.limits import Limits
from custodian_runtime.core.plan.extract import fingerprint
from custodian_runtime.core.ruling.path import as_item
from custodian_runtime.core.standing.grants import Grant
from custodian_runtime.core.standing.ledger import (
    GrantDecision,
    grant_standing,
    grant_verdict,
    rederived,
)
from custodian_runtime.core.standing.modes import Modes, ModeSetting
from custodian_runtime.core.standing.record import Standing
from custodian_runtime.core.standing.rule import Ground, apply_standing

NOW = datetime(2026, 5, 1, 12, tzinfo=UTC)
GID = "grant-0123456789ab"
BLOCK = {"task_id": "web-t-4", "status": "blocked"}


def _grant(**changes: object) -> Grant:
    fields: dict[str, object] = {
        "id": GID, "domain": "website", "operation": "set_task_status", "max_uses": 1,
        "expires_at": NOW + timedelta(days=7), "by": "ana", "reason": "routine",
        "hub_id": "hub_id:h1", "issued_at": NOW - timedelta(days=1),
    }  # fmt: skip
    return Grant.model_validate({**fields, **changes})


def _standing(grant: Grant | None, uses: int = 1, modes: Modes | None = None) -> Standing:
    grants = () if grant is None else (grant,)
    return Standing(modes or Modes(), grants, MappingProxyType({GID: uses} if uses else {}))


def _queued(params: dict[str, str] = BLOCK, code: ReasonCode = "routine") -> Ruling:
    item = as_item("set_task_status", params, fingerprint("set_task_status", params))
    return Ruling(item, "queue", "Item #0 is queued for a person's approval.", code=code)


def grant_decision(grant_id: str, ruling: Ruling, ground: Ground) -> GrantDecision:
    """Re-send or close an open write of `grant_id`, as the one ruling composes the parts."""
    only = grant_standing(grant_id, ruling.item, ground)
    if isinstance(only, GrantDecision):
        return only
    [ruled] = apply_standing((ruling,), replace(ground, standing=only))
    return grant_verdict(grant_id, ruled)


def _decide(standing: Standing, ruling: Ruling | None = None, hub: str = "hub_id:h1") -> str:
    ground = Ground(standing, hub, NOW, Limits())
    decided = grant_decision(GID, ruling or _queued(), ground)
    return ("resend: " if decided.allowed else "close: ") + decided.reason


def test_its_own_use_does_not_use_the_grant_up() -> None:
    # max_uses 1, and the one grant_used record is this very write's.
    assert _decide(_standing(_grant())).startswith(
        f"resend: Plan item #0 (set_task_status) executes under grant {GID}, issued by"
    )


def test_each_reason_to_close_is_named() -> None:
    other = Modes().with_setting(ModeSetting("set_task_status", "off", "bo", "pause", NOW))
    cases = {
        "not recorded in the domain's journal": (_standing(None), _queued(), "hub_id:h1"),
        "is used up": (_standing(_grant(), uses=2), _queued(), "hub_id:h1"),
        "is revoked": (_standing(_grant(revoked=True)), _queued(), "hub_id:h1"),
        "is expired": (_standing(_grant(expires_at=NOW)), _queued(), "hub_id:h1"),
        "not hub_id:h2": (_standing(_grant()), _queued(), "hub_id:h2"),
        "covers only status=blocked": (
            _standing(_grant(where={"status": "blocked"})),
            _queued({"task_id": "web-t-4", "status": "done"}),
            "hub_id:h1",
        ),
        "a person set set_task_status to off": (
            _standing(_grant(), modes=other), _queued(), "hub_id:h1",
        ),
        "queued for a person's approval": (
            _standing(_grant()), _queued(code="stated"), "hub_id:h1",
        ),
    }  # fmt: skip
    for why, (standing, ruling, hub) in cases.items():
        said = _decide(standing, ruling, hub)
        assert said.startswith("close: ") and why in said, (why, said)


def test_replay_accepts_a_kept_revoke_the_journal_records_later() -> None:
    journaled = _standing(_grant(), uses=0)
    kept = _standing(_grant(revoked=True), uses=0)
    derived, differ = rederived(kept, journaled, frozenset({GID}))
    assert differ == () and derived == kept
    _, differ = rederived(kept, journaled)
    assert differ == (f"the plan record keeps grant {GID} with revoked True (journal: False)",)


def test_replay_names_a_kept_grant_or_use_the_journal_does_not_record() -> None:
    derived, differ = rederived(_standing(_grant(max_uses=9), uses=2), _standing(None, uses=0))
    assert derived == _standing(None, uses=0)
    assert differ == (
        f"the plan record keeps grant {GID}, which the journal does not record",
        f"the plan record keeps 2 use(s) of grant {GID}, the journal records 0",
    )
    _, differ = rederived(_standing(_grant(max_uses=9), uses=0), _standing(_grant(), uses=0))
    assert differ == (f"the plan record keeps grant {GID} with max_uses 9 (journal: 1)",)
    _, differ = rederived(_standing(None, uses=0), _standing(_grant(), uses=0))
    assert differ == (f"the journal records grant {GID}, which the plan record does not keep",)


def test_a_prune_never_drops_a_grant_issued_before_a_kept_use_of_it() -> None:
    old, late = NOW - timedelta(days=60), NOW
    issued = make_record(None, "person-1", "website", "grant_issued", old,
                         {"grant": _grant().model_dump(mode="json")})  # fmt: skip
    use = {"grant_id": GID, "index": 0, "operation": "x", "fingerprint": "y"}
    used = make_record(issued, "r1", "website", "grant_used", late, use)
    newest = make_record(used, "r2", "website", "run_started", late, {})
    facts = []
    for record in (issued, used, newest):
        facts.append(SegmentFacts(record.seq))
        facts[-1].add(record)
    assert decide(facts, NOW - timedelta(days=31), []).drop == 0
    # Once its uses are as old, the issue goes with them.
    aged = make_record(issued, "r1", "website", "grant_used", old, used.data)
    facts[1] = SegmentFacts(2)
    facts[1].add(aged)
    assert decide(facts, NOW - timedelta(days=31), []).drop == 2
