"""Grants over who wrote last on a task, and what, and over its workstream's status (#37).

The facts (core/authority/scope.py): `last_by`, the source of the task's newest observed event
of a person (Custodian's own left out), `last_kind`, that event's kind, and `workstream_status`,
the workstream's status on the hub. The report finds them where they part a person's approvals
from their rejections (core/standing/scopes.py), and each printed command runs as printed on
the embedded and on a served hub. A rejection asked whatever would carry it (a person's later
word than its evidence, a repeat of another workstream's: core/authority/asked.py) parts nothing
a scope could name, as no grant would have covered it.
"""

from __future__ import annotations

import json
import shlex
from datetime import UTC, datetime, timedelta
from pathlib import Path

from custodian_hub import demo_dataset, load_seed
from custodian_runtime.core.approvals.items import ApprovalItem
from custodian_runtime.core.authority.evidence import Evidence
from custodian_runtime.core.authority.scope import scope_facts, scope_miss, scope_problem
from custodian_runtime.core.contract import DomainSummary, ProgressEvent
from custodian_runtime.core.limits import Limits
from custodian_runtime.core.standing.record import Standing
from custodian_runtime.core.standing.rule import Ground, observed_facts
from custodian_runtime.core.standing.scopes import Judged, clean_scopes, fits
from custodian_runtime.core.view import View
from custodian_runtime.journal.person.queue import ApprovalStore
from support.authority import plan_of, proposal, website
from support.runs import cli_io
from support.spine import held_hub

DOMAIN = "website"
NOW = datetime(2026, 5, 1, 9, tzinfo=UTC)
BLOCKED = {"task_id": "t-1", "status": "blocked"}


def _summary(events: list[ProgressEvent], ws_status: str = "active") -> DomainSummary:
    made, changed = NOW - timedelta(days=40), NOW - timedelta(days=9)
    return DomainSummary.model_validate({
        "domain": DOMAIN, "generated_at": NOW.isoformat(),
        "workstreams": [{"id": "ws-1", "domain": DOMAIN, "title": "Edge", "status": ws_status,
                         "owner": "mia", "created_at": made.isoformat(),
                         "updated_at": made.isoformat(),
                         "tasks": [{"id": "t-1", "workstream_id": "ws-1", "title": "Rotate",
                                    "status": "in_progress", "created_at": made.isoformat(),
                                    "updated_at": changed.isoformat()}]}],
        "recent_events": [e.model_dump(mode="json") for e in events],
    })  # fmt: skip


def _event(n: int, source: str, kind: str, hours: float, task: str = "t-1") -> ProgressEvent:
    """An event `hours` before NOW (negative: after it)."""
    return ProgressEvent(id=f"e-{n}", workstream_id="ws-1", task_id=task, event_type=kind,
                         summary="s", source=source,
                         created_at=NOW - timedelta(hours=hours))  # fmt: skip


def _facts(events: list[ProgressEvent], ws_status: str = "active") -> dict[str, str]:
    summary = _summary(events, ws_status)
    return scope_facts(BLOCKED, View.of(summary), NOW, Evidence.of(summary))


def test_who_wrote_last_is_the_newest_event_of_a_person_on_the_task() -> None:
    said = [_event(1, "jon", "blocker", 30), _event(2, "lena", "note", 5),
            _event(3, "custodian", "observation", 1),
            _event(4, "ravi", "milestone", 2, "t-2")]  # fmt: skip
    facts = _facts(said)
    # Custodian's own event, and a newer one on another task, are not a person's word on it
    assert (facts["last_by"], facts["last_kind"]) == ("lena", "note")
    assert facts["workstream_status"] == "active"
    # an event dated ahead of the hub's clock is no one's word yet
    ahead = _facts([*said, _event(5, "jon", "blocker", -1)])
    assert (ahead["last_by"], ahead["last_kind"]) == ("lena", "note")
    assert (_facts([*said, _event(6, "jon", "blocker", 0.5)])["last_kind"]) == "blocker"


def test_no_word_observed_is_no_fact_and_no_match() -> None:
    facts = _facts([_event(1, "ravi", "blocker", 3, "t-2")], ws_status="paused")
    assert "last_by" not in facts and "last_kind" not in facts
    assert facts["workstream_status"] == "paused"
    assert scope_miss({"last_kind": "blocker"}, facts) == (
        "covers only last_kind=blocker, and the item's last_kind is not observed"
    )
    assert "covers only workstream_status=active" in str(
        scope_miss({"workstream_status": "active"}, facts)
    )


def test_a_grant_over_the_last_word_covers_only_the_values_it_names() -> None:
    facts = _facts([_event(1, "jon", "blocker", 3)])
    assert scope_miss({"last_kind": "blocker", "last_by": "jon,ravi"}, facts) is None
    assert "the item has last_by=jon" in str(scope_miss({"last_by": "ravi,mei"}, facts))
    assert "the item has last_kind=blocker" in str(scope_miss({"last_kind": "note"}, facts))
    assert scope_problem({"last_by": "jon", "last_kind": "blocker"}) is None
    assert scope_problem({"workstream_status": "active"}) is None


def _blocks() -> list[Judged]:
    """Moves to blocked, oldest first, each citing a person's newer blocker: approved when that
    blocker is the newest word on the task; rejected when the lead wrote a note after it."""
    said: list[Judged] = []
    for n in range(12):
        by = ("jon", "ravi", "mei")[n % 3]
        facts = {"workstream": f"ws-{n % 3}", "task_status": "in_progress", "cites": "newer",
                 "last_by": by, "last_kind": "blocker", "workstream_status": "active"}  # fmt: skip
        said.append((True, {"task_id": f"t-{n}", "status": "blocked"}, facts))
        if n % 3 == 0:
            lead = facts | {"last_by": "lena", "last_kind": "note"}
            said.append((False, {"task_id": f"u-{n}", "status": "blocked"}, lead))
    return said


def test_the_last_word_parts_what_citing_a_newer_event_alone_does_not() -> None:
    said = _blocks()
    [best, *_] = clean_scopes(said, status_write=True, needed=8)
    assert best.scope.evidence == "newer" and len(best.approved) == 12
    assert best.scope.on["last_kind"] == "blocker"
    lead = {"cites": "newer", "last_by": "lena", "last_kind": "note", "task_status": "in_progress",
            "workstream_status": "active"}  # fmt: skip
    assert not fits(best.scope, {"task_id": "t-9", "status": "blocked"}, lead)


# Each printed command, run as printed.


def test_a_rejection_asked_whatever_would_carry_it_parts_nothing() -> None:
    """Creates in active workstreams approved; rejected: repeats of another workstream's task
    (asked anyway) and new tasks in a paused workstream. The repeats are left out: one scope."""
    said: list[Judged] = []
    for n in range(10):
        on = {"workstream": f"ws-{n % 4}", "workstream_status": "active"}
        said.append((True, {"workstream_id": on["workstream"], "status": "todo"}, on))
        if n % 2:
            said.append((False, {"workstream_id": on["workstream"], "status": "todo"},
                         on | {"asked": "anyway"}))  # fmt: skip
    paused = {"workstream": "ws-9", "workstream_status": "paused"}
    said += [(False, {"workstream_id": "ws-9", "status": "todo"}, paused)] * 3
    [best, *_] = clean_scopes(said, status_write=False, needed=8)
    assert best.scope.on["workstream_status"] == "active" and len(best.approved) == 10
    # the indexes are the window's own, past the rejections left out
    assert best.approved == frozenset(i for i, (ok, _, _) in enumerate(said) if ok)
    # without the mark, the repeats are rejections inside every scope the approvals hold
    plain = [(ok, p, {k: v for k, v in (f or {}).items() if k != "asked"}) for ok, p, f in said]
    assert clean_scopes(plain, status_write=False, needed=8) == []


def test_a_repeat_of_another_workstreams_task_is_marked_asked_when_queued() -> None:
    seen = website()
    ground = Ground(Standing(), None, NOW, Limits(), evidence=Evidence.of(seen),
                    view=View.of(seen))  # fmt: skip
    plan = plan_of(proposals=[
        proposal("create_task", workstream_id="ws-docs", title="Task t-todo again"),
        proposal("create_task", workstream_id="ws-docs", title="A page of its own"),
    ])  # fmt: skip
    repeat, fresh = (observed_facts(item, ground) or {} for item in plan.items)
    assert repeat.get("asked") == "anyway" and "asked" not in fresh
    assert fresh["workstream"] == "ws-docs"


def _item(n: int, ok: bool, facts: dict[str, str], hub_at: str) -> ApprovalItem:
    now = datetime.now(UTC)
    return ApprovalItem(
        id=f"apr-{n:08x}-0000", domain=DOMAIN, operation="set_task_status",
        params={"task_id": f"web-t-{n}", "status": "blocked", "evidence": [f"evt-{n}"]},
        run_id="run-1", fingerprint=f"f{n}", precondition={},
        status="executed" if ok else "rejected", hub_at=hub_at, facts=facts,
        created_at=now - timedelta(days=1), expires_at=now + timedelta(days=13),
        reject_reason=None if ok else "the lead wrote last on it; that stands",
    )  # fmt: skip


def _decided(memory: Path, hub_at: str) -> None:
    """`_blocks`, and two more rejected that a later word had them asked whatever would carry
    them (their facts as the approved ones', but for `asked`)."""
    store = ApprovalStore(memory)
    said = _blocks()
    later = [(False, p, {**(f or {}), "asked": "anyway"}) for ok, p, f in said if ok][:2]
    for n, (ok, _, facts) in enumerate([*said, *later]):
        store.save(_item(n, ok, dict(facts or {}), hub_at))


def _issue_as_printed(memory: Path) -> None:
    code, text, _ = cli_io("policy", "report", "--domain", DOMAIN, "--memory", str(memory),
                         "--by", "ana")  # fmt: skip
    assert code == 0
    [command] = [line for line in text.splitlines() if line.startswith("custodian")]
    assert "--on last_kind=blocker" in command and "--evidence newer" in command
    # each new fact, as the search narrowed it: who wrote last (the set a person only approved)
    # and the workstream's status
    assert "--on last_by=jon,mei,ravi" in command and "--on workstream_status=active" in command
    assert "the 4 rejected fall outside it" in command
    assert "the 2 other rejected were asked whatever would carry them" in command
    code, _, err = cli_io(*shlex.split(command)[1:])
    assert code == 0, err
    code, out, _ = cli_io("grants", "list", "--domain", DOMAIN, "--memory", str(memory), "--json")
    [grant] = json.loads(out)
    assert grant["state"] == "live" and grant["on"] == {
        "last_by": "jon,mei,ravi", "last_kind": "blocker", "task_status": "in_progress",
        "workstream_status": "active",
    }  # fmt: skip
    code, listed, _ = cli_io("grants", "list", "--domain", DOMAIN, "--memory", str(memory))
    assert "last_kind=blocker" in listed


def test_a_grant_over_the_last_word_runs_as_printed_on_the_embedded_hub(quiet_env: Path) -> None:
    memory, db = quiet_env / "memory", quiet_env / ".custodian" / "hub.sqlite3"
    db.parent.mkdir()
    load_seed(db, demo_dataset(datetime.now(UTC)))
    _decided(memory, f"embedded:{db}")
    _issue_as_printed(memory)


def test_a_grant_over_the_last_word_runs_as_printed_on_a_served_hub(quiet_env: Path) -> None:
    memory = quiet_env / "memory"
    with held_hub(quiet_env, None) as hub:
        _decided(memory, hub.url)
        _issue_as_printed(memory)
