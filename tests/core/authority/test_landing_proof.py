"""The core's rule for proving a write landed (core/ruling/proof.py), with no hub.

A status the task shows proves nothing and a version that moved proves nothing; only a probe of
the write's own key may, and a probe is allowed only when it can apply nothing (the carried
version is gone) and the hub still remembers keys (within 24 h). Reconcile follows the same rule.
"""

from __future__ import annotations

from datetime import timedelta

from custodian_runtime.core.contract import DomainSummary, Task
from custodian_runtime.core.plan.extract import fingerprint
from custodian_runtime.core.ruling.proof import landing_proof, probe_version
from custodian_runtime.core.ruling.reconcile import reconcile_step
from custodian_runtime.core.ruling.spine import PendingWrite
from support.authority import NOW, workstream

DONE = {"task_id": "web-t-1", "status": "done"}


def _observed(status: str, version: int | None) -> DomainSummary:
    task = Task(
        id="web-t-1", workstream_id="ws-web", title="Launch", status=status,
        created_at=NOW - timedelta(days=9), updated_at=NOW - timedelta(hours=1), version=version,
    )  # fmt: skip
    return DomainSummary(
        domain="website", generated_at=NOW, workstreams=(workstream("ws-web", "website", [task]),)
    )


def _write(
    carried: int | None, *, hours_ago: float = 1, op: str = "update_task_status"
) -> PendingWrite:
    planned = None if carried is None else {"status": "in_progress", "version": carried}
    at = (NOW - timedelta(hours=hours_ago)).isoformat()
    return PendingWrite(
        "r-killed", 0, op, DONE, "custodian-r-killed-k", fingerprint(op, DONE), 1, True,
        authorized_at=at, planned_on=planned,
    )  # fmt: skip


def test_a_probe_is_made_only_when_it_can_apply_nothing_and_the_hub_remembers_keys() -> None:
    moved = _observed("done", 4)
    assert probe_version(_write(3), moved, NOW)[0] == 3
    # Still at the carried version: a re-send could apply it, so it is no probe.
    version, why = probe_version(_write(4), moved, NOW)
    assert version is None and "could apply it" in why
    # Past the idempotency window, or with no version kept or shown: nothing can be asked.
    assert probe_version(_write(3, hours_ago=25), moved, NOW)[0] is None
    assert probe_version(_write(None), moved, NOW)[0] is None
    assert probe_version(_write(3), _observed("done", None), NOW)[0] is None


def test_a_value_the_hub_shows_is_proven_only_by_a_probe_or_a_write_that_never_left() -> None:
    moved = _observed("done", 4)
    probe = landing_proof(_write(3), "web-t-1", moved, NOW, sent=True)
    assert (probe.proof, probe.if_match) == ("probe", 3)
    never_sent = landing_proof(_write(3), "web-t-1", moved, NOW, sent=False)
    assert never_sent.proof == "not_landed" and "never left" in never_sent.reason
    late = landing_proof(_write(3, hours_ago=30), "web-t-1", moved, NOW, sent=True)
    assert late.proof == "unproven" and "24 h" in late.reason
    flag = {"task_id": "web-t-1", "note": "look"}
    raised = PendingWrite("r", 0, "flag_for_human", flag, "k", fingerprint("flag_for_human", flag),
                          1, True, authorized_at=NOW.isoformat())  # fmt: skip
    assert landing_proof(raised, "flag-1", moved, NOW, sent=True).proof == "unproven"


def test_reconcile_never_finds_a_status_write_by_the_status_the_task_shows() -> None:
    moved = _observed("done", 4)
    step = reconcile_step(_write(3), moved, (), NOW)
    assert (step.action, step.if_match, step.authority) == ("probe", 3, "sanctioned")
    # Past the window the status it shows proves nothing: expired, for a person.
    expired = reconcile_step(_write(3, hours_ago=25), moved, (), NOW)
    assert expired.action == "expired" and "proves nothing" in expired.reason
    # No version kept (a v1 hub): not found either; the status alone is no proof.
    unproven = reconcile_step(_write(None), moved, (), NOW)
    assert unproven.action != "found" and unproven.hub_id is None
