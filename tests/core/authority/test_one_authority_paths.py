"""One authority, every path: reconcile and approvals rule from what a fresh run knows.

Finding 2: a status write authorized by a killed run is not re-sent over a person's change made
since; it is closed as stale, and the next plan decides. Finding 9: a status a person approved is
a person's decision, and the next run does not move it on its own. The property: the same write
in the same state gets the same ruling from a fresh plan, a reconcile and an approval.
"""

from __future__ import annotations

import ast
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import MappingProxyType
from typing import Any

import httpx
from hypothesis import example, given, settings
from hypothesis import strategies as st

from custodian_hub import ReferenceHub
from custodian_runtime.core.authority.budgets import RecentWrites
from custodian_runtime.core.authority.own_writes import OwnWrite
from custodian_runtime.core.authority.precondition import proposed_under
from custodian_runtime.core.contract import DomainSummary
from custodian_runtime.core.plan.extract import ProposedItem, fingerprint
from custodian_runtime.core.ruling.path import (
    Grounds,
    PersonDecision,
    UnderGrant,
    fresh_ruling,
    rule_write,
)
from custodian_runtime.core.ruling.reconcile import escalation
from custodian_runtime.core.ruling.spine import PendingWrite
from custodian_runtime.core.standing.grants import Grant
from custodian_runtime.core.standing.modes import Modes, ModeSetting
from custodian_runtime.core.standing.record import Standing
from support.paths import REPO
from support.runs import hub_get
from support.spine import (
    THREE_WRITES,
    WriteHold,
    custodian_cli,
    finish,
    held_hub,
    journal,
    kill_when_held,
    of_run,
    run_argv,
    start_run,
    write_plan,
)

QUIET = {"observations": ["Nothing needs doing."]}
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def _patch_status(hub: ReferenceHub, task_id: str, status: str) -> None:
    """A person's change on the hub, made directly (not through Custodian)."""
    response = httpx.patch(f"{hub.url}/tasks/{task_id}", json={"status": status}, timeout=10)
    assert response.status_code == 200, response.text


def test_reconcile_closes_a_write_whose_task_a_person_moved_since_as_stale(
    tmp_path: Path,
) -> None:
    memory = tmp_path / "memory"
    hold = WriteHold(nth=2, phase="before_commit")  # the status write on web-t-4
    llm = write_plan(tmp_path / "answer.md", THREE_WRITES)
    quiet = write_plan(tmp_path / "quiet.md", QUIET)
    with held_hub(tmp_path, hold) as hub:
        kill_when_held(
            tmp_path, run_argv(hub.url, llm, memory), hold, "the run never reached the status write"
        )
        hold.release(abort=True)  # the status never landed
        _patch_status(hub, "web-t-4", "blocked")  # a person decides, after the authorization

        code, out, err = finish(start_run(tmp_path, run_argv(hub.url, quiet, memory)))
        assert code == 0, err
        assert hub_get(hub, "/tasks/web-t-4")["status"] == "blocked"
        summary = json.loads(out)
        [item] = [r for r in summary["reconciled"] if r["operation"] == "update_task_status"]
        assert item["outcome"] == "stale", item
        assert "moved since the write was authorized" in item["reason"]
        rerun = summary["run_id"]
        records = journal(memory)
        # Its key was asked about once (a probe with the If-Match it carried, which applies
        # nothing): the hub did not replay it, so the write never landed.
        probes = [r for r in of_run(records, rerun, "dispatched") if r.data.get("reconciles")]
        assert len(probes) == 1
        assert [r.data["action"] for r in of_run(records, rerun, "reconciled")] == ["probe"]
        [stale] = [r for r in of_run(records, rerun, "stale") if r.data.get("reconciles")]
        assert stale.data["closed"] == "stale" and "did not replay" in stale.data["error"]
        assert stale.data["observed"]["status"] == "in_progress"  # as the seed has it
        note = Path(summary["note"]).read_text(encoding="utf-8")
        assert "closed as stale" in note

        # Settled for good, and the journal replays.
        code, out, err = finish(start_run(tmp_path, run_argv(hub.url, quiet, memory)))
        assert code == 0, err
        assert json.loads(out)["reconciled"] == []
        inspected = custodian_cli(
            tmp_path, "inspect", "--domain", "website", "--memory", str(memory)
        )
        assert inspected.stdout.rstrip().endswith("replay: ok"), inspected.stdout


def test_a_status_a_person_approved_is_not_moved_by_the_next_run(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    block = {
        "observations": ["web-t-4 waits on the vendor."],
        "proposals": [
            {
                "operation": "set_task_status",
                "params": {"task_id": "web-t-4", "status": "blocked"},
                "rationale": "the vendor has not answered",
            }
        ],
    }
    done = {
        "observations": ["web-t-4 was verified (ev-1)."],
        "tasks_to_update": [
            {"task_id": "web-t-4", "status": "done", "evidence": ["ev-1"], "reason": "ev-1"}
        ],
    }
    with held_hub(tmp_path, None) as hub:
        code, out, err = finish(
            start_run(tmp_path, run_argv(hub.url, write_plan(tmp_path / "b.md", block), memory))
        )
        assert code == 0, err
        [queued] = [o for o in json.loads(out)["items"] if o["outcome"] == "queued"]
        approved = custodian_cli(
            tmp_path, "approvals", "approve", queued["approval_id"], "--by", "ana",
            "--hub", hub.url, "--memory", str(memory),
        )  # fmt: skip
        assert approved.returncode == 0, approved.stderr
        assert hub_get(hub, "/tasks/web-t-4")["status"] == "blocked"

        llm = write_plan(tmp_path / "d.md", done)
        code, out, err = finish(start_run(tmp_path, run_argv(hub.url, llm, memory, "--force")))
        assert code == 0, err
        assert hub_get(hub, "/tasks/web-t-4")["status"] == "blocked"
        [item] = json.loads(out)["items"]
        # Held, not asked again: her approval of blocked stands until a newer word of hers.
        assert item["outcome"] == "denied" and item["code"] == "held_deference", item
        assert "held: ana approved setting task web-t-4 to blocked" in item["reason"]


# --- the property: one function, three paths -------------------------------------------------

STATUSES = ("todo", "in_progress", "blocked", "done", "cancelled")


def _summary(status: str, version: int, events: list[dict[str, Any]]) -> DomainSummary:
    at = NOW - timedelta(days=2)
    task = {"id": "t-1", "workstream_id": "ws-1", "title": "Ship it", "description": "",
            "status": status, "assignee": None, "due": None, "created_at": at,
            "updated_at": at, "version": version}  # fmt: skip
    workstream = {"id": "ws-1", "domain": "d", "title": "W", "status": "active", "owner": None,
                  "created_at": at, "updated_at": at, "tasks": [task]}  # fmt: skip
    return DomainSummary.model_validate(
        {
            "domain": "d",
            "generated_at": NOW,
            "workstreams": [workstream],
            "open_decisions": [],
            "open_flags": [],
            "recent_events": events,
        }
    )


def _event(kind: str, source: str) -> dict[str, Any]:
    at = NOW - timedelta(hours=1)
    return {
        "id": "ev-1",
        "workstream_id": "ws-1",
        "task_id": "t-1",
        "event_type": kind,
        "summary": "shipped",
        "source": source,
        "created_at": at,
    }


def _own(status: str, by: str, hours_ago: float) -> OwnWrite:
    at = (NOW - timedelta(hours=hours_ago)).isoformat().replace("+00:00", "Z")
    return OwnWrite(at=at, run_id="r-0", index=0, operation="update_task_status",
                    task_id="t-1", status=status, hub_id="t-1", by=by,
                    after={"status": status, "version": 1})  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(
    status=st.sampled_from(STATUSES),
    target=st.sampled_from(STATUSES),
    operation=st.sampled_from(["update_task_status", "set_task_status"]),
    cite=st.booleans(),
    kind=st.sampled_from(["milestone", "note"]),
    source=st.sampled_from(["ana", "custodian"]),
    earlier=st.sampled_from([None, "policy", "person:ana"]),
    hours_ago=st.sampled_from([1.0, 30.0, 24 * 20.0]),
)
def test_the_same_write_in_the_same_state_gets_the_same_ruling_on_every_path(
    status: str,
    target: str,
    operation: str,
    cite: bool,
    kind: str,
    source: str,
    earlier: str | None,
    hours_ago: float,
) -> None:
    params: dict[str, Any] = {"task_id": "t-1", "status": target}
    if cite and operation == "update_task_status":
        params["evidence"] = ["ev-1"]
    fp = fingerprint(operation, params)
    item = ProposedItem(index=0, section="recorded", operation=operation, params=params,
                        reason="r", error=None, fingerprint=fp)  # fmt: skip
    observed = _summary(status, 2, [_event(kind, source)])
    writes = () if earlier is None else (_own("blocked", earlier, hours_ago),)
    grounds = Grounds(recent=RecentWrites(NOW, writes))

    fresh = fresh_ruling(item, observed, grounds)
    reconciled = rule_write(item, observed, grounds=grounds)
    person = PersonDecision("apr-1", "ana", "approved", proposed_under(item, observed))
    approved = rule_write(item, observed, person, grounds=grounds)

    # Reconcile: what a fresh plan would execute is re-sent; anything else is not.
    assert reconciled.allowed == (fresh.outcome == "execute")
    if fresh.outcome == "deny":
        assert reconciled.ruling.reason == fresh.reason
    # Approval: a person's word turns "queue" into "execute"; a denial stays a denial. A hold
    # stands against Custodian, never against the person: their approval is the newer word.
    held = fresh.code == "held_deference"
    assert approved.allowed == (fresh.outcome != "deny" or held)
    if fresh.outcome == "deny" and not held:
        assert approved.ruling.reason == fresh.reason
    # Only the staleness check differs: the same item proposed under another state is stale.
    moved = _summary("blocked" if status != "blocked" else "todo", 3, [_event(kind, source)])
    assert rule_write(item, moved, person, grounds=grounds).stale


# --- the property with a person's standing: every mode x grant state x path ------------------

GID = "grant-0123456789ab"
HUB = "hub_id:h1"
MODES = ("auto", "ask", "shadow", "off")
GRANT_STATES = ("none", "live", "revoked", "used up", "expired")


def _standing(operation: str, mode: str, grant_state: str) -> Standing:
    """`mode` set on `operation` by bo, and one set_task_status grant in `grant_state`."""
    modes = Modes().with_setting(ModeSetting(operation, mode, "bo", "a quiet week", NOW))  # type: ignore[arg-type]
    if grant_state == "none":
        return Standing(modes)
    expires = NOW - timedelta(hours=1) if grant_state == "expired" else NOW + timedelta(days=7)
    grant = Grant(id=GID, domain="d", operation="set_task_status", max_uses=2,
                  expires_at=expires, by="ana", reason="routine", hub_id=HUB,
                  issued_at=NOW - timedelta(days=8), revoked=grant_state == "revoked")  # fmt: skip
    uses = {GID: 2 if grant_state == "used up" else 0}
    return Standing(modes, (grant,), MappingProxyType(uses))


def _pending(operation: str, params: dict[str, Any]) -> PendingWrite:
    return PendingWrite(run_id="r-0", index=0, operation=operation, params=params,
                        idempotency_key="k", fingerprint=fingerprint(operation, params),
                        authorized_seq=1, dispatched=True)  # fmt: skip


# Where a grant could carry the write (an approvable block of a task in progress): each grant
# state under each mode is tried every time, whatever hypothesis draws besides.
_COVERED = {"operation": "set_task_status", "status": "in_progress", "target": "blocked"}


def _examples(test: Any) -> Any:
    for mode in MODES:
        for grant_state in GRANT_STATES:
            test = example(mode=mode, grant_state=grant_state, cite=False, **_COVERED)(test)
    return test


@settings(max_examples=200, deadline=None)
@_examples
@given(
    mode=st.sampled_from(MODES),
    grant_state=st.sampled_from(GRANT_STATES),
    operation=st.sampled_from(["update_task_status", "set_task_status", "flag_for_human"]),
    status=st.sampled_from(["in_progress", "blocked", "cancelled"]),
    target=st.sampled_from(["done", "blocked"]),
    cite=st.booleans(),
)
def test_every_mode_and_grant_state_rules_the_same_write_the_same_on_every_path(
    mode: str, grant_state: str, operation: str, status: str, target: str, cite: bool
) -> None:
    params: dict[str, Any] = {"task_id": "t-1", "status": target}
    if operation == "flag_for_human":
        params = {"task_id": "t-1", "note": "Blocked a week."}
    elif cite and operation == "update_task_status":
        params["evidence"] = ["ev-1"]
    fp = fingerprint(operation, params)
    item = ProposedItem(index=0, section="recorded", operation=operation, params=params,
                        reason="r", error=None, fingerprint=fp)  # fmt: skip
    observed = _summary(status, 2, [_event("milestone", "ana")])
    standing = _standing(operation, mode, grant_state)
    grounds = Grounds(recent=RecentWrites(NOW, ()), standing=standing, hub_id=HUB, now=NOW)
    fresh = fresh_ruling(item, observed, grounds)
    # The plan's own write ruled again before it is sent, a reconcile's re-send, an escalation:
    # each runs without a card, so only what a fresh plan executes without a grant goes out.
    resent = rule_write(item, observed, grounds=grounds)
    assert resent.allowed == (fresh.outcome == "execute" and fresh.grant is None)
    if operation == "flag_for_human":
        escalated = escalation(_pending("update_task_status", {"task_id": "t-1"}), "x", observed,
                               grounds)  # fmt: skip
        assert escalated is not None
        again = fresh_ruling(escalated.ruling.item, observed, grounds)
        assert escalated.allowed == (again.outcome == "execute")
        assert not escalated.allowed or mode == "auto"
    # A grant's use: only what a fresh plan executes under that very grant.
    granted = rule_write(item, observed, grounds=grounds, use=UnderGrant(GID))
    assert granted.allowed == (fresh.outcome == "execute" and fresh.grant == GID)
    if granted.allowed:
        assert grant_state == "live" and operation == "set_task_status"
    # A person's approval: turns "queue" into "execute" unless the mode holds every write.
    person = PersonDecision("apr-1", "ana", "approved", proposed_under(item, observed))
    approved = rule_write(item, observed, person, grounds=grounds)
    assert approved.allowed == (fresh.outcome != "deny")
    assert (approved.paused is not None) == (mode in ("off", "shadow"))
    if mode in ("off", "shadow"):
        # Nothing of the operation is written, on any path.
        assert fresh.outcome == "deny" and not resent.allowed and not granted.allowed
        assert (
            not approved.allowed and "set by bo at 2026-11-30 12:00 UTC" in approved.ruling.reason
        )
    if mode == "ask" and fresh.grant is None:
        assert fresh.outcome != "execute" and not resent.allowed


def test_no_path_rules_a_write_without_the_standing() -> None:
    """Only the one ruling (core/ruling/path.py) calls `authorize()`, which knows no standing:
    every other module rules through it, so no path can skip a person's modes and grants."""
    package = REPO / "runtime" / "custodian_runtime"
    callers = []
    for source in sorted(package.rglob("*.py")):
        tree = ast.parse(source.read_text("utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and (
                (isinstance(node.func, ast.Name) and node.func.id == "authorize")
                or (isinstance(node.func, ast.Attribute) and node.func.attr == "authorize")
            ):
                callers.append(source.relative_to(package).as_posix())
    assert sorted(set(callers)) == ["core/ruling/path.py"], callers
