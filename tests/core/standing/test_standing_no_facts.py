"""A standing "no" said of a fact of the target (#37): who wrote the task's newest word of a
person, or the workstream's status. Rejected 3 times with one value and never approved with it,
a proposal with that value is held (core/authority/refusals.py)."""

from __future__ import annotations

import shlex
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from custodian_runtime.core.approvals.history import ApprovalHistory, DecidedMark
from custodian_runtime.core.approvals.items import ApprovalItem, said_of
from custodian_runtime.core.authority.authorize import Ruling, authorize
from custodian_runtime.core.authority.evidence import Evidence
from custodian_runtime.core.authority.refusals import fact_nos_in
from custodian_runtime.core.contract import ProgressEvent
from custodian_runtime.core.limits import Limits
from custodian_runtime.core.standing.said_no import SaidNo, lifted_history, said_problem
from custodian_runtime.core.view import View
from custodian_runtime.person.said_no import command as no_command
from custodian_runtime.run.orient import held_briefs
from support.authority import NOW, plan_of, proposal, website
from support.runs import cli_io

BLOCK = {"status": "blocked"}


def _mark(task: str, days_ago: float, approved: bool = False, **on: str) -> DecidedMark:
    at = (NOW - timedelta(days=days_ago)).isoformat()
    why = "" if approved else f"rejected by ana: lena wrote last on {task}; that stands"
    return DecidedMark("set_task_status", "blocked", task, "", approved, why, at, "",
                       "", tuple(sorted(on.items())))  # fmt: skip


def _said(*extra: DecidedMark) -> ApprovalHistory:
    """Moves to blocked in ws-web: approved where jon wrote last, rejected 3 times where lena
    did; the class as a whole, and its workstream, hold an approval."""
    return ApprovalHistory(said=(
        _mark("t-todo", 4, approved=True, last_by="jon", workstream_status="active"),
        _mark("t-prog", 3, last_by="lena", workstream_status="active"),
        _mark("t-block", 2, last_by="lena", workstream_status="active"),
        _mark("t-done", 1, last_by="lena", workstream_status="active"),
        *extra,
    ))  # fmt: skip


def _view() -> View:
    return View.of(website())


def _word(source: str, hours: float, n: int = 1, kind: str = "note") -> ProgressEvent:
    return ProgressEvent(id=f"ev-{n}", workstream_id="ws-web", task_id="t-prog",
                         event_type=kind, summary="I am chasing it; keep it in progress",
                         source=source, created_at=NOW - timedelta(hours=hours))  # fmt: skip


def _rule(history: ApprovalHistory, *events: ProgressEvent, ws_status: str = "active") -> Ruling:
    seen = website()
    kept = tuple(w.model_copy(update={"status": ws_status}) for w in seen.workstreams)
    seen = seen.model_copy(update={"workstreams": kept, "recent_events": events})
    plan = plan_of(proposals=[proposal("set_task_status", task_id="t-prog", **BLOCK)])
    (ruling,) = authorize(plan, seen, Limits(), history, evidence=Evidence.of(seen))
    return ruling


def test_moves_where_one_person_wrote_last_rejected_every_time_are_held() -> None:
    held = _rule(_said(), _word("jon", 30, 1, "blocker"), _word("lena", 2, 2))
    assert held.outcome == "deny", held.reason
    assert (
        "held: a standing no, 3 proposals of set_task_status status=blocked in tasks whose "
        "newest word of a person is lena's rejected and none approved"
    ) in held.reason
    assert "lena wrote last on t-done; that stands" in held.reason
    # Her own newer word is the word that holds it, not one that asks again.
    assert _rule(_said(), _word("lena", 2, 1), _word("lena", 1, 2)).outcome == "deny"
    # Another's newer word ends the fact: the move is asked.
    asked = _rule(_said(), _word("lena", 2, 1), _word("jon", 1, 2, "blocker"))
    assert asked.outcome == "queue" and "standing no" not in asked.reason
    # No word of a person observed on the task: not in the "no".
    assert _rule(_said()).outcome == "queue"


def test_one_approval_with_the_value_or_with_no_facts_kept_says_no_no() -> None:
    lena = _word("lena", 2)
    assert _rule(_said(_mark("t-docs", 0.5, True, last_by="lena")), lena).outcome == "queue"
    unknown = _mark("t-docs", 0.5, approved=True)  # decided before its facts were kept
    assert _rule(_said(unknown), lena).outcome == "queue"
    assert _rule(_said(_mark("t-docs", 0.5, True, last_by="mei")), lena).outcome == "deny"
    two = ApprovalHistory(said=_said().said[:3])
    assert _rule(two, lena).outcome == "queue"
    # Every move rejected, none approved with another value: the fact parts nothing, and the
    # class's own "no" is scoped by its workstream (here 2 in ws-web, 1 in ws-docs: none).
    spread = tuple(_mark(t, d, last_by="lena") for t, d in (("t-prog", 3), ("t-block", 2),
                                                              ("t-docs", 1)))  # fmt: skip
    assert _rule(ApprovalHistory(said=spread), lena).outcome == "queue"
    with_other = ApprovalHistory(said=(*spread, _mark("t-todo", 4, True, last_by="jon")))
    assert _rule(with_other, lena).outcome == "deny"


def test_the_kind_of_the_last_word_says_no_no() -> None:
    """People weigh a kind differently (one blocks on a note, another does not): three
    rejections where a note was the newest word, each by another, hold nothing."""
    said = ApprovalHistory(said=(
        _mark("t-todo", 4, approved=True, last_by="jon"),
        *(_mark(t, d, last_by=who, last_kind="note")
          for t, d, who in (("t-prog", 3, "ravi"), ("t-block", 2, "mei"), ("t-done", 1, "kai"))),
    ))  # fmt: skip
    assert _rule(said, _word("ben", 2)).outcome == "queue"


def test_a_paused_workstreams_no_asks_again_once_on_a_persons_newer_word() -> None:
    paused = {"workstream_status": "paused"}
    history = ApprovalHistory(said=(
        _mark("t-todo", 4, approved=True, workstream_status="active"),
        *(_mark(t, d, **paused) for t, d in (("t-prog", 3), ("t-block", 2), ("t-done", 1))),
    ))  # fmt: skip
    held = _rule(history, ws_status="paused")
    assert held.outcome == "deny" and "in workstreams whose status is paused" in held.reason
    assert _rule(history, ws_status="active").outcome == "queue"
    asked = _rule(history, _word("ana", 2), ws_status="paused")
    assert asked.outcome == "queue" and "asked once more" in asked.reason


def test_a_decided_item_keeps_the_facts_a_no_may_be_said_of() -> None:
    now = datetime.now(NOW.tzinfo)
    facts = {"workstream": "ws-web", "owner": "ana", "workstream_status": "active",
             "last_by": "lena", "last_kind": "note", "cites": "newer"}  # fmt: skip
    item = ApprovalItem(
        id="apr-00000001-0000", domain="website", operation="set_task_status",
        params={"task_id": "t-prog", "status": "blocked"}, run_id="run-1", fingerprint="f1",
        precondition={}, status="rejected", hub_at="embedded:x", facts=facts,
        created_at=now - timedelta(days=1), expires_at=now + timedelta(days=13),
        decided_at=now, reject_reason="lena wrote last",
    )  # fmt: skip
    mark = said_of(item)
    assert mark is not None and mark.on == (
        ("asked", "no"), ("last_by", "lena"), ("workstream_status", "active"),
    )  # fmt: skip
    assert DecidedMark.from_record(mark.as_record()) == mark
    old: list[Any] = mark.as_record()[:8]  # a mark kept before: no facts
    assert DecidedMark.from_record(old).on == ()


def test_the_prompt_shows_a_no_said_of_a_fact_with_the_persons_reasons() -> None:
    [no] = fact_nos_in(_said())
    assert no.label() == (
        "set_task_status status=blocked in tasks whose newest word of a person is lena's"
    )
    [brief] = [b for b in held_briefs(website(), _said()) if b.status == "held"]
    assert brief.target == "tasks whose newest word of a person is lena's"
    assert "lena wrote last on t-done; that stands" in str(brief.reason)
    assert fact_nos_in(ApprovalHistory(said=_said().said[:3])) == ()


def _cited(task: str, days_ago: float, cites: str, approved: bool = False) -> DecidedMark:
    at = (NOW - timedelta(days=days_ago)).isoformat()
    why = "" if approved else f"rejected by ana: cites no word of the team ({task})"
    return DecidedMark("set_task_status", "blocked", task, "", approved, why, at, cites, "",
                       (("asked", "no"),))  # fmt: skip


def test_moves_citing_nothing_rejected_in_every_workstream_are_held_in_any() -> None:
    """One rejection of a move citing nothing in each of three workstreams: no workstream's
    own "no"; across the domain, with moves citing a newer word approved, it is one."""
    said = (_cited("t-todo", 4, "newer", approved=True), _cited("t-prog", 3, "none"),
            _cited("t-docs", 2, "none"), _cited("t-ops", 1, "none"))  # fmt: skip
    held = _rule(ApprovalHistory(said=said))
    assert held.outcome == "deny", held.reason
    assert "3 proposals of set_task_status status=blocked citing none in every workstream" in (
        held.reason
    )
    # a person's newer word on the target asks once more
    asked = _rule(ApprovalHistory(said=said), _word("ana", 2))
    assert asked.outcome == "queue" and "asked once more" in asked.reason
    # never approved a move citing a newer word either: the fact parts nothing
    alone = ApprovalHistory(said=said[1:])
    assert _rule(alone).outcome == "queue"


def _create(ws: str, days_ago: float, asked: str, approved: bool = False) -> DecidedMark:
    at = (NOW - timedelta(days=days_ago)).isoformat()
    why = "" if approved else "rejected by ana: already tracked in another workstream"
    return DecidedMark("create_task", "", "", ws, approved, why, at, "", "",
                       (("asked", asked), ("workstream_status", "active")))  # fmt: skip


def test_repeats_of_another_workstreams_task_rejected_every_time_are_held() -> None:
    said = ApprovalHistory(said=(
        _create("ws-web", 5, "no", approved=True), _create("ws-docs", 4, "no", approved=True),
        _create("ws-web", 3, "anyway"), _create("ws-docs", 2, "anyway"),
        _create("ws-web", 1, "anyway"),
    ))  # fmt: skip
    plan = plan_of(proposals=[
        proposal("create_task", workstream_id="ws-docs", title="Task t-todo again"),
        proposal("create_task", workstream_id="ws-docs", title="A page of its own"),
    ])  # fmt: skip
    seen = website()
    docs = next(w for w in seen.workstreams if w.id == "ws-docs")
    guide = docs.model_copy(update={"tasks": tuple(
        t.model_copy(update={"title": "Write the guide"}) for t in docs.tasks)})  # fmt: skip
    kept = tuple(guide if w.id == "ws-docs" else w for w in seen.workstreams)
    seen = seen.model_copy(update={"workstreams": kept})
    repeat, fresh = authorize(plan, seen, Limits(), said, evidence=Evidence.of(seen))
    assert repeat.outcome == "deny", repeat.reason
    assert "create_task in proposals asked whatever would carry them" in repeat.reason
    assert fresh.outcome == "queue", fresh.reason
    [no] = fact_nos_in(said)
    assert no.label() == "create_task in proposals asked whatever would carry them"


# --- a "no" of a fact said in words, or lifted (`policy no --on FACT=VALUE`) --------------------


def _said_no(fact: str, lifted: bool = False, at: datetime = NOW) -> SaidNo:
    return SaidNo("set_task_status", "blocked", "", "", "", "ana", "lena's word stands", at,
                  at + timedelta(days=30), lifted, fact)  # fmt: skip


def test_a_no_said_of_a_fact_reads_and_holds_as_the_one_found() -> None:
    said = _said_no("last_by=lena")
    found = fact_nos_in(_said())
    assert [r.label() for r in found] == [said.label()]
    assert said.label() == (
        "set_task_status status=blocked in tasks whose newest word of a person is lena's"
    )
    facts = {"last_by": "lena", "workstream": "ws-web"}
    assert said.holds("set_task_status", "blocked", facts)
    assert not said.holds("set_task_status", "blocked", {**facts, "last_by": "jon"})
    assert not said.holds("set_task_status", "cancelled", facts)
    assert not said.holds("set_task_status", "blocked", {"workstream": "ws-web"})  # unobserved
    cites = _said_no("cites=none")
    assert cites.label().endswith(" in every workstream")


def test_a_no_said_of_a_fact_names_a_fact_a_no_is_found_by() -> None:
    life = timedelta(days=30)
    assert said_problem("set_task_status", "blocked", "", "", "", life, "last_by=lena") is None
    assert said_problem("set_task_status", "blocked", "", "", "", life, "asked=anyway") is None
    for bad in ("owner_set_days=3", "last_by=", "nonsense"):
        problem = said_problem("set_task_status", "blocked", "", "", "", life, bad)
        assert problem is not None and "FACT one of" in problem, bad
    bad_cites = said_problem("set_task_status", "blocked", "", "", "", life, "cites=all")
    assert bad_cites is not None and "none, other, newer" in bad_cites
    two = said_problem("set_task_status", "blocked", "", "ws-web", "", life, "last_by=lena")
    assert two is not None and "(one of them)" in two


def test_a_lift_of_a_fact_sets_aside_the_rejections_with_that_value_only() -> None:
    history = _said(_mark("t-docs", 0.5, last_by="mei", workstream_status="active"))
    lift = _said_no("last_by=lena", lifted=True, at=NOW - timedelta(hours=1))
    kept = lifted_history(history, [lift], _view())
    assert [m.task for m in kept.said] == ["t-todo", "t-docs"]  # lena's three are set aside
    assert fact_nos_in(kept) == ()
    assert _rule(kept, _word("lena", 2)).outcome == "queue"  # asked again


def test_the_report_prints_a_facts_no_as_a_command_to_make_ones_own_or_lift() -> None:
    label = "set_task_status status=blocked in tasks whose newest word of a person is lena's"
    mine = no_command("website", "memory", label)
    assert mine is not None and "--on last_by=lena" in mine and "--workstream" not in mine
    lift = no_command("website", "memory", label, lift=True)
    assert lift is not None and lift.split(" --memory")[0].endswith("--on last_by=lena --lift")
    everywhere = no_command("website", "m", "set_task_status status=blocked citing none in "
                            "every workstream")  # fmt: skip
    assert everywhere is not None and "--on cites=none" in everywhere
    assert "--cites" not in everywhere
    paused = no_command("website", "m", "create_task in workstreams whose status is paused")
    assert paused is not None and "--on workstream_status=paused" in paused
    # A "no" of moves soon after a person set the status names no fact a person says.
    assert no_command("website", "m", "set_task_status status=cancelled in tasks whose status "
                      "a person set at most 4 days before") is None  # fmt: skip


def test_a_facts_no_said_and_lifted_as_printed_is_journaled_and_reported(quiet_env: Path) -> None:
    memory = str(quiet_env / "memory")
    label = "set_task_status status=blocked in tasks whose newest word of a person is lena's"
    mine = no_command("website", memory, label)
    assert mine is not None
    code, out, err = cli_io(*shlex.split(mine)[1:], "--by", "ana")
    assert code == 0, err
    assert f"a standing no: {label}: journaled" in out
    code, report, _ = cli_io("policy", "report", "--domain", "website", "--memory", memory)
    assert code == 0 and f"a standing no said by ana: {label}, until" in report
    lift = no_command("website", memory, label, lift=True)
    assert lift is not None and f"`{lift}`" in report  # the lift, printed to run as quoted
    code, out, err = cli_io(*shlex.split(lift)[1:], "--by", "ana")
    assert code == 0 and f"lifted: {label}: journaled" in out, err
    code, report, _ = cli_io("policy", "report", "--domain", "website", "--memory", memory)
    assert "a standing no said by ana" not in report
    # A fact no "no" is found by is refused, with what to give.
    code, _, err = cli_io("policy", "no", "--domain", "website", "--memory", memory,
                          "--operation", "set_task_status", "--status", "blocked",
                          "--on", "owner_set_days=3", "--by", "ana", "--reason", "r")  # fmt: skip
    assert code == 2 and "FACT one of asked, cites, last_by, workstream_status" in err
