"""Evidence newer than the change it would undo (issue #28), and a person's change on the hub.

A status write runs on its own only on evidence newer than the task's last change by anyone (the
hub's `updated_at`, or from a hub that gives none, the task's own newest event). A status the
hub shows that Custodian neither wrote nor had approved, changed within `defer_days`, is a
person's decision. The pure comparison first, then the finding end to end against the hub.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from custodian_hub import ReferenceHub
from custodian_runtime.core.authority.authorize import Ruling, authorize
from custodian_runtime.core.authority.budgets import RecentWrites
from custodian_runtime.core.authority.evidence import Evidence, last_change, older_evidence
from custodian_runtime.core.authority.own_writes import OwnWrite
from custodian_runtime.core.authority.precondition import proposed_under
from custodian_runtime.core.contract import DomainSummary, ProgressEvent, Task
from custodian_runtime.core.limits import Limits
from custodian_runtime.core.plan.extract import ProposedItem, fingerprint
from custodian_runtime.core.ruling.path import Grounds, PersonDecision, fresh_ruling, rule_write
from custodian_runtime.run import run
from custodian_runtime.settings import load_settings
from support.authority import NOW, plan_of, task, website
from support.review import Browser, review_page, review_settings
from support.runs import CANON, hub_get, plan_response
from support.standing import Cli, status


def _event(
    event_id: str, hours_ago: float, task_id: str = "t-block", event_type: str = "note",
    source: str = "ben",
) -> ProgressEvent:  # fmt: skip
    return ProgressEvent(
        id=event_id,
        workstream_id="ws-web",
        task_id=task_id,
        event_type=event_type,  # type: ignore[arg-type]
        summary="Unblocked: the vendor answered.",
        source=source,
        created_at=NOW - timedelta(hours=hours_ago),
    )


def _with(observed: DomainSummary, changed: Task, *events: ProgressEvent) -> DomainSummary:
    """`observed` with `changed` in place of the task of its id, and `events` as recent."""
    workstreams = tuple(
        ws.model_copy(
            update={"tasks": tuple(changed if t.id == changed.id else t for t in ws.tasks)}
        )
        for ws in observed.workstreams
    )
    return observed.model_copy(update={"workstreams": workstreams, "recent_events": events})


def _blocked(hours_ago: float, *, stamped: bool = True) -> Task:
    """t-block, set to blocked `hours_ago` (with no `updated_at` when not `stamped`)."""
    changed = task("t-block", "ws-web", "blocked").model_copy(
        update={"updated_at": NOW - timedelta(hours=hours_ago) if stamped else None}
    )
    return changed


def _unblock(*evidence: str, to: str = "in_progress") -> Any:
    return plan_of(
        tasks_to_update=[{"task_id": "t-block", "status": to, "evidence": list(evidence)}]
    )


def _one(plan: Any, observed: DomainSummary, **kw: Any) -> Ruling:
    return authorize(plan, observed, **kw)[0]


# --- the comparison, pure ---------------------------------------------------------------------


def test_the_last_change_is_the_hubs_updated_at_and_says_what_it_set() -> None:
    change = last_change(_blocked(48), Evidence())
    assert change is not None and change.at == NOW - timedelta(hours=48)
    assert change.what == "status set to blocked"
    fresh = task("t-new", "ws-web", "todo").model_copy(update={"updated_at": None})
    created = fresh.model_copy(update={"updated_at": fresh.created_at})
    assert last_change(created, Evidence()).what == "created as todo"  # type: ignore[union-attr]


def test_without_updated_at_the_tasks_newest_event_not_by_custodian_is_the_last_change() -> None:
    events = (
        _event("ev-old", 72),
        _event("ev-blk", 48, event_type="blocker", source="ana"),
        _event("ev-mine", 1, source="custodian"),  # Custodian's own: changes nothing
        _event("ev-other", 1, task_id="t-prog"),  # another task's
    )
    seen = Evidence({e.id: e for e in events})
    change = last_change(_blocked(0, stamped=False), seen)
    assert change is not None and change.at == NOW - timedelta(hours=48)
    assert change.what == "event ev-blk, a blocker from 'ana'"
    assert last_change(_blocked(0, stamped=False), seen, leave_out=("ev-blk",)).at == (  # type: ignore[union-attr]
        NOW - timedelta(hours=72)
    )
    assert last_change(_blocked(0, stamped=False), Evidence()) is None


@pytest.mark.parametrize(
    ("evidence_hours_ago", "held"),
    [(72, False), (48, False), (47, True), (1, True)],
)
def test_evidence_must_be_strictly_newer_than_the_change(
    evidence_hours_ago: float, held: bool
) -> None:
    cited = _event("ev-1", evidence_hours_ago)
    seen = Evidence({cited.id: cited})
    problem = older_evidence({"task_id": "t-block", "evidence": ["ev-1"]}, _blocked(48), seen)
    assert (problem is None) is held
    if evidence_hours_ago == 48:
        assert problem is not None and "is as old as the task's last change" in problem


def test_older_evidence_queues_a_sanctioned_move_in_deference_and_says_both_dates() -> None:
    observed = _with(website(), _blocked(48), _event("ev-1", 72))
    ruling = _one(_unblock("ev-1"), observed)
    assert ruling.outcome == "queue" and ruling.code == "deferred", ruling
    assert ruling.clause == (
        "the evidence it cites (ev-1, 2026-11-27 08:00 UTC) is older than the task's last "
        "change (2026-11-28 08:00 UTC, status set to blocked); a person decides."
    )
    assert ruling.defers_to is None  # no recent writes given: the evidence rule alone


def test_newer_evidence_runs_and_several_cited_are_judged_by_the_newest() -> None:
    observed = _with(website(), _blocked(48), _event("ev-1", 72), _event("ev-2", 24))
    assert _one(_unblock("ev-2"), observed).outcome == "execute"
    assert _one(_unblock("ev-1", "ev-2"), observed).outcome == "execute"
    older = _with(website(), _blocked(48), _event("ev-1", 72), _event("ev-0", 96))
    ruling = _one(_unblock("ev-0", "ev-1"), older)
    assert ruling.code == "deferred" and "the newest evidence it cites (ev-1," in ruling.reason


def test_from_a_hub_without_updated_at_the_tasks_events_decide() -> None:
    blocker = _event("ev-blk", 48, event_type="blocker", source="ana")
    observed = _with(website(), _blocked(0, stamped=False), _event("ev-1", 72), blocker)
    ruling = _one(_unblock("ev-1"), observed)
    assert ruling.outcome == "queue" and ruling.code == "deferred"
    assert "(2026-11-28 08:00 UTC, event ev-blk, a blocker from 'ana')" in ruling.reason
    newer = _with(website(), _blocked(0, stamped=False), blocker, _event("ev-2", 24))
    assert _one(_unblock("ev-2"), newer).outcome == "execute"


def test_a_persons_change_on_the_hub_within_the_window_defers_a_status_write() -> None:
    recent = RecentWrites(NOW)
    set_status = plan_of(proposals=[status("t-block", "cancelled")])
    fresh = _one(set_status, _with(website(), _blocked(48)), recent=recent)
    assert fresh.outcome == "queue" and fresh.code == "deferred"
    assert fresh.defers_to == NOW - timedelta(hours=48)
    assert "changed on the hub by someone other than Custodian at 2026-11-28 08:00 UTC" in (
        fresh.reason
    )
    days = Limits().defer_days
    old = _one(set_status, _with(website(), _blocked(24 * days + 1)), recent=recent)
    assert old.outcome == "queue" and old.code == "routine"  # outside the window


def test_a_status_custodian_left_is_not_someone_elses_change() -> None:
    at = NOW - timedelta(hours=48)
    mine = OwnWrite(
        at=at.isoformat().replace("+00:00", "Z"), run_id="r-1", index=0,
        operation="update_task_status", task_id="t-block", status="blocked",
        after={"status": "blocked", "updated_at": at.isoformat()},
    )  # fmt: skip
    set_status = plan_of(proposals=[status("t-block", "cancelled")])
    ruling = _one(set_status, _with(website(), _blocked(48)), recent=RecentWrites(NOW, (mine,)))
    assert ruling.code == "routine", ruling.reason


# --- end to end: the CLI against the reference hub ---------------------------------------------


def _post(hub: ReferenceHub, task_id: str, source: str, summary: str, kind: str = "note") -> str:
    body = {"workstream_id": "web-ws-1", "task_id": task_id, "event_type": kind,
            "summary": summary, "source": source}  # fmt: skip
    response = httpx.post(f"{hub.url}/events", json=body, timeout=5)
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def _set_by_hand(hub: ReferenceHub, task_id: str, to: str) -> str:
    """A person sets the task's status on the hub, not through Custodian; the time it took."""
    response = httpx.patch(f"{hub.url}/tasks/{task_id}", json={"status": to}, timeout=5)
    assert response.status_code == 200, response.text
    return str(response.json()["updated_at"])


def _card_date(wire: str) -> str:
    return datetime.fromisoformat(wire.replace("Z", "+00:00")).strftime("%Y-%m-%d %H:%M UTC")


def _unblock_plan(evidence: str) -> dict[str, Any]:
    update = {"task_id": "web-t-3", "status": "in_progress", "evidence": [evidence]}
    return {"tasks_to_update": [update]}


def test_a_persons_block_is_not_undone_by_an_older_unblocked_event(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    cli = Cli(tmp_path, monkeypatch)
    unblocked = _post(small_hub, "web-t-3", "ben", "Unblocked: copy approved, starting.")
    changed = _set_by_hand(small_hub, "web-t-3", "blocked")
    blocker = _post(
        small_hub, "web-t-3", "ana", "Blocked again: legal wants another look.", "blocker"
    )
    said = hub_get(small_hub, "/events?task_id=web-t-3&limit=5")["events"]
    at = _card_date(next(e["created_at"] for e in said if e["id"] == unblocked))
    [item] = cli.run(small_hub.url, plan=_unblock_plan(unblocked))["items"]
    assert item["outcome"] == "queued", item
    assert hub_get(small_hub, "/tasks/web-t-3")["status"] == "blocked"  # nothing written
    why = (
        f"the evidence it cites ({unblocked}, {at}) is older than the task's last change "
        f"({_card_date(changed)}, status set to blocked); a person decides"
    )
    assert why in item["reason"], item["reason"]
    shown = " ".join(cli.ok("approvals", "show", item["approval_id"]).stdout.split())
    assert "waits because: in deference to a person: the evidence it cites" in shown
    assert unblocked in shown and "status set to blocked" in shown
    kept = cli.ok("approvals", "show", item["approval_id"], "--json").json()
    # Ana's blocker came after the cited event: the card names her later word too.
    later = f"'ana' wrote on task web-t-3 after the evidence it cites: event {blocker}, a blocker"
    waits = kept["waiting_because"]
    assert waits["code"] == "deferred", waits
    assert waits["text"].startswith(f"in deference to a person: {why}; {later}"), waits
    with review_page(review_settings(cli.memory, small_hub.url, tmp_path)) as server:
        card = Browser(server).get("/").text
    escaped = why.replace("'", "&#39;")
    assert f'<dd class="waits">in deference to a person: {escaped}; ' in card


def test_evidence_newer_than_the_persons_change_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    cli = Cli(tmp_path, monkeypatch)
    _set_by_hand(small_hub, "web-t-3", "blocked")
    unblocked = _post(small_hub, "web-t-3", "ben", "Unblocked: legal signed off, starting.")
    [item] = cli.run(small_hub.url, plan=_unblock_plan(unblocked))["items"]
    assert item["outcome"] == "executed", item
    assert hub_get(small_hub, "/tasks/web-t-3")["status"] == "in_progress"


def test_no_grant_carries_a_write_undoing_a_persons_change_only_their_newer_word_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    cli = Cli(tmp_path, monkeypatch)
    first = cli.issue(small_hub.url, "--max", "5", "--expires", "7d")
    _set_by_hand(small_hub, "web-t-3", "in_progress")  # after the grant: the newer word
    [item] = cli.run(small_hub.url, status("web-t-3", "blocked"))["items"]
    assert item["outcome"] == "queued" and item.get("grant") is None, item
    assert "changed on the hub by someone other than Custodian" in item["reason"]
    assert hub_get(small_hub, "/tasks/web-t-3")["status"] == "in_progress"
    cli.ok("grants", "revoke", first, "--by", "ana", "--reason", "issued before the change")
    # A grant issued after the change names a class, never this task: still a person's call.
    cli.issue(small_hub.url, "--max", "5", "--expires", "7d")
    [again] = cli.run(small_hub.url, status("web-t-3", "cancelled"))["items"]
    assert again["outcome"] == "queued" and again.get("grant") is None, again
    assert hub_get(small_hub, "/tasks/web-t-3")["status"] == "in_progress"
    # Ben's word on the task, newer than the change and cited, lets the grant carry it.
    word = _post(small_hub, "web-t-3", "ben", "Blocked again: the vendor went quiet.", "blocker")
    cited = status("web-t-3", "blocked")
    cited["params"]["evidence"] = [word]
    [ran] = cli.run(small_hub.url, cited)["items"]
    assert ran["outcome"] == "executed" and ran.get("grant"), ran
    assert hub_get(small_hub, "/tasks/web-t-3")["status"] == "blocked"


class _NoUpdatedAt(httpx.BaseTransport):
    """A proxy in front of the real hub that answers as a hub that sends no task `updated_at`."""

    def __init__(self) -> None:
        self._inner = httpx.HTTPTransport()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self._inner.handle_request(request)
        body = response.read()
        headers = {
            k: v
            for k, v in response.headers.items()
            if k.lower() not in ("etag", "content-length", "content-encoding", "transfer-encoding")
        }
        if response.headers.get("content-type", "").startswith("application/json"):
            body = json.dumps(_strip(json.loads(body))).encode()
        return httpx.Response(response.status_code, headers=headers, content=body)

    def close(self) -> None:
        self._inner.close()


def _strip(value: Any) -> Any:
    """Tasks (a title and a workstream, no domain) lose `updated_at` and `version`."""
    if isinstance(value, list):
        return [_strip(v) for v in value]
    if not isinstance(value, dict):
        return value
    is_task = "title" in value and "workstream_id" in value and "domain" not in value
    drop = ("updated_at", "version") if is_task else ()
    return {k: _strip(v) for k, v in value.items() if k not in drop}


def _run_without_updated_at(tmp_path: Path, hub: ReferenceHub, evidence: str) -> dict[str, Any]:
    answer = tmp_path / "answer.md"
    answer.write_text(plan_response(_unblock_plan(evidence)), encoding="utf-8")
    flags = {"domain": "website", "hub": hub.url, "llm": f"file:{answer}",
             "memory": str(tmp_path / "memory"), "canon": str(CANON), "force": True}  # fmt: skip
    settings = load_settings(flags, {"PATH": "/usr/bin:/bin"}, tmp_path)
    with open(tmp_path / "stderr", "w") as stderr:
        result = run(settings, transport=_NoUpdatedAt(), stderr=stderr)
    return dict(result.summary())


def test_from_a_hub_without_updated_at_the_persons_blocker_event_is_the_change(
    tmp_path: Path, small_hub: ReferenceHub
) -> None:
    unblocked = _post(small_hub, "web-t-3", "ben", "Unblocked: copy approved, starting.")
    _set_by_hand(small_hub, "web-t-3", "blocked")
    blocker = _post(small_hub, "web-t-3", "ana", "Blocked: legal wants another look.", "blocker")
    summary = _run_without_updated_at(tmp_path, small_hub, unblocked)
    [queued] = summary["queued"]
    assert f"event {blocker}, a blocker from 'ana'" in queued["reason"], queued
    assert hub_get(small_hub, "/tasks/web-t-3")["status"] == "blocked"
    newer = _post(small_hub, "web-t-3", "ben", "Unblocked for good: legal signed off.")
    summary = _run_without_updated_at(tmp_path, small_hub, newer)
    assert [e["operation"] for e in summary["executed"]] == ["update_task_status"], summary
    assert hub_get(small_hub, "/tasks/web-t-3")["status"] == "in_progress"


# --- one ruling on every path -------------------------------------------------------------------


def _state(
    status: str, changed_hours: float, stamped: bool, *events: ProgressEvent
) -> DomainSummary:
    changed = task("t-block", "ws-web", "blocked").model_copy(
        update={
            "status": status,
            "version": 2,
            "updated_at": NOW - timedelta(hours=changed_hours) if stamped else None,
        }
    )
    return _with(website(), changed, *events)


@settings(max_examples=120, deadline=None)
@given(
    status=st.sampled_from(["todo", "blocked", "in_progress"]),
    operation=st.sampled_from(["update_task_status", "set_task_status"]),
    target=st.sampled_from(["in_progress", "done", "blocked"]),
    evidence_hours=st.sampled_from([1.0, 47.0, 48.0, 96.0]),
    changed_hours=st.sampled_from([48.0, 24 * 20.0]),
    stamped=st.booleans(),
    blocker=st.booleans(),
)
def test_evidence_against_the_last_change_rules_alike_on_every_path(
    status: str, operation: str, target: str, evidence_hours: float, changed_hours: float,
    stamped: bool, blocker: bool,
) -> None:  # fmt: skip
    if operation == "update_task_status" and target == "blocked":
        target = "done"  # only done or in_progress runs on its own
    params: dict[str, Any] = {"task_id": "t-block", "status": target}
    if operation == "update_task_status":
        params["evidence"] = ["ev-1"]
    fp = fingerprint(operation, params)
    item = ProposedItem(index=0, section="recorded", operation=operation, params=params,
                        reason="r", error=None, fingerprint=fp)  # fmt: skip
    events = [_event("ev-1", evidence_hours, event_type="milestone")]
    if blocker:
        events.append(_event("ev-blk", changed_hours, event_type="blocker", source="ana"))
    observed = _state(status, changed_hours, stamped, *events)
    grounds = Grounds(recent=RecentWrites(NOW))

    fresh = fresh_ruling(item, observed, grounds)
    reconciled = rule_write(item, observed, grounds=grounds)
    person = PersonDecision("apr-1", "ana", "approved", proposed_under(item, observed))
    approved = rule_write(item, observed, person, grounds=grounds)
    assert reconciled.allowed == (fresh.outcome == "execute")
    assert approved.allowed == (fresh.outcome != "deny")

    knows_change = stamped or blocker
    older = evidence_hours >= changed_hours
    if operation == "update_task_status" and knows_change and older:
        assert fresh.outcome != "execute", fresh.reason  # never undoes a newer change on its own
        if fresh.outcome == "queue":
            assert fresh.code == "deferred" or "evidence" in fresh.reason, fresh.reason
    within = changed_hours < 24 * Limits().defer_days
    if operation == "set_task_status" and stamped and within and fresh.outcome == "queue":
        assert fresh.code == "deferred" and fresh.defers_to == NOW - timedelta(hours=changed_hours)
