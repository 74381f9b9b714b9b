"""Asked, whatever else would carry it (core/authority/asked.py): a write citing events when a
person wrote on its task after them, and a create that nearly repeats an open one of another
workstream. Neither runs under a grant nor on its own; each is asked, with the fact named. The
pure rules first, then a run on the reference hub for each.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from test_near_repeats import _titled

from custodian_hub import ReferenceHub
from custodian_runtime.core.authority.asked import later_word
from custodian_runtime.core.authority.authorize import Ruling
from custodian_runtime.core.authority.budgets import RecentWrites
from custodian_runtime.core.authority.evidence import Evidence
from custodian_runtime.core.contract import DomainSummary, ProgressEvent
from custodian_runtime.core.ruling.path import Grounds, rule_plan
from custodian_runtime.core.standing.grants import Grant
from custodian_runtime.core.standing.record import Standing
from support.authority import NOW, plan_of, proposal, website
from support.runs import hub_get
from support.standing import Cli

HUB = "hub_id:h-1"


def _event(event_id: str, hours_ago: float, kind: str = "blocker", source: str = "ben") -> Any:
    return ProgressEvent(
        id=event_id, workstream_id="ws-web", task_id="t-prog", event_type=kind,
        summary="Waiting on the vendor.", source=source,
        created_at=NOW - timedelta(hours=hours_ago),
    )  # fmt: skip


def _grant(operation: str, **extra: Any) -> Grant:
    fields = {"issued_at": NOW - timedelta(days=5), **extra}
    return Grant(
        id="grant-0123456789ab", domain="website", operation=operation, max_uses=5,
        expires_at=NOW + timedelta(days=7), by="lena", reason="routine", hub_id=HUB, **fields,
    )  # fmt: skip


def _rule(observed: DomainSummary, op: str, grant: Grant | None, **params: Any) -> Ruling:
    plan = plan_of(proposals=[proposal(op, **params)])
    if op == "update_task_status":
        plan = plan_of(tasks_to_update=[params])
    grounds = Grounds(
        recent=RecentWrites(NOW, ()), standing=Standing(grants=() if grant is None else (grant,)),
        hub_id=HUB, now=NOW, evidence=Evidence.of(observed),
    )  # fmt: skip
    return rule_plan(plan, observed, grounds)[0]


def _with(*events: ProgressEvent) -> DomainSummary:
    return website().model_copy(update={"recent_events": events})


# --- a person's later word ---------------------------------------------------------------------


def test_a_grants_block_runs_on_the_newest_word_and_is_asked_after_a_later_one() -> None:
    grant = _grant("set_task_status", where={"status": "blocked"}, evidence="newer")
    blocker = _event("ev-block", 12)
    ran = _rule(_with(blocker), "set_task_status", grant, task_id="t-prog", status="blocked",
                evidence=["ev-block"])  # fmt: skip
    assert ran.outcome == "execute" and ran.grant == grant.id, ran.reason
    # The lead answered the blocker with a note: her word is newer than the evidence.
    lead = _event("ev-lead", 2, kind="note", source="lena")
    asked = _rule(_with(blocker, lead), "set_task_status", grant, task_id="t-prog",
                  status="blocked", evidence=["ev-block"])  # fmt: skip
    assert asked.outcome == "queue" and asked.grant is None, asked.reason
    assert asked.code == "stated"
    assert "'lena' wrote on task t-prog after the evidence it cites: event ev-lead, a note" in (
        asked.reason
    )
    assert "newer than ev-block" in asked.reason and "no grant carries it" in asked.reason


def test_what_is_no_later_word_of_a_person() -> None:
    blocker = _event("ev-block", 12)
    params = {"task_id": "t-prog", "status": "blocked", "evidence": ["ev-block"]}
    for other in (
        _event("ev-older", 20, kind="note", source="lena"),  # before the evidence
        _event("ev-mine", 2, kind="note", source="custodian"),  # Custodian's own
        _event("ev-ahead", -2, kind="note", source="lena"),  # dated ahead of the hub
        _event("ev-else", 2, kind="note", source="lena").model_copy(update={"task_id": "t-todo"}),
    ):
        assert later_word(params, Evidence.of(_with(blocker, other))) is None, other.id
    # Citing the later event too makes it the newest cited: nothing is later.
    both = _with(blocker, _event("ev-two", 2))
    assert later_word({**params, "evidence": ["ev-block", "ev-two"]}, Evidence.of(both)) is None


def test_a_grant_issued_after_a_change_on_the_hub_carries_no_write_a_later_word_follows() -> None:
    # t-prog changed on the hub 24 h ago; the block cites a blocker older than the change, so it
    # is deferred to the change, and a grant issued after the change would carry it.
    grant = _grant("set_task_status", where={"status": "blocked"},
                   issued_at=NOW - timedelta(hours=1))  # fmt: skip
    blocker = _event("ev-old", 40)
    block = {"task_id": "t-prog", "status": "blocked", "evidence": ["ev-old"]}
    carried = _rule(_with(blocker), "set_task_status", grant, **block)
    assert carried.outcome == "execute" and carried.grant == grant.id, carried.reason
    # Lena wrote after the blocker: it waits on the change still, and the grant carries nothing.
    lead = _event("ev-lead", 30, kind="note", source="lena")
    waits = _rule(_with(blocker, lead), "set_task_status", grant, **block)
    assert waits.outcome == "queue" and waits.grant is None, waits.reason
    assert waits.code == "deferred" and waits.defers_to is None
    assert "older than the task's last change" in waits.reason
    assert "'lena' wrote on task t-prog after the evidence it cites: event ev-lead" in waits.reason


def test_a_sanctioned_move_is_asked_when_a_person_wrote_after_its_evidence() -> None:
    milestone = _event("ev-ship", 12, kind="milestone")
    done = {"task_id": "t-prog", "status": "done", "evidence": ["ev-ship"]}
    assert _rule(_with(milestone), "update_task_status", None, **done).outcome == "execute"
    later = _event("ev-wait", 1, kind="note", source="lena")
    asked = _rule(_with(milestone, later), "update_task_status", None, **done)
    assert asked.outcome == "queue" and "event ev-wait, a note" in asked.reason, asked.reason


# --- a repeat in another workstream ------------------------------------------------------------


def test_a_grants_create_repeating_another_workstreams_task_is_asked_naming_it() -> None:
    grant = _grant("create_task", where={"status": "todo"})
    new = _rule(_titled(), "create_task", grant, workstream_id="ws-docs", title="Rotate DNS keys")
    assert new.outcome == "execute" and new.grant == grant.id, new.reason
    asked = _rule(_titled(), "create_task", grant, workstream_id="ws-docs",
                  title="Audit the WAF rule set again")  # fmt: skip
    assert asked.outcome == "queue" and asked.grant is None, asked.reason
    assert "nearly repeats task t-prog 'Audit the WAF rule set', open in another workstream" in (
        asked.reason
    )
    # The same title word for word in another workstream is asked too.
    same = _rule(_titled(), "create_task", grant, workstream_id="ws-docs",
                 title="Verify the nightly snapshots")  # fmt: skip
    assert same.outcome == "queue" and "task t-block" in same.reason, same.reason
    # A repeat in its own workstream is denied, as before.
    own = _rule(_titled(), "create_task", grant, workstream_id="ws-web",
                title="Audit the WAF rule set again")  # fmt: skip
    assert own.outcome == "deny" and "open in its workstream" in own.reason


def test_a_decision_repeating_another_workstreams_open_decision_is_asked() -> None:
    grant = _grant("record_decision")
    asked = _rule(website(), "record_decision", grant, workstream_id="ws-web",
                  title="Pick the host, once more")  # fmt: skip
    assert asked.outcome == "queue" and asked.grant is None, asked.reason
    assert "nearly repeats decision d-1 'Pick a host', open in another workstream" in asked.reason
    own = _rule(website(), "record_decision", grant, title="Pick the host, once more")
    assert own.outcome == "deny" and "open in its workstream" in own.reason


# --- end to end --------------------------------------------------------------------------------


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Cli:
    """`custodian` in-process, with this test's memory directory."""
    return Cli(tmp_path, monkeypatch)


def _post(hub: ReferenceHub, task_id: str, kind: str, source: str) -> str:
    body = {"workstream_id": "web-ws-1", "task_id": task_id, "event_type": kind,
            "summary": "The vendor went quiet.", "source": source}  # fmt: skip
    response = httpx.post(f"{hub.url}/events", json=body, timeout=5)
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def test_a_run_asks_a_grants_block_after_the_leads_later_note(
    cli: Cli, small_hub: ReferenceHub
) -> None:
    cli.issue(small_hub.url, "--max", "3", "--expires", "7d", "--where", "status=blocked",
              "--evidence", "newer")  # fmt: skip
    blocker = _post(small_hub, "web-t-1", "blocker", "ben")
    lead = _post(small_hub, "web-t-1", "note", "lena")
    block = {"task_id": "web-t-1", "status": "blocked", "evidence": [blocker]}
    summary = cli.run(small_hub.url, {"operation": "set_task_status", "params": block,
                                      "rationale": "stuck"})  # fmt: skip
    [item] = summary["items"]
    assert item["outcome"] == "queued" and item.get("grant") is None, item
    assert f"event {lead}, a note" in item["reason"], item["reason"]
    assert hub_get(small_hub, "/tasks/web-t-1")["status"] == "in_progress"
    [pending] = cli.ok("approvals", "list", "--json").json()
    assert f"event {lead}, a note" in pending["waiting_because"]["text"]


def test_a_run_asks_a_grants_create_that_repeats_another_workstreams_task(
    cli: Cli, small_hub: ReferenceHub
) -> None:
    cli.issue(small_hub.url, "--max", "3", "--expires", "7d", op="create_task")
    repeat = {"workstream_id": "web-ws-2", "title": "Write the launch announcement again"}
    fresh = {"workstream_id": "web-ws-2", "title": "Add a sitemap"}
    summary = cli.run(small_hub.url, *({"operation": "create_task", "params": p,
                                        "rationale": "r"} for p in (repeat, fresh)))  # fmt: skip
    asked, ran = summary["items"]
    assert asked["outcome"] == "queued" and asked.get("grant") is None, asked
    assert "nearly repeats task web-t-3 'Write launch announcement'" in asked["reason"]
    assert ran["outcome"] == "executed" and ran.get("grant"), ran
    summary_now = hub_get(small_hub, "/domains/website/summary")
    titles = [t["title"] for ws in summary_now["workstreams"] for t in ws["tasks"]]
    assert titles.count("Write launch announcement") == 1 and "Add a sitemap" in titles
