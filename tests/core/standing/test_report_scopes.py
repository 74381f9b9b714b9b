"""Grants over what parted a person's approvals from their rejections (core/standing/scopes.py).

The facts a scope names (the target's workstream, its owner, the task's status, its idle days,
citing a person's newer event) are observed by the ruling and checked at every write
(core/authority/scope.py); the report suggests a scope only when no rejected proposal falls in
it, and each printed command runs as printed on the embedded and on a served hub.
"""

from __future__ import annotations

import json
import shlex
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from custodian_hub import demo_dataset, load_seed
from custodian_runtime.core.approvals.items import ApprovalItem
from custodian_runtime.core.authority.evidence import Evidence
from custodian_runtime.core.authority.scope import scope_facts, scope_miss, scope_problem
from custodian_runtime.core.contract import DomainSummary, ProgressEvent
from custodian_runtime.core.standing.classes import DecidedTally
from custodian_runtime.core.standing.commands import Asking
from custodian_runtime.core.standing.grants import Grant, covering
from custodian_runtime.core.standing.live import Live
from custodian_runtime.core.standing.scopes import Scope, clean_scopes, fits
from custodian_runtime.core.standing.suggestions import suggest
from custodian_runtime.core.view import View
from custodian_runtime.journal.person.queue import ApprovalStore
from support.runs import cli_io
from support.spine import held_hub

DOMAIN = "website"
NOW = datetime(2026, 5, 1, 9, tzinfo=UTC)


def _facts(owner: str, idle: int, cites: str = "newer") -> dict[str, str]:
    return {"workstream": f"ws-{owner}", "owner": owner, "task_status": "in_progress",
            "idle_days": str(idle), "cites": cites}  # fmt: skip


def _said() -> list[tuple[bool, dict[str, object], dict[str, str] | None]]:
    """Moves to blocked, oldest first: approved when they cite a newer event on a task idle a
    week or more; rejected when they cite none, or when the task changed in the last days."""
    blocked = {"task_id": "t", "status": "blocked"}
    said: list[tuple[bool, dict[str, object], dict[str, str] | None]] = []
    for n in range(10):
        said.append((True, blocked, _facts("mia" if n % 2 else "omar", 8 + n)))
        if n % 5 == 0:
            said.append((False, blocked, _facts("mia", 2)))
    said += [(False, blocked, _facts("mia", 9, "none")) for _ in range(4)]
    return said


def test_the_scope_found_leaves_out_every_rejection_and_is_the_one_covering_most() -> None:
    [best, *_] = clean_scopes(_said(), status_write=True, needed=8)
    assert best.scope.where == {"status": "blocked"} and best.scope.evidence == "newer"
    # past the rejected ones' 2 days, the least an approved one had; the facts all shared
    assert best.scope.on == {"idle_days": "8", "task_status": "in_progress"}
    assert len(best.approved) == 10


def test_a_bound_the_newer_rejections_reach_is_not_suggested() -> None:
    # The older half gives 8 (the least approved past its rejected 2); newer rejections at 8
    # and 9 reach it: the bound was not learnt, though 10 would leave out the window's.
    blocked = {"task_id": "t", "status": "blocked"}
    said = [*_said(), (False, blocked, _facts("mia", 8)), (False, blocked, _facts("omar", 9))]
    found = clean_scopes(said, status_write=True, needed=8)
    assert all("idle_days" not in f.scope.on for f in found)


def test_a_bound_that_held_on_the_newer_half_is_suggested() -> None:
    # Newer rejections at 5 and 6 stay under the older half's 8: the bound held out of sample.
    blocked = {"task_id": "t", "status": "blocked"}
    said = [*_said(), (False, blocked, _facts("mia", 5)), (False, blocked, _facts("omar", 6))]
    [best, *_] = clean_scopes(said, status_write=True, needed=8)
    assert best.scope.on["idle_days"] == "8" and best.scope.evidence == "newer"


def test_no_scope_when_a_rejection_shares_every_fact_the_approvals_hold() -> None:
    said = [*_said(), (False, {"task_id": "t", "status": "blocked"}, _facts("omar", 30))]
    found = clean_scopes(said, status_write=True, needed=8)
    assert all(f.scope.on.get("owner") == "mia" for f in found)
    assert all(len(f.approved) < 8 or f.scope.on.get("owner") == "mia" for f in found)


def test_a_rejection_whose_facts_were_not_kept_counts_inside_every_scope_its_params_fit() -> None:
    said = [*_said(), (False, {"task_id": "t", "status": "blocked"}, None)]
    assert clean_scopes(said, status_write=True, needed=8) == []


def test_evidence_is_a_scope_only_for_a_status_write() -> None:
    found = clean_scopes(_said(), status_write=False, needed=8)
    assert all(f.scope.evidence is None for f in found)


def _summary() -> DomainSummary:
    made, changed = NOW - timedelta(days=40), NOW - timedelta(days=9, hours=1)
    return DomainSummary.model_validate({
        "domain": DOMAIN, "generated_at": NOW.isoformat(),
        "workstreams": [{"id": "ws-1", "domain": DOMAIN, "title": "Edge", "status": "active",
                         "owner": "mia", "created_at": made.isoformat(),
                         "updated_at": made.isoformat(),
                         "tasks": [{"id": "t-1", "workstream_id": "ws-1", "title": "Rotate",
                                    "status": "in_progress", "created_at": made.isoformat(),
                                    "updated_at": changed.isoformat()}]}],
    })  # fmt: skip


def test_the_facts_are_read_from_the_domain_as_observed() -> None:
    view = View.of(_summary())
    facts = scope_facts({"task_id": "t-1", "status": "blocked"}, view, NOW, Evidence())
    assert facts == {"workstream": "ws-1", "owner": "mia", "workstream_status": "active",
                     "task_status": "in_progress", "idle_days": "9", "cites": "none"}  # fmt: skip
    create = scope_facts({"workstream_id": "ws-1", "title": "x"}, view, NOW)
    assert create == {"workstream": "ws-1", "owner": "mia", "workstream_status": "active"}


def _event(n: int, source: str, kind: str, days: int, task: str = "t-1") -> ProgressEvent:
    return ProgressEvent(id=f"e-{n}", workstream_id="ws-1", task_id=task, event_type=kind,
                         summary="s", source=source,
                         created_at=NOW - timedelta(days=days, hours=1))  # fmt: skip


def test_the_days_since_the_owner_set_the_status_err_only_short() -> None:
    view, blocked = View.of(_summary()), {"task_id": "t-1", "status": "blocked"}

    def days(evidence: Evidence) -> str | None:
        return scope_facts(blocked, view, NOW, evidence).get("owner_set_days")

    said = [_event(1, "Mia", "status_change", 3), _event(2, "lee", "note", 12)]
    assert days(Evidence.of(_summary().model_copy(update={"recent_events": said}))) == "3"
    # Another's status change, or the owner's on another task, is not the owner's word here;
    # with none observed, the days reach only as far back as the oldest event observed.
    others = [_event(3, "lee", "status_change", 1), _event(4, "mia", "status_change", 2, "t-2"),
              _event(5, "kai", "blocker", 12)]  # fmt: skip
    assert days(Evidence.of(_summary().model_copy(update={"recent_events": others}))) == "12"
    whole = Evidence.of(_summary(), others, read_tasks=["t-1"])
    assert days(whole) == "365" and days(Evidence()) is None
    # A grant needing a week since the owner's word covers the move only past it.
    grant = _grant({"owner_set_days": "7"})
    fresh = scope_facts(blocked, view, NOW, Evidence.of(_summary().model_copy(
        update={"recent_events": said})))  # fmt: skip
    found = covering("set_task_status", blocked, [grant], {}, NOW, "hub_id:h", facts=fresh)
    assert found.grant is None and "owner_set_days>=7, the item has owner_set_days=3" in str(
        found.why_not
    )
    assert scope_problem({"owner_set_days": "7"}) is None


def _grant(on: dict[str, str]) -> Grant:
    return Grant(id="grant-0123456789ab", domain=DOMAIN, operation="set_task_status",
                 where={"status": "blocked"}, max_uses=5, expires_at=NOW + timedelta(days=7),
                 by="ana", reason="scoped", hub_id="hub_id:h", issued_at=NOW - timedelta(hours=1),
                 on=on)  # fmt: skip


def test_the_ruling_covers_only_what_every_named_fact_holds_for() -> None:
    grant, params = (
        _grant({"owner": "mia", "idle_days": "7"}),
        {"task_id": "t", "status": "blocked"},
    )

    def cover(facts: dict[str, str] | None) -> str | None:
        found = covering("set_task_status", params, [grant], {}, NOW, "hub_id:h", facts=facts)
        return None if found.grant is not None else "; ".join(found.why_not)

    assert cover({"owner": "mia", "idle_days": "7"}) is None
    assert "covers only idle_days>=7, the item has idle_days=6" in str(
        cover({"owner": "mia", "idle_days": "6"})
    )
    assert "covers only owner=mia, the item has owner=omar" in str(
        cover({"owner": "omar", "idle_days": "9"})
    )
    assert "is not observed" in str(cover(None))
    assert scope_miss({"task_status": "todo"}, {"task_status": "todo"}) is None


def test_a_scope_names_only_the_facts_the_ruling_observes() -> None:
    assert "no such fact" in str(scope_problem({"assignee": "x"}))
    assert "whole days from 1 to 365" in str(scope_problem({"idle_days": "0"}))
    assert scope_problem({"owner": "mia", "idle_days": "14"}) is None


# The report, and each command it prints run as printed.


def _item(n: int, ok: bool, facts: dict[str, str], hub_at: str) -> ApprovalItem:
    now = datetime.now(UTC)
    return ApprovalItem(
        id=f"apr-{n:08x}-0000", domain=DOMAIN, operation="create_task",
        params={"workstream_id": facts["workstream"], "title": f"Task {n}"}, run_id="run-1",
        fingerprint=f"f{n}", precondition={}, status="executed" if ok else "rejected",
        hub_at=hub_at, facts=facts, created_at=now - timedelta(days=1),
        expires_at=now + timedelta(days=13),
        reject_reason=None if ok else "only its owner creates tasks there",
    )  # fmt: skip


def _decided(memory: Path, hub_at: str) -> None:
    """Creates in ana's workstreams approved (9), in raj's rejected (3): no param parts them."""
    store = ApprovalStore(memory)
    for n in range(9):
        ws = f"web-ws-{n % 3 + 1}"
        store.save(_item(n, True, {"workstream": ws, "owner": "ana"}, hub_at))
    for n in range(20, 23):
        store.save(_item(n, False, {"workstream": f"web-ws-{n}", "owner": "raj"}, hub_at))


def _issue_as_printed(memory: Path) -> dict[str, Any]:
    code, text, _ = cli_io("policy", "report", "--domain", DOMAIN, "--memory", str(memory),
                         "--by", "ana")  # fmt: skip
    assert code == 0
    [command] = [line for line in text.splitlines() if line.startswith("custodian")]
    # the owner, and the set of workstreams a person only approved (the narrowest of equals)
    on = "--on owner=ana --on workstream=web-ws-1,web-ws-2,web-ws-3"
    assert f"--where status=todo {on}" in command
    assert "on owner=ana workstream=web-ws-1,web-ws-2,web-ws-3;" in command
    assert "the 3 rejected fall outside it" in command
    code, _, err = cli_io(*shlex.split(command)[1:])
    assert code == 0, err
    code, out, _ = cli_io("grants", "list", "--domain", DOMAIN, "--memory", str(memory), "--json")
    [grant] = json.loads(out)
    assert grant["on"] == {"owner": "ana", "workstream": "web-ws-1,web-ws-2,web-ws-3"}
    assert grant["state"] == "live"
    code, listed, _ = cli_io("grants", "list", "--domain", DOMAIN, "--memory", str(memory))
    assert "; on owner=ana workstream=web-ws-1,web-ws-2,web-ws-3)" in listed
    code, again, _ = cli_io("policy", "report", "--domain", DOMAIN, "--memory", str(memory))
    assert not [line for line in again.splitlines() if line.startswith("custodian")]
    return dict(grant)


def test_a_scope_over_facts_runs_as_printed_on_the_embedded_hub(quiet_env: Path) -> None:
    memory, db = quiet_env / "memory", quiet_env / ".custodian" / "hub.sqlite3"
    db.parent.mkdir()
    load_seed(db, demo_dataset(datetime.now(UTC)))
    _decided(memory, f"embedded:{db}")
    assert _issue_as_printed(memory)["hub_id"].startswith("hub_id:")


def test_a_scope_over_facts_runs_as_printed_on_a_served_hub(quiet_env: Path) -> None:
    memory = quiet_env / "memory"
    with held_hub(quiet_env, None) as hub:
        _decided(memory, hub.url)
        _issue_as_printed(memory)


def test_an_unknown_fact_is_refused_with_the_ones_it_may_name(quiet_env: Path) -> None:
    memory = quiet_env / "memory"
    code, _, err = cli_io("grants", "issue", "--domain", DOMAIN, "--operation", "create_task",
                        "--on", "team=x", "--max", "3", "--expires", "7d", "--hub", "embedded",
                        "--memory", str(memory), "--by", "ana", "--reason", "r")  # fmt: skip
    assert code != 0 and "--on team=...: no such fact; scope by one of: workstream" in err


def test_scope_is_a_search_over_few_facts() -> None:
    assert Scope(where={"status": "blocked"}, on={"owner": "mia"}).size() == 2


def test_a_renewal_keeps_the_scope_it_renews() -> None:
    grant = _grant({"owner": "mia", "idle_days": "7"})
    live = Live([grant], {grant.id: 1}, NOW + timedelta(days=6, hours=12))  # under 2 days left
    tally = DecidedTally("set_task_status", 0, 0, 0, 0)
    found = suggest(tally, None, live, Asking(DOMAIN, "mem", "embedded", "ana")).suggestions
    [renew] = [s for s in found if s.kind == "renew"]
    assert "--where status=blocked --on idle_days=7 --on owner=mia --max" in renew.command


def test_a_grant_scoped_by_facts_hides_no_class_outside_them() -> None:
    """A live grant for ana's workstreams covers none of raj's: his clean workstream is still
    suggested, and no scope is suggested twice."""
    said: list[tuple[bool, dict[str, object], dict[str, str] | None]] = []
    for ws, owner, ok, n in (("ws-1", "ana", True, 9), ("ws-4", "raj", True, 9),
                             ("ws-5", "raj", False, 3)):  # fmt: skip
        said += [(ok, {"workstream_id": ws, "status": "todo"}, {"workstream": ws, "owner": owner})
                 for _ in range(n)]  # fmt: skip
    tally = DecidedTally(
        "create_task", 18, 3, 0, 0, tuple((ok, p) for ok, p, _ in said),
        tuple(f for _, _, f in said),
    )  # fmt: skip
    grant = _grant({"owner": "ana"}).model_copy(
        update={"operation": "create_task", "where": {"status": "todo"}}
    )
    live = Live([grant], {grant.id: 1}, NOW)
    found = suggest(tally, None, live, Asking(DOMAIN, "mem", "embedded", "ana")).suggestions
    commands = [s.command for s in found]
    assert any("--where workstream_id=ws-4" in c for c in commands)
    assert not any("--on owner=ana" in c for c in commands)


def test_a_grant_on_the_days_since_the_owner_set_the_status_runs_as_typed(quiet_env: Path) -> None:
    memory, db = quiet_env / "memory", quiet_env / ".custodian" / "hub.sqlite3"
    db.parent.mkdir()
    load_seed(db, demo_dataset(datetime.now(UTC)))
    code, _, err = cli_io("grants", "issue", "--domain", DOMAIN, "--operation", "set_task_status",
                        "--where", "status=blocked", "--on", "owner_set_days=7", "--max", "3",
                        "--expires", "7d", "--evidence", "newer", "--hub", "embedded",
                        "--memory", str(memory), "--by", "ana", "--reason", "r")  # fmt: skip
    assert code == 0, err
    code, listed, _ = cli_io("grants", "list", "--domain", DOMAIN, "--memory", str(memory))
    assert "on owner_set_days>=7" in listed


def _creates(counts: dict[str, tuple[int, int]]) -> list[tuple[bool, dict[str, object], Any]]:
    """Creates per workstream: (approved, rejected) of each, oldest first."""
    said: list[tuple[bool, dict[str, object], Any]] = []
    for ws, (yes, no) in counts.items():
        facts = {"workstream": ws, "owner": "raj" if ws in ("w4", "w5", "w6") else "ana"}
        said += [(True, {"workstream_id": ws, "status": "todo"}, facts)] * yes
        said += [(False, {"workstream_id": ws, "status": "todo"}, facts)] * no
    return said


def test_one_scope_covers_the_set_of_values_a_person_only_approved() -> None:
    said = _creates({"w1": (4, 0), "w2": (2, 0), "w3": (1, 0), "w4": (3, 0), "w5": (0, 3)})
    [best, *_] = clean_scopes(said, status_write=False, needed=8)
    # w3 (one approval) waits for a second; w5 (rejected) is outside; 9 approvals in one scope
    assert best.scope.on == {"workstream": "w1,w2,w4"} and len(best.approved) == 9
    assert fits(best.scope, {"workstream_id": "w2", "status": "todo"}, {"workstream": "w2"})
    assert not fits(best.scope, {"workstream_id": "w5", "status": "todo"}, {"workstream": "w5"})
    assert not fits(best.scope, {"workstream_id": "w9", "status": "todo"}, {"workstream": "w9"})
    # a rejection with its facts unknown could be any value: no set is found
    unknown = [*said, (False, {"workstream_id": "w1", "status": "todo"}, None)]
    assert all("," not in str(f.scope.on) for f in clean_scopes(unknown, False, 8))


def test_a_grant_on_a_set_of_values_covers_each_and_only_them() -> None:
    grant = _grant({"workstream": "ws-1,ws-2"})
    params = {"task_id": "t", "status": "blocked"}
    for ws, covered in (("ws-1", True), ("ws-2", True), ("ws-3", False)):
        found = covering("set_task_status", params, [grant], {}, NOW, "hub_id:h",
                         facts={"workstream": ws})  # fmt: skip
        assert (found.grant is not None) is covered
    assert "none empty" in str(scope_problem({"workstream": "ws-1,"}))


def test_a_grant_on_a_set_of_values_runs_as_typed(quiet_env: Path) -> None:
    memory, db = quiet_env / "memory", quiet_env / ".custodian" / "hub.sqlite3"
    db.parent.mkdir()
    load_seed(db, demo_dataset(datetime.now(UTC)))
    code, _, err = cli_io("grants", "issue", "--domain", DOMAIN, "--operation", "create_task",
                        "--on", "workstream=web-ws-1,web-ws-2", "--max", "3", "--expires", "7d",
                        "--hub", "embedded", "--memory", str(memory), "--by", "ana",
                        "--reason", "r")  # fmt: skip
    assert code == 0, err
    code, out, _ = cli_io("grants", "list", "--domain", DOMAIN, "--memory", str(memory), "--json")
    assert json.loads(out)[0]["on"] == {"workstream": "web-ws-1,web-ws-2"}


def test_one_scope_over_a_set_comes_before_a_small_first_grant_per_value() -> None:
    """Creates approved in four workstreams (4, 2, 2, 2), rejected in a fifth: no workstream
    earns a full grant, and the one grant over the set covers more than a first grant on w1."""
    said = _creates({"w1": (4, 0), "w2": (2, 0), "w3": (2, 0), "w4": (2, 0), "w5": (0, 3)})
    tally = DecidedTally(
        "create_task", 10, 3, 0, 0, tuple((ok, p) for ok, p, _ in said),
        tuple(f for _, _, f in said),
    )  # fmt: skip
    found = suggest(tally, None, Live(now=NOW), Asking(DOMAIN, "mem", "embedded", "ana"))
    [one] = found.suggestions
    assert "--on workstream=w1,w2,w3,w4" in one.command and "--max 10" in one.command
    assert "10 of 10 approved" in one.why and "the 3 rejected fall outside it" in one.why


def test_after_a_reversal_a_grant_narrowed_past_it_is_suggested() -> None:
    """A plain grant for blocked moves was suspended when raj set back one of its moves on
    t-10: the next report suggests the grant narrowed to leave that write's facts out, and
    nothing while the reversed write's facts are not recorded."""
    said: list[tuple[bool, dict[str, object], dict[str, str] | None]] = []
    for n in range(12):
        ws, owner = ("ws-1", "ana") if n < 9 else ("ws-4", "raj")
        said.append(
            (
                True,
                {"task_id": f"t-{n}", "status": "blocked"},
                {"workstream": ws, "owner": owner, "task_status": "in_progress"},
            )
        )
    tally = DecidedTally(
        "set_task_status", 12, 0, 0, 0, tuple((ok, p) for ok, p, _ in said),
        tuple(f for _, _, f in said),
    )  # fmt: skip
    plain = _grant({}).model_copy(update={"on": {}})
    why = "a person set task t-10 back from blocked to in_progress"
    asking = Asking(DOMAIN, "mem", "embedded", "ana")
    raj = {"workstream": "ws-4", "owner": "raj"}
    live = Live([plain], {}, NOW, suspended={plain.id: why}, reversed_on={plain.id: raj})
    [narrowed] = [s for s in suggest(tally, None, live, asking).suggestions if s.on]
    assert narrowed.on == {"owner": "ana", "task_status": "in_progress", "workstream": "ws-1"}
    assert "; the 1 reversed by a person fall outside it" in narrowed.why
    unknown = Live([plain], {}, NOW, suspended={plain.id: why})
    assert not [s for s in suggest(tally, None, unknown, asking).suggestions if s.on]


def test_a_first_grant_reaches_only_the_workstreams_its_approvals_were_in() -> None:
    """4 creates approved, in w1 and w2, none rejected: a first grant, earned on so few
    decisions, covers no create in w3, where no person decided one; unknown facts, no scope."""
    said = _creates({"w1": (3, 0), "w2": (1, 0)})
    tally = DecidedTally(
        "create_task", 4, 0, 0, 0, tuple((ok, p) for ok, p, _ in said),
        tuple(f for _, _, f in said),
    )  # fmt: skip
    asking = Asking(DOMAIN, "mem", "embedded", "ana")
    [first] = suggest(tally, None, Live(now=NOW), asking).suggestions
    assert first.on == {"workstream": "w1,w2"} and "--on workstream=w1,w2" in first.command
    assert first.why.endswith("; only in the workstreams its approvals were in"), first.why
    grant = Scope(first.where, first.on)
    assert fits(grant, {"workstream_id": "w2", "status": "todo"}, {"workstream": "w2"})
    assert not fits(grant, {"workstream_id": "w3", "status": "todo"}, {"workstream": "w3"})
    unknown = DecidedTally("create_task", 4, 0, 0, 0, tally.decided, ())
    [plain] = suggest(unknown, None, Live(now=NOW), asking).suggestions
    assert plain.on == {} and "--on" not in plain.command


def test_a_renewal_reaches_each_workstream_a_person_approved_its_class_in_and_never_rejected() -> (
    None
):
    first = Grant(id="grant-0123456789ab", domain=DOMAIN, operation="create_task",
                  where={"status": "todo"}, max_uses=7, expires_at=NOW + timedelta(hours=20),
                  by="ana", reason="first", hub_id="hub_id:h", issued_at=NOW - timedelta(days=6),
                  on={"workstream": "w1,w2"})  # fmt: skip
    asking = Asking(DOMAIN, "mem", "embedded", "ana")
    live = Live([first], {first.id: 7}, NOW)

    def renewed(counts: dict[str, tuple[int, int]]) -> Any:
        said = _creates(counts)
        yes = sum(ok for ok, _, _ in said)
        tally = DecidedTally(
            "create_task", yes, len(said) - yes, 0, 0, tuple((ok, p) for ok, p, _ in said),
            tuple(f for _, _, f in said),
        )  # fmt: skip
        return next(s for s in suggest(tally, None, live, asking).suggestions if s.kind == "renew")

    # Approved twice in w3 since, never rejected there: the renewal reaches w3, and says so;
    # once in w5 is not yet enough, as for a value of a scope's set.
    wider = renewed({"w1": (4, 0), "w3": (2, 0), "w5": (1, 0)})
    assert wider.on == {"workstream": "w1,w2,w3"}, wider.command
    assert wider.why.endswith("now also on workstream w3, approved there and never rejected")
    # Rejected in w4 (and approved there too): w4 stays out; w3 still comes in.
    assert renewed({"w3": (2, 0), "w4": (3, 1)}).on == {"workstream": "w1,w2,w3"}
    # A rejection inside the grant's own workstreams: renewed as it was, no wider.
    assert renewed({"w1": (3, 1), "w3": (2, 0)}).on == {"workstream": "w1,w2"}
