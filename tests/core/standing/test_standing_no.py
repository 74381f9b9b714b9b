"""A standing "no": a class a person rejected repeatedly and never approved is held, not queued,
with their reasons cited; a person's newer word on the target asks again once."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from custodian_hub import ReferenceHub
from custodian_runtime.core.approvals.history import ApprovalHistory, DecidedMark
from custodian_runtime.core.authority.authorize import Ruling, authorize
from custodian_runtime.core.authority.evidence import Evidence
from custodian_runtime.core.authority.refusals import STANDING_NO, standing_no
from custodian_runtime.core.contract import DomainSummary
from custodian_runtime.core.limits import Limits
from custodian_runtime.core.view import View
from support.authority import NOW, person_event, plan_of, proposal, task, website, workstream
from support.runs import CliResult, run_cli, run_plan

CANCEL = {"status": "cancelled"}


def _no(task_id: str, days_ago: float, *, approved: bool = False, ws: str = "") -> DecidedMark:
    at = (NOW - timedelta(days=days_ago)).isoformat()
    why = "" if approved else f"rejected by ana: we ship work, not cancel it ({task_id})"
    return DecidedMark(
        "set_task_status", "cancelled", task_id, ws, approved=approved, why=why, at=at
    )


def _owned() -> DomainSummary:
    """The website, with a third workstream; ana owns ws-web and ws-docs, ben ws-ops."""
    seen = website()
    ops = workstream("ws-ops", "website", [task("t-ops", "ws-ops", "todo")])
    owners = {"ws-web": "ana", "ws-docs": "ana", "ws-ops": "ben"}
    kept = tuple(w.model_copy(update={"owner": owners[w.id]}) for w in (*seen.workstreams, ops))
    return seen.model_copy(update={"workstreams": kept})


def _rule(history: ApprovalHistory, task_id: str = "t-block", **extra: Any) -> Ruling:
    plan = plan_of(proposals=[proposal("set_task_status", task_id=task_id, **CANCEL)])
    seen = extra.get("seen") or _owned()
    (ruling,) = authorize(plan, seen, Limits(), history, evidence=Evidence.of(seen))
    return ruling


def test_three_rejections_and_no_approval_make_a_standing_no() -> None:
    said = (_no("t-todo", 3), _no("t-block", 2), _no("t-done", 1))
    item = plan_of(proposals=[proposal("set_task_status", task_id="t-prog", **CANCEL)]).items[0]
    view = View.of(_owned())
    found = standing_no(item, view, ApprovalHistory(said=said))
    assert found is not None and found.scope == "workstream ws-web" and STANDING_NO == 3
    assert found.label() == "set_task_status status=cancelled in workstream ws-web"
    # Two are not a standing no; nor is a class the person also approved once.
    assert standing_no(item, view, ApprovalHistory(said=said[:2])) is None
    yes = (*said, _no("t-todo", 0.5, approved=True))
    assert standing_no(item, view, ApprovalHistory(said=yes)) is None
    # Another status is another class.
    blocked = tuple(
        DecidedMark(s.operation, "blocked", s.task, "", False, s.why, s.at) for s in said
    )
    assert standing_no(item, view, ApprovalHistory(said=blocked)) is None


def test_an_owners_no_across_their_workstreams_holds_there_only() -> None:
    said = (_no("t-todo", 3), _no("t-docs", 2), _no("t-block", 1))  # ana's ws-web and ws-docs
    view, history = View.of(_owned()), ApprovalHistory(said=said)
    item = plan_of(proposals=[proposal("set_task_status", task_id="t-docs", **CANCEL)]).items[0]
    found = standing_no(item, view, history)
    assert found is not None and found.scope == "the workstreams of ana"
    theirs = plan_of(proposals=[proposal("set_task_status", task_id="t-ops", **CANCEL)]).items[0]
    assert standing_no(theirs, view, history) is None  # ben's workstream: ana's no is not his


def test_the_held_item_is_denied_with_the_persons_reasons_and_never_runs() -> None:
    said = (_no("t-todo", 3), _no("t-prog", 2), _no("t-done", 1))
    ruling = _rule(ApprovalHistory(said=said))
    assert ruling.outcome == "deny" and ruling.clause is not None
    assert ruling.clause.startswith("held: a standing no, 3 proposals of set_task_status ")
    assert "rejected by ana: we ship work, not cancel it (t-done)" in ruling.clause
    assert ruling.reason == f"Plan item #0 (set_task_status) is {ruling.clause}"


def test_a_persons_newer_word_on_the_target_asks_again_once() -> None:
    said = (_no("t-todo", 3), _no("t-prog", 2), _no("t-done", 1))
    seen = _owned()
    word = person_event("ev-new", "ws-web", "t-block")  # an hour before NOW: after the last no
    seen = seen.model_copy(update={"recent_events": (*seen.recent_events, word)})
    asked = _rule(ApprovalHistory(said=said), seen=seen)
    assert asked.outcome == "queue", asked.reason
    assert "a standing no on set_task_status status=cancelled" in asked.reason
    assert "event ev-new from 'ana'" in asked.reason and "asked once more" in asked.reason
    # Rejected again after that word: the newer rejection holds.
    again = (*said, _no("t-block", 1 / 48))
    assert _rule(ApprovalHistory(said=again), seen=seen).outcome == "deny"


def test_the_history_keeps_what_was_said_for_replay() -> None:
    said = (_no("t-todo", 3), _no("t-block", 2, approved=True))
    history = ApprovalHistory(said=said)
    assert ApprovalHistory.from_record(history.as_record()) == history
    plan = plan_of(proposals=[proposal("create_task", workstream_id="ws-web", title="New")])
    assert history.for_items(plan.items).said == ()


# --- end to end: the queue's index, a run, a person's rejections -----------------------------


def _run_cancelling(
    tmp_path: Path, mp: pytest.MonkeyPatch, hub: ReferenceHub, tasks: list[str]
) -> CliResult:
    plan = {
        "proposals": [
            {
                "operation": "set_task_status",
                "rationale": "idle",
                "params": {"task_id": t, "status": "cancelled"},
            }
            for t in tasks
        ]
    }
    return run_plan(tmp_path, mp, hub.url, plan, "--force", "--json")


def test_a_run_holds_a_class_its_person_keeps_rejecting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    first = _run_cancelling(tmp_path, monkeypatch, small_hub, ["web-t-1", "web-t-2", "web-t-3"])
    assert first.code == 0, first.stderr
    for queued in first.json()["queued"]:
        no = run_cli(["approvals", "--memory", str(tmp_path / "memory"), "reject",
                      queued["approval_id"], "--by", "ana", "--reason", "we ship, not cancel"],
                     tmp_path, monkeypatch)  # fmt: skip
        assert no.code == 0, no.stderr
    fourth = _run_cancelling(tmp_path, monkeypatch, small_hub, ["web-t-4"]).json()
    assert fourth["queued"] == [], fourth["queued"]
    (held,) = fourth["denied"]
    assert held["clause"].startswith("held: a standing no, 3 proposals of set_task_status")
    assert "rejected by ana: we ship, not cancel" in held["clause"]
    note = Path(fourth["note"]).read_text(encoding="utf-8")
    assert "held: a standing no, 3 proposals of set_task_status status=cancelled" in note
    memory = ["--memory", str(tmp_path / "memory")]
    report = run_cli(["policy", "report", "--domain", "website", *memory], tmp_path, monkeypatch)
    assert report.code == 0, report.stderr
    assert (
        "a standing no: set_task_status status=cancelled in workstream web-ws-1, 1 held in the "
        "last 30 days, not asked; the last: held: a standing no, 3 proposals"
    ) in report.stdout, report.stdout
    # Another workstream of the domain, with another owner (ben): asked as before.
    other = _run_cancelling(tmp_path, monkeypatch, small_hub, ["web-t-5"]).json()
    assert [q["operation"] for q in other["queued"]] == ["set_task_status"]


def test_a_no_said_of_what_the_proposals_cited_holds_only_what_cites_the_same() -> None:
    """Moves rejected when they cited nothing, approved when they cited a newer word: the
    class as a whole holds an approval, the moves citing nothing do not."""
    at = [(NOW - timedelta(days=d)).isoformat() for d in (4, 3, 2, 1)]
    why = "rejected by ana: cites no word of the team"
    said = (
        *(DecidedMark("set_task_status", "blocked", "t-todo", "", False, why, a, "none")
          for a in at[:3]),
        DecidedMark("set_task_status", "blocked", "t-todo", "", True, "", at[3], "newer"),
    )  # fmt: skip
    item = plan_of(proposals=[proposal("set_task_status", task_id="t-prog",
                                       status="blocked")]).items[0]  # fmt: skip
    view, history = View.of(_owned()), ApprovalHistory(said=said)
    assert standing_no(item, view, history) is None  # the class holds an approval
    found = standing_no(item, view, history, cites="none")
    assert found is not None and found.cites == "none"
    assert found.label() == "set_task_status status=blocked citing none in workstream ws-web"
    assert standing_no(item, view, history, cites="newer") is None
    # Kept in the record only when known: a mark from before reads as it did.
    assert DecidedMark.from_record(said[0].as_record()) == said[0]
    assert len(DecidedMark("op").as_record()) == 7


def test_the_prompt_shows_each_standing_no_first_among_the_rejected() -> None:
    from custodian_runtime.core.context._items import approval_piece
    from custodian_runtime.run.orient import held_briefs

    said = (_no("t-todo", 3), _no("t-block", 2), _no("t-done", 1))
    [held] = held_briefs(_owned(), ApprovalHistory(said=said))
    assert (held.operation, held.target, held.status) == (
        "set_task_status", "workstream ws-web", "held",
    )  # fmt: skip
    assert held.summary == "status=cancelled held: 3 rejected, none approved; not asked again"
    line = approval_piece(held).full
    assert "we ship work, not cancel it (t-done)" in line and "t-block" in line
    assert held_briefs(_owned(), ApprovalHistory(said=said[:2])) == ()


def _printed(text: str) -> list[str]:
    """The report's `policy no` commands to make a standing no one's own, as a person runs
    them (quoted in a sentence), `--by NAME` filled."""
    found = [line.split("`")[1] for line in text.splitlines() if "make it yours" in line]
    return [line.replace("--by NAME", "--by ana") for line in found]


def test_a_standing_no_made_ones_own_as_printed_then_lifted_asks_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    import shlex

    first = _run_cancelling(tmp_path, monkeypatch, small_hub, ["web-t-1", "web-t-2", "web-t-3"])
    for queued in first.json()["queued"]:
        run_cli(["approvals", "--memory", str(tmp_path / "memory"), "reject",
                 queued["approval_id"], "--by", "ana", "--reason", "we ship, not cancel"],
                tmp_path, monkeypatch)  # fmt: skip
    assert _run_cancelling(tmp_path, monkeypatch, small_hub, ["web-t-4"]).json()["queued"] == []
    memory = ["--memory", str(tmp_path / "memory")]
    report = run_cli(["policy", "report", "--domain", "website", *memory], tmp_path, monkeypatch)
    [mine] = _printed(report.stdout)
    assert "--operation set_task_status --status cancelled --workstream web-ws-1" in mine
    assert "or ask again: `custodian policy no " in report.stdout and "--lift" in report.stdout
    said = run_cli(shlex.split(mine)[1:], tmp_path, monkeypatch)
    assert said.code == 0, said.stderr
    held = _run_cancelling(tmp_path, monkeypatch, small_hub, ["web-t-4"]).json()
    assert held["queued"] == [] and held["denied"][0]["clause"].startswith("held: a standing no")
    report = run_cli(["policy", "report", "--domain", "website", *memory], tmp_path, monkeypatch)
    assert _printed(report.stdout) == []  # said: not suggested again
    lift = report.stdout.split("lift it: `", 1)[1].split("`", 1)[0].replace("NAME", "ana")
    lifted = run_cli(shlex.split(lift)[1:], tmp_path, monkeypatch)
    assert lifted.code == 0, lifted.stderr
    asked = _run_cancelling(tmp_path, monkeypatch, small_hub, ["web-t-4"]).json()
    assert [q["operation"] for q in asked["queued"]] == ["set_task_status"], asked
    # The prompt of the run after the lift no longer shows the class as held.
    assert "held: 3 rejected" in _prompt_user(tmp_path, 1) and "held: 3" not in _prompt_user(
        tmp_path, 0
    )


def _prompt_user(tmp_path: Path, back: int) -> str:
    """The user prompt of the newest run but `back` (memory/prompts, newest first)."""
    import gzip
    import json

    kept = sorted((tmp_path / "memory" / "prompts" / "website").glob("*.json.gz"),
                  key=lambda p: p.stat().st_mtime_ns, reverse=True)  # fmt: skip
    return str(json.loads(gzip.decompress(kept[back].read_bytes()))["user"])


def test_a_standing_no_names_one_scope_and_a_life_of_at_most_30_days(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = ["policy", "no", "--domain", "website", "--memory", str(tmp_path / "memory"),
            "--operation", "set_task_status", "--status", "cancelled", "--by", "ana",
            "--reason", "no"]  # fmt: skip
    both = run_cli([*base, "--workstream", "w", "--owner", "ana"], tmp_path, monkeypatch)
    assert both.code == 2 and "--owner NAME or --on FACT=VALUE (one of them)" in both.stderr
    long = run_cli([*base, "--owner", "ana", "--expires", "40d"], tmp_path, monkeypatch)
    assert long.code == 2 and "at most 30 days" in long.stderr


def test_a_standing_no_said_holds_what_would_be_asked_with_the_persons_words() -> None:
    from custodian_runtime.core.ruling.path import Grounds, rule_plan
    from custodian_runtime.core.standing.record import Standing
    from custodian_runtime.core.standing.said_no import SaidNo

    said = SaidNo("set_task_status", "cancelled", "", "", "ana", "ana", "we ship, not cancel",
                  NOW - timedelta(hours=1), NOW + timedelta(days=30))  # fmt: skip
    seen = _owned()
    plan = plan_of(proposals=[proposal("set_task_status", task_id=t, **CANCEL)
                              for t in ("t-docs", "t-ops")])  # fmt: skip
    grounds = Grounds(standing=Standing(said_nos=(said,)), now=NOW)
    docs, ops = rule_plan(plan, seen, grounds)
    assert docs.outcome == "deny" and docs.clause is not None
    assert docs.clause.startswith(
        "held: a standing no said by ana on set_task_status status=cancelled in the "
        "workstreams of ana (we ship"
    )
    assert ops.outcome == "queue"  # ben's workstream: not ana's no
    lifted = replace(said, at=NOW, lifted=True)
    again = rule_plan(plan, seen, Grounds(standing=Standing(said_nos=(lifted,)), now=NOW))
    assert [r.outcome for r in again] == ["queue", "queue"]


def _moved(task_id: str, days_ago: float, set_days: str, approved: bool = False) -> DecidedMark:
    at = (NOW - timedelta(days=days_ago)).isoformat()
    why = "" if approved else f"rejected by ana: ana set it herself; that stands ({task_id})"
    return DecidedMark("set_task_status", "cancelled", task_id, "", approved, why, at, "none",
                       set_days)  # fmt: skip


def _set_by(source: str, days_ago: float, kind: str = "status_change", n: int = 1) -> Any:
    return person_event(f"ev-{n}", "ws-web", "t-block").model_copy(
        update={
            "source": source,
            "event_type": kind,
            "created_at": NOW - timedelta(days=days_ago),
        }
    )


def test_moves_soon_after_a_person_set_the_status_rejected_every_time_are_held() -> None:
    """Rejected 3 times within 2 to 4 days of a person's word on the task's status, approved
    9 days after one: a move 3 days after the owner's status change is held, one 6 days after
    is asked; only the owner's newer word, not a status change, asks again."""
    said = (_moved("t-todo", 5, "2"), _moved("t-prog", 4, "4"), _moved("t-done", 3, "3"),
            _moved("t-done", 2, "9", approved=True))  # fmt: skip
    history = ApprovalHistory(said=said)

    def ruled(*events: Any) -> Ruling:
        seen = _owned()
        return _rule(history, seen=seen.model_copy(update={"recent_events": events}))

    held = ruled(_set_by("ana", 3))
    assert held.outcome == "deny", held.reason
    assert (
        "3 proposals of set_task_status status=cancelled in tasks whose status a person set at "
        "most 4 days before rejected and none approved"
    ) in held.reason
    assert "when ana, whose word holds it, writes on its target again" in held.reason
    assert ruled(_set_by("ana", 6)).outcome == "queue"
    assert ruled().outcome == "queue"  # no word of a person observed: not in the class
    # A team member's note does not outweigh the owner's word; the owner's own note does.
    assert ruled(_set_by("ana", 3), _set_by("lee", 1 / 24, "note", 2)).outcome == "deny"
    asked = ruled(_set_by("ana", 3), _set_by("ana", 1 / 24, "note", 2))
    assert asked.outcome == "queue" and "asked once more" in asked.reason
    # Kept in the record only when known: a mark from before reads as it did.
    assert DecidedMark.from_record(said[0].as_record()) == said[0]


def test_a_prune_drops_no_said_no_or_lift_that_still_binds() -> None:
    """`journal prune` keeps at least RETAIN (31 days) and keeps only a person's modes past it:
    a standing no said in words lasts at most MAX_LIFE (30 days), and a lift sets aside only
    decisions a standing no still reads (RECENTLY_REJECTED), so any `refusal_said` a prune may
    drop has expired, and any lift it may drop sets aside nothing still read."""
    from custodian_runtime.core.approvals.items import RECENTLY_REJECTED
    from custodian_runtime.core.authority.own_writes import RETAIN
    from custodian_runtime.core.fold.prune import keep_problem
    from custodian_runtime.core.standing.said_no import MAX_LIFE

    assert keep_problem(RETAIN - timedelta(hours=1)) is not None and keep_problem(RETAIN) is None
    assert MAX_LIFE < RETAIN and RECENTLY_REJECTED < RETAIN
