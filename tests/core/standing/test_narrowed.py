"""Authority that narrows itself (issue #29): a person setting back Custodian's write.

Under a grant: the grant is suspended until a person issues one again. On its own: that class
(the operation, that task and status) needs a person for NARROWED_FOR, never the whole
operation. Pure rules first, then the CLI against the reference hub.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx

from custodian_hub import ReferenceHub
from custodian_runtime.core.authority.budgets import RecentWrites
from custodian_runtime.core.authority.evidence import Evidence
from custodian_runtime.core.authority.own_writes import OwnWrite
from custodian_runtime.core.contract import DomainSummary
from custodian_runtime.core.journal.kinds import ClassHeld, GrantSuspended
from custodian_runtime.core.journal.records import Record, parse_at
from custodian_runtime.core.ruling.path import Grounds, rule_plan
from custodian_runtime.core.standing.narrowed import (
    NARROWED_FOR,
    REVERSAL_WINDOW,
    Narrowed,
    NarrowedClass,
    narrowed_of,
    reversals,
)
from custodian_runtime.core.standing.record import Standing
from custodian_runtime.core.view import View
from support.authority import NOW, plan_of, website
from support.runs import hub_get
from support.spine import journal
from support.standing import Cli, note_of


def _ts(hours_ago: float) -> str:
    return (NOW - timedelta(hours=hours_ago)).isoformat().replace("+00:00", "Z")


def _write(task_id: str, to: str, before: str, by: str = "policy", index: int = 0) -> OwnWrite:
    op = "update_task_status" if by == "policy" else "set_task_status"
    after = {"status": to, "updated_at": _ts(30)}
    return OwnWrite(at=_ts(30), run_id="r-1", index=index, operation=op, task_id=task_id,
                    status=to, before=before, by=by, after=after)  # fmt: skip


def test_a_write_set_back_is_found_once_and_a_person_s_own_or_a_move_forward_is_not() -> None:
    view = View.of(website())  # t-todo todo, t-prog in_progress, t-block blocked, t-done done
    writes = [
        _write("t-todo", "in_progress", "todo", index=0),  # set back to todo: reversed
        _write("t-prog", "blocked", "in_progress", by="grant:grant-0123456789ab", index=1),
        _write("t-done", "in_progress", "todo", index=2),  # moved on to done: not set back
        _write("t-block", "in_progress", "blocked", by="person:ana", index=3),  # a person's own
    ]
    found = reversals(writes, view, Narrowed(), NOW)
    assert [type(f) for f in found] == [ClassHeld, GrantSuspended]
    held, suspended = found
    assert isinstance(held, ClassHeld) and isinstance(suspended, GrantSuspended)
    assert held.params == {"task_id": "t-todo", "status": "in_progress"}
    assert held.operation == "update_task_status"
    assert held.until == (NOW + NARROWED_FOR).isoformat()
    assert suspended.grant_id == "grant-0123456789ab"
    assert "a person set task t-prog back from blocked to in_progress" in str(suspended.reason)
    # Its task's workstream (and owner, where the hub names one): what a grant narrowed past
    # the reversal leaves out; folded back by narrowed_of.
    assert suspended.workstream_id == view.tasks["t-prog"].workstream_id
    data = suspended.model_dump(mode="json", exclude_unset=True)
    record = Record.model_construct(v=1, seq=1, run_id="r-2", domain="website",
                                    kind=suspended.KIND, at=NOW.isoformat(), data=data, prev="",
                                    hash="")  # fmt: skip
    folded = narrowed_of([record])
    assert folded.reversed_on["grant-0123456789ab"]["workstream"] == suspended.workstream_id
    seen = Narrowed(seen=frozenset({("r-1", "0"), ("r-1", "1")}))
    assert reversals(writes, view, seen, NOW) == []


def test_custodians_own_later_write_setting_a_task_back_is_no_persons_reversal() -> None:
    # Under a grant Custodian blocks t-prog; a day later its own write (on its own, or one a
    # person approved) moves the task back to in_progress: no one else set it back.
    blocked = _write("t-prog", "blocked", "in_progress", by="grant:grant-0123456789ab")
    observed = website()
    for by in ("policy", "person:ana", "grant:grant-0123456789ab"):
        back = OwnWrite(
            at=_ts(6), run_id="r-2", index=0, operation="update_task_status", task_id="t-prog",
            status="in_progress", before="blocked", by=by,
            after={"status": "in_progress", "updated_at": _ts(6), "version": 3},
        )  # fmt: skip
        left = _with_task(observed, "t-prog", "in_progress", updated=_ts(6), version=3)
        assert reversals([blocked, back], View.of(left), Narrowed(), NOW) == [], by
        # A person setting it back after Custodian's own write is still a person's reversal.
        moved = _with_task(observed, "t-prog", "in_progress", updated=_ts(2), version=5)
        [suspended] = reversals([blocked, back], View.of(moved), Narrowed(), NOW)
        assert isinstance(suspended, GrantSuspended), by


def _with_task(
    observed: DomainSummary, task_id: str, status: str, *, updated: str, version: int
) -> DomainSummary:
    """`observed` with `task_id` at `status`, updated at `updated`, at `version`."""
    change = {"status": status, "version": version, "updated_at": parse_at(updated)}
    workstreams = tuple(
        ws.model_copy(
            update={"tasks": tuple(t.model_copy(update=change) if t.id == task_id else t
                                   for t in ws.tasks)}
        )
        for ws in observed.workstreams
    )  # fmt: skip
    return observed.model_copy(update={"workstreams": workstreams})


def _update(task_id: str, event: str) -> Any:
    return plan_of(tasks_to_update=[{"task_id": task_id, "status": "done", "evidence": [event]}])


def _rule(plan: Any, narrowed: Narrowed, now: Any = NOW) -> Any:
    observed: DomainSummary = website()
    grounds = Grounds(recent=RecentWrites(now), standing=Standing(narrowed=narrowed), now=now,
                      evidence=Evidence.of(observed))  # fmt: skip
    return rule_plan(plan, observed, grounds)[0]


def test_a_held_class_needs_a_person_and_only_that_class_and_only_for_a_while() -> None:
    why = "a person set task t-prog back from done to in_progress"
    hold = NarrowedClass("update_task_status", {"task_id": "t-prog", "status": "done"},
                NOW + timedelta(days=3), why)  # fmt: skip
    narrowed = Narrowed(classes=(hold,))
    assert _rule(_update("t-prog", "ev-t-prog"), Narrowed()).outcome == "execute"
    held = _rule(_update("t-prog", "ev-t-prog"), narrowed)
    assert held.outcome == "queue" and held.code == "stated", held.reason
    assert "a person set task t-prog back from done to in_progress" in held.reason
    assert "such a write needs a person" in held.reason
    # Another task of the same operation runs on its own: never the whole operation.
    assert _rule(_update("t-todo", "ev-t-todo"), narrowed).outcome == "execute"
    # After the hold's period it runs on its own again.
    later = NOW + timedelta(days=4)
    assert _rule(_update("t-prog", "ev-t-prog"), narrowed, later).outcome == "execute"


# --- end to end --------------------------------------------------------------------------------


def _block(task_id: str) -> dict[str, Any]:
    return {"operation": "set_task_status", "params": {"task_id": task_id, "status": "blocked"},
            "rationale": "stuck"}  # fmt: skip


def test_a_grant_whose_write_a_person_set_back_is_suspended_until_one_is_issued_again(
    cli: Cli, small_hub: ReferenceHub
) -> None:
    first = cli.issue(small_hub.url, "--max", "5", "--expires", "7d", "--where", "status=blocked")
    [ran] = cli.run(small_hub.url, _block("web-t-1"))["items"]
    assert ran["outcome"] == "executed" and ran["grant"] == first, ran
    back = httpx.patch(f"{small_hub.url}/tasks/web-t-1", json={"status": "in_progress"}, timeout=5)
    assert back.status_code == 200  # a person sets it back on the hub
    summary = cli.run(small_hub.url, _block("web-t-4"))
    note = note_of(summary)
    assert "## Authority a person's reversal took away" in note
    assert f"grant {first} is suspended: a person set task web-t-1 back" in note
    [asked] = summary["items"]
    assert asked["outcome"] == "queued" and asked.get("grant") is None, asked
    assert (
        f"{first} is suspended: a person set task web-t-1 back from blocked to in_progress"
        in (asked["reason"])
    )
    assert hub_get(small_hub, "/tasks/web-t-4")["status"] == "in_progress"
    [listed] = cli.grants()
    assert listed["state"].startswith("suspended: a person set task web-t-1 back"), listed
    kinds = [r.kind for r in journal(cli.memory, "website")]
    assert kinds.count("grant_suspended") == 1
    cli.ok("approvals", "reject", asked["approval_id"], "--by", "ana", "--reason", "later")
    again = cli.issue(small_hub.url, "--max", "5", "--expires", "7d", "--where", "status=blocked")
    [ran] = cli.run(small_hub.url, _block("web-t-5"))["items"]
    assert ran["outcome"] == "executed" and ran["grant"] == again, ran
    kinds = [r.kind for r in journal(cli.memory, "website")]
    assert kinds.count("grant_suspended") == 1  # journaled once
    inspected = cli("inspect", "--domain", "website")  # replay rules with the same standing
    assert inspected.code == 0 and "replay: ok" in inspected.stdout, inspected.stdout


def test_a_grant_stays_live_when_custodians_own_later_write_moves_the_task_back(
    cli: Cli, small_hub: ReferenceHub
) -> None:
    first = cli.issue(small_hub.url, "--max", "5", "--expires", "7d", "--where", "status=blocked")
    [ran] = cli.run(small_hub.url, _block("web-t-1"))["items"]
    assert ran["outcome"] == "executed" and ran["grant"] == first, ran
    back = {"operation": "set_task_status", "rationale": "the vendor answered",
            "params": {"task_id": "web-t-1", "status": "in_progress"}}  # fmt: skip
    [asked] = cli.run(small_hub.url, back)["items"]
    assert asked["outcome"] == "queued", asked
    # A person approves it: Custodian's own write sets the task back, no one else's change.
    cli.ok("approvals", "approve", asked["approval_id"], "--by", "ana", "--hub", small_hub.url)
    assert hub_get(small_hub, "/tasks/web-t-1")["status"] == "in_progress"
    summary = cli.run(small_hub.url, _block("web-t-4"))
    assert "is suspended" not in note_of(summary)
    [ran] = summary["items"]
    assert ran["outcome"] == "executed" and ran["grant"] == first, ran
    [listed] = cli.grants()
    assert not listed["state"].startswith("suspended"), listed
    assert "grant_suspended" not in [r.kind for r in journal(cli.memory, "website")]


def _milestone(hub: ReferenceHub, task_id: str) -> str:
    body = {"workstream_id": "web-ws-1", "task_id": task_id, "event_type": "milestone",
            "summary": "Shipped and verified.", "source": "ben"}  # fmt: skip
    response = httpx.post(f"{hub.url}/events", json=body, timeout=5)
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def _done(task_id: str, event: str) -> dict[str, Any]:
    return {"tasks_to_update": [{"task_id": task_id, "status": "done", "evidence": [event]}]}


def test_a_write_made_on_its_own_and_set_back_holds_that_class_only_and_replays(
    cli: Cli, small_hub: ReferenceHub
) -> None:
    [ran] = cli.run(small_hub.url, plan=_done("web-t-4", _milestone(small_hub, "web-t-4")))["items"]
    assert ran["outcome"] == "executed", ran
    back = httpx.patch(f"{small_hub.url}/tasks/web-t-4", json={"status": "in_progress"}, timeout=5)
    assert back.status_code == 200  # a person sets it back on the hub
    [other] = cli.run(small_hub.url, plan=_done("web-t-1", _milestone(small_hub, "web-t-1")))[
        "items"
    ]
    assert other["outcome"] == "executed", other  # never the whole operation
    records = journal(cli.memory, "website")
    [held] = [r for r in records if r.kind == "class_held"]
    assert held.data["operation"] == "update_task_status"
    assert held.data["params"] == {"task_id": "web-t-4", "status": "done"}
    assert "a person set task web-t-4 back from done to in_progress" in held.data["reason"]
    cli.run(small_hub.url, plan={})
    assert [r.kind for r in journal(cli.memory, "website")].count("class_held") == 1
    inspected = cli("inspect", "--domain", "website")
    assert inspected.code == 0, inspected.stdout + inspected.stderr


def test_a_set_back_long_after_the_write_is_the_work_moving_on_not_a_reversal() -> None:
    view = View.of(website())  # t-todo was last changed a day before NOW
    early = _write("t-todo", "in_progress", "todo").model_copy(update={"at": _ts(24 * 4)})
    assert reversals([early], view, Narrowed(), NOW) == []
    assert timedelta(days=2) == REVERSAL_WINDOW
