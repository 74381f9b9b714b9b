"""A status a person set by hand on the hub is held, not asked again, when they said so (#29).

The hub's `updated_at` names no one: a task changed before Custodian wrote it may be seed data or
another system, so such a write is asked once. A person's own `status_change` event on the task,
written at or after the change (within the window), is their word that they set it: a write
that would undo it is held, as one undoing their approval is. A newer event of theirs that
speaks for the move still lifts it. The pure rules first, then the CLI against the reference hub.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx
import pytest
from test_newer_word import _block, _event, _grant, _observed, _rule

from custodian_hub import ReferenceHub
from custodian_runtime.core.authority.budgets import RecentWrites
from custodian_runtime.core.authority.evidence import Evidence
from custodian_runtime.core.ruling.path import Grounds, rule_plan
from support.authority import NOW, plan_of
from support.runs import hub_get
from support.standing import Cli, note_of

SAID = "status_change"


def test_a_status_a_person_set_and_said_so_is_held_with_their_event() -> None:
    ruling = _rule(_observed(_event("ev-set", 47, kind=SAID)))
    assert ruling.outcome == "deny" and ruling.code == "held_deference", ruling.reason
    assert "held: 'ben' set task t-prog to in_progress on the hub (event ev-set)" in ruling.reason
    assert "no newer word from a person supports the change" in ruling.reason


@pytest.mark.parametrize(
    ("events", "why"),
    [
        ((), "seed data or another system: the hub's updated_at alone"),
        ((_event("ev-before", 49, kind=SAID),), "their word predates the change"),
        ((_event("ev-own", 47, kind=SAID, source="custodian"),), "Custodian's own event"),
        ((_event("ev-note", 47, kind="note"),), "a note is no word on the status"),
    ],
)
def test_a_change_no_person_said_they_made_is_asked_once_not_held(
    events: tuple[Any, ...], why: str
) -> None:
    ruling = _rule(_observed(*events))
    assert ruling.outcome == "queue" and ruling.code == "deferred", (why, ruling.reason)


def test_a_grant_issued_after_a_persons_change_carries_no_write_undoing_it() -> None:
    # Ben set t-prog to in_progress 48 h ago and said so; a grant of blocks issued an hour ago
    # names no task: it is no word of a person on this one, so the write stays held.
    grant = _grant().model_copy(update={"issued_at": NOW - timedelta(hours=1)})
    held = _rule(_observed(_event("ev-set", 47, kind=SAID)), grants=(grant,))
    assert held.grant is None and held.outcome == "deny", held.reason
    assert held.code == "held_deference" and "held: 'ben' set task t-prog" in held.reason
    # A change no one said they made is asked once: the grant carries that no more.
    unnamed = _rule(_observed(), grants=(grant,))
    assert unnamed.outcome == "queue" and unnamed.grant is None, unnamed.reason
    assert unnamed.code == "deferred" and "changed on the hub" in unnamed.reason
    # Ben's newer blocker, cited, is his word on the task: the grant carries it then.
    lifted = _rule(_observed(_event("ev-set", 47, kind=SAID), _event("ev-new", 24)), "ev-new",
                   grants=(grant,))  # fmt: skip
    assert lifted.outcome == "execute" and lifted.grant == grant.id, lifted.reason


def test_their_own_event_is_no_newer_word_but_a_newer_blocker_lifts_the_hold() -> None:
    said = _event("ev-set", 47, kind=SAID)
    own_word = _rule(_observed(said), "ev-set", to="done")
    assert own_word.code == "held_deference", own_word.reason
    lifted = _rule(_observed(said, _event("ev-new", 24)), "ev-new")
    assert lifted.outcome == "queue" and lifted.code == "routine", lifted.reason
    assert lifted.word is not None and "event ev-new" in lifted.word


def test_a_sanctioned_move_on_older_evidence_is_held_and_on_newer_runs() -> None:
    said = _event("ev-set", 47, kind=SAID)
    shipped_before = _event("ev-old", 72, kind="milestone")
    shipped_after = _event("ev-ship", 24, kind="milestone")
    observed = _observed(said, shipped_before, shipped_after)
    grounds = Grounds(recent=RecentWrites(NOW), now=NOW, evidence=Evidence.of(observed))

    def ruled(event: str) -> Any:
        move = {"task_id": "t-prog", "status": "done", "evidence": [event]}
        return rule_plan(plan_of(tasks_to_update=[move]), observed, grounds)[0]

    assert ruled("ev-old").code == "held_deference", ruled("ev-old").reason
    assert ruled("ev-ship").outcome == "execute", ruled("ev-ship").reason


def _said(hub: ReferenceHub, task_id: str, source: str = "ben") -> str:
    body = {"workstream_id": "web-ws-1", "task_id": task_id, "event_type": SAID,
            "summary": "Set back to todo: not started yet.", "source": source}  # fmt: skip
    response = httpx.post(f"{hub.url}/events", json=body, timeout=5)
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def test_a_person_who_set_a_task_on_the_hub_and_said_so_is_not_asked_again(
    cli: Cli,
    small_hub: ReferenceHub,
) -> None:
    patched = httpx.patch(f"{small_hub.url}/tasks/web-t-4", json={"status": "todo"}, timeout=5)
    assert patched.status_code == 200
    [asked] = cli.run(small_hub.url, _block("web-t-4"))["items"]
    assert asked["outcome"] == "queued", asked  # nothing says who changed it: asked once
    cli.ok("approvals", "reject", asked["approval_id"], "--by", "ana", "--reason", "not yet")
    patched = httpx.patch(f"{small_hub.url}/tasks/web-t-2", json={"status": "todo"}, timeout=5)
    assert patched.status_code == 200
    event = _said(small_hub, "web-t-2")
    summary = cli.run(small_hub.url, _block("web-t-2"))
    [item] = summary["items"]
    assert item["outcome"] != "queued" and item.get("approval_id") is None, item
    assert hub_get(small_hub, "/tasks/web-t-2")["status"] == "todo"
    note = note_of(summary)
    assert "Held in deference to a person" in note
    assert f"'ben' set task web-t-2 to todo on the hub (event {event})" in note
    pending = cli.ok("approvals", "list", "--status", "pending", "--json").json()
    assert [p for p in pending if p["params"].get("task_id") == "web-t-2"] == []
