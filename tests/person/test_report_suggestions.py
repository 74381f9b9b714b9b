"""What `policy report` suggests runs exactly as printed, and is suggested once.

Each command the report prints (one a line, starting with `custodian`) is run through
`custodian_runtime.cli.main` with its words split as a shell would, on the embedded hub and on
a served reference hub; each must exit 0 and do what it says, and the report must then know it.
"""

from __future__ import annotations

import json
import shlex
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from custodian_hub import demo_dataset, load_seed
from custodian_runtime.core.approvals.items import ApprovalItem
from custodian_runtime.core.standing.agreement import agreement
from custodian_runtime.core.standing.commands import Asking
from custodian_runtime.core.standing.earned import first_uses
from custodian_runtime.core.standing.grants import Grant, covering
from custodian_runtime.core.standing.live import Live
from custodian_runtime.journal.person.queue import ApprovalStore
from support.runs import cli_io
from support.spine import held_hub

DOMAIN = "website"


def _item(n: int, op: str, params: dict[str, Any], status: str, hub_at: str) -> ApprovalItem:
    now = datetime.now(UTC)
    return ApprovalItem(
        id=f"apr-{n:08x}-0000", domain=DOMAIN, operation=op, params=params, run_id="run-1",
        fingerprint=f"f{n}", precondition={}, status=status, hub_at=hub_at,
        created_at=now - timedelta(days=1), expires_at=now + timedelta(days=13),
    )  # fmt: skip


def _decided(memory: Path, hub_at: str) -> None:
    """8+1 moves to `blocked` approved, 2 cancellations rejected: 9 of 11 for the operation."""
    store = ApprovalStore(memory)
    for n in range(9):
        params = {"task_id": f"web-t-{n}", "status": "blocked"}
        store.save(_item(n, "set_task_status", params, "executed", hub_at))
    for n in (20, 21):
        params = {"task_id": f"web-t-{n}", "status": "cancelled"}
        store.save(_item(n, "set_task_status", params, "rejected", hub_at))


def _report(memory: Path, *extra: str) -> str:
    code, out, _ = cli_io("policy", "report", "--domain", DOMAIN, "--memory", str(memory), *extra)
    assert code == 0
    return out


def _commands(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("custodian")]


def _run_each(text: str) -> None:
    for command in _commands(text):
        code, _, _ = cli_io(*shlex.split(command)[1:])
        assert code == 0, command


def _grants(memory: Path) -> list[dict[str, Any]]:
    code, out, _ = cli_io("grants", "list", "--domain", DOMAIN, "--memory", str(memory), "--json")
    assert code == 0
    return list(json.loads(out))


def _issue_as_printed(memory: Path) -> dict[str, Any]:
    """The report's one grant, run as printed; the grant it issued."""
    text = _report(memory, "--by", "ana")
    [command] = _commands(text)
    assert "--where status=blocked" in command and "--by ana" in command
    assert "  suggested (9 of 9 approved, lower bound 0.70, none rejected in this class):" in text
    _run_each(text)
    [grant] = _grants(memory)
    assert grant["where"] == {"status": "blocked"} and grant["state"] == "live"
    assert grant["by"] == "ana" and "9 of 9 approved" in grant["reason"]
    return grant


def test_a_suggested_grant_runs_as_printed_on_the_embedded_hub(quiet_env: Path) -> None:
    memory, db = quiet_env / "memory", quiet_env / ".custodian" / "hub.sqlite3"
    db.parent.mkdir()
    load_seed(db, demo_dataset(datetime.now(UTC)))  # as the demo's first run made it
    _decided(memory, f"embedded:{db}")
    grant = _issue_as_printed(memory)
    assert grant["hub_id"].startswith("hub_id:")
    again = _report(memory)
    assert _commands(again) == []  # what a live grant covers is not suggested again
    assert f"a live grant covers it: {grant['id']} (status=blocked)" in again


def test_a_suggested_grant_runs_as_printed_on_a_served_hub(quiet_env: Path) -> None:
    memory = quiet_env / "memory"
    with held_hub(quiet_env, None) as hub:
        _decided(memory, hub.url)
        grant = _issue_as_printed(memory)
        health = json.loads(_health(hub.url))
        assert grant["hub_id"] == f"hub_id:{health['hub_id']}"
        data = json.loads(_report(memory, "--json"))
    [row] = data["operations"]
    assert row["suggestions"] == [] and data["suggestions"] == []
    assert "a live grant covers it" in row["none_because"]


def _health(url: str) -> str:
    import httpx

    return httpx.get(f"{url}/health", timeout=5).text


def test_a_mode_suggested_is_set_as_printed_and_never_suggested_again(quiet_env: Path) -> None:
    memory = quiet_env / "memory"
    mem = ("--memory", str(memory))
    code, _, _ = cli_io("policy", "set", "--domain", DOMAIN, "--operation", "update_task_status",
                   "--mode", "ask", "--by", "ana", "--reason", "onboarding", *mem)  # fmt: skip
    assert code == 0
    store = ApprovalStore(memory)
    for n in range(9):
        params = {"task_id": f"web-t-{n}", "status": "done"}
        store.save(_item(n, "update_task_status", params, "executed", "embedded:x"))
    text = _report(memory)
    [command] = _commands(text)
    assert "--operation update_task_status --mode auto" in command
    _run_each(text)
    code, out, _ = cli_io("policy", "show", "--domain", DOMAIN, "--json", *mem)
    assert json.loads(out)["modes"]["update_task_status"] == "auto"
    again = _report(memory)
    assert _commands(again) == [] and "no suggestion: already auto" in again


def test_without_a_hub_the_issue_error_names_embedded_too(quiet_env: Path) -> None:
    code, _, err = cli_io(
        "grants", "issue", "--domain", DOMAIN, "--operation", "set_task_status",
        "--max", "3", "--expires", "1d", "--by", "ana", "--reason", "r",
        "--memory", str(quiet_env / "memory"),
    )  # fmt: skip
    assert code == 2
    assert "pass --hub embedded (the demo's) or --hub URL" in err


# The pure core: classes, the lower bound, what is live, and why there is none.

NOW = datetime(2026, 12, 1, 12, tzinfo=UTC)
HUB = "hub_id:h1"


def _at(n: int, op: str, params: dict[str, Any], status: str) -> ApprovalItem:
    return ApprovalItem(
        id=f"apr-{n:08x}-0000", domain=DOMAIN, operation=op, params=params, run_id="run-1",
        fingerprint=f"f{n}", precondition={}, status=status,
        created_at=NOW - timedelta(days=1), expires_at=NOW + timedelta(days=13),
    )  # fmt: skip


def _moves(count: int, status: str, verdict: str, start: int = 0) -> list[ApprovalItem]:
    return [
        _at(n, "set_task_status", {"task_id": f"web-t-{n}", "status": status}, verdict)
        for n in range(start, start + count)
    ]


def _one(items: list[ApprovalItem], mode: str | None = None, live: Live | None = None) -> Any:
    [row] = agreement(items, NOW, 30)
    return row.suggested(Asking(DOMAIN, "mem", "embedded", "ana"), mode, live)


def _grant(where: dict[str, str], op: str = "set_task_status", **bounds: Any) -> Grant:
    return Grant(
        id="grant-0123456789ab", domain=DOMAIN, operation=op, where=where,
        max_uses=bounds.get("max_uses", 10),
        expires_at=bounds.get("expires", NOW + timedelta(days=6)),
        by="ana", reason="r", hub_id=HUB, issued_at=NOW - timedelta(days=1),
    )  # fmt: skip


def test_the_class_a_grant_names_is_scored_not_the_operation() -> None:
    items = [*_moves(8, "blocked", "executed"), *_moves(2, "cancelled", "rejected", 50)]
    found = _one(items)
    [one] = found.suggestions
    assert one.where == {"status": "blocked"} and found.none_because is None
    assert one.why == "8 of 8 approved, lower bound 0.68, none rejected in this class"
    words = shlex.split(one.command)
    assert words[:3] == ["custodian", "grants", "issue"]
    assert words[words.index("--hub") + 1] == "embedded" and "--memory" in words
    grant = _grant({"status": "blocked"})
    assert all(covering(i.operation, i.params, [grant], {}, NOW, HUB).grant for i in items[:8])
    assert not any(covering(i.operation, i.params, [grant], {}, NOW, HUB).grant for i in items[8:])


def test_why_there_is_none_too_few_or_a_rejection_or_never_grantable() -> None:
    few = _one(_moves(3, "blocked", "executed"))
    assert few.suggestions == () and few.none_because.startswith(
        "too few decided: 3 of the 4 needed"
    )
    mixed = [*_moves(9, "blocked", "executed"), *_moves(1, "blocked", "rejected", 50)]
    assert _one(mixed).none_because.startswith(
        "would cover a rejected proposal: as a whole holds 9 approved and 1 rejected"
    )
    resolves = [
        _at(n, "resolve_decision", {"decision_id": f"d-{n}", "resolution": "yes"}, "executed")
        for n in range(12)
    ]
    assert _one(resolves).none_because == (
        "never grantable: resolving a decision is a person's judgement on that decision"
    )
    assert _one(_moves(2, "blocked", "rejected")).none_because == "none approved: 2 rejected"
    [row] = agreement(_moves(1, "blocked", "rejected"), NOW, 30)
    assert row.line().startswith("set_task_status: 1 proposal, 0 approved, 1 rejected")


def test_a_first_grant_comes_sooner_and_smaller_and_only_where_none_was_rejected() -> None:
    # 4 of 4: the bound (0.51) says more often approved than not; 7 uses keep the rejections
    # expected at that bound (7 * 0.49) within a full grant's at the threshold (10 * 0.35).
    [first] = _one(_moves(4, "blocked", "executed")).suggestions
    words = shlex.split(first.command)
    assert words[words.index("--max") + 1] == "7" and words[words.index("--expires") + 1] == "7d"
    assert first.why.startswith("4 of 4 approved, lower bound 0.51; a first grant of 7 uses")
    [five] = _one(_moves(5, "blocked", "executed")).suggestions
    assert shlex.split(five.command)[shlex.split(five.command).index("--max") + 1] == "8"
    assert [first_uses(n, n) for n in range(4, 10)] == [7, 8, 8, 9, 10, 10]
    # A class that holds a rejection earns nothing sooner: its bound must still reach 0.65.
    mixed = [*_moves(6, "blocked", "executed"), *_moves(1, "blocked", "rejected", 50)]
    assert _one(mixed).suggestions == ()


def test_a_live_grant_is_not_suggested_again_and_one_running_low_is_renewed() -> None:
    items = _moves(8, "blocked", "executed")
    live = Live([_grant({"status": "blocked"})], {"grant-0123456789ab": 3}, NOW)
    covered = _one(items, live=live)
    assert covered.suggestions == ()
    assert covered.none_because == "a live grant covers it: grant-0123456789ab (status=blocked)"
    low = _one(items, live=Live([_grant({"status": "blocked"})], {"grant-0123456789ab": 9}, NOW))
    [renew] = low.suggestions
    assert renew.kind == "renew" and renew.where == {"status": "blocked"}
    # No person reversed its writes: renewed for twice its life, with uses at the pace it used.
    assert renew.why == (
        "grant-0123456789ab runs low: 9 of 10 used, 1 left, expires in 6 days; none reversed, "
        "so renewed for 14 days with 18 uses at the pace it used them"
    )
    assert "--max 18 --expires 14d" in renew.command
    soon = Live([_grant({"status": "blocked"}, expires=NOW + timedelta(hours=30))], {}, NOW)
    assert [s.kind for s in _one(items, live=soon).suggestions] == ["renew"]
    undone = Live(soon.grants, {}, NOW, reversed={"grant-0123456789ab": 1})
    [told] = _one(items, live=undone).suggestions
    assert told.why.endswith("0 of 10 used, 10 left, expires in 1 day, 1 reversed by a person")
    # A person reversed one of its writes: renewed as it was, never longer or with more uses.
    assert "--max 10 --expires 54h " in told.command  # issued for 54 hours, as before
    assert "renewed for" not in told.why


def test_a_grant_used_up_with_none_reversed_is_renewed_as_it_earned_not_begun_again() -> None:
    items = _moves(4, "blocked", "executed")
    spent = _grant({"status": "blocked"}, max_uses=7)
    [renew] = _one(items, live=Live([spent], {spent.id: 7}, NOW)).suggestions
    assert renew.kind == "renew" and "--max 14 --expires 14d" in renew.command
    assert renew.why.startswith("grant-0123456789ab runs low: 7 of 7 used, 0 left")
    # one of its writes reversed: nothing renewed; a grant used up long ago: begun again small
    undone = Live([spent], {spent.id: 7}, NOW, reversed={spent.id: 1})
    assert all(s.kind != "renew" for s in _one(items, live=undone).suggestions)
    old = _grant({"status": "blocked"}, max_uses=7, expires=NOW - timedelta(days=8))
    [again] = _one(items, live=Live([old], {old.id: 7}, NOW)).suggestions
    assert again.kind == "grant" and "--max 7 --expires 7d" in again.command


def test_a_grant_a_reversal_suspended_is_neither_live_nor_suggested_again() -> None:
    items = _moves(8, "blocked", "executed")
    why = "a person set task web-t-1 back from blocked to in_progress"
    live = Live([_grant({"status": "blocked"})], {}, NOW, suspended={"grant-0123456789ab": why})
    assert live.of("set_task_status") == []
    found = _one(items, live=live)
    assert found.suggestions == ()
    assert found.none_because is not None
    assert found.none_because.startswith(
        f"grant-0123456789ab (status=blocked) was suspended: {why}"
    )
    other = Live([_grant({"status": "done"})], {}, NOW, suspended={"grant-0123456789ab": why})
    assert [s.where for s in _one(items, live=other).suggestions] == [{"status": "blocked"}]


def test_after_a_suspension_the_moves_that_cited_a_person_are_suggested_on_evidence() -> None:
    cited = [
        _at(n, "set_task_status",
            {"task_id": f"web-t-{n}", "status": "blocked", "evidence": [f"ev-{n}"]}, "executed")
        for n in range(8)
    ]  # fmt: skip
    why = "a person set task web-t-60 back from blocked to in_progress"
    live = Live([_grant({"status": "blocked"})], {}, NOW, suspended={"grant-0123456789ab": why})
    [one] = _one([*cited, *_moves(3, "blocked", "executed", 60)], live=live).suggestions
    assert one.kind == "grant" and one.where == {"status": "blocked"}
    assert one.command.split(" --reason=")[0].endswith("--evidence newer --hub embedded "
                                                      "--memory mem --by ana")  # fmt: skip
    assert one.why.startswith("8 of 8 approved moves citing a person's event, lower bound 0.68")
    # Too few cited, or a suspended grant that asked for evidence itself: none.
    assert _one([*cited[:5], *_moves(3, "blocked", "executed", 60)], live=live).suggestions == ()
    on_evidence = _grant({"status": "blocked"}).model_copy(update={"evidence": "newer"})
    again = Live([on_evidence], {}, NOW, suspended={"grant-0123456789ab": why})
    assert _one(cited, live=again).suggestions == ()
    # A live grant on evidence running low is renewed on evidence, as it was issued.
    low = Live([on_evidence], {"grant-0123456789ab": 9}, NOW)
    [renew] = _one(cited, live=low).suggestions
    assert renew.kind == "renew" and "--evidence newer" in renew.command


def test_when_citing_an_event_separates_approvals_from_rejections_it_is_suggested() -> None:
    cited = [
        _at(n, "set_task_status",
            {"task_id": f"web-t-{n}", "status": "blocked", "evidence": [f"ev-{n}"]}, "executed")
        for n in range(8)
    ]  # fmt: skip
    bare = _moves(4, "blocked", "rejected", 40)  # rejected: they cited nothing
    [one] = _one([*cited, *bare]).suggestions
    assert one.kind == "grant" and one.where == {"status": "blocked"}
    assert "--evidence newer" in one.command
    assert one.why.startswith("8 of 8 approved moves citing a person's event, lower bound 0.68")
    assert "the 4 rejected in status=blocked cited no event" in one.why
    # One rejected move that cited an event: evidence does not separate them; nothing is.
    older = _at(
        50,
        "set_task_status",
        {"task_id": "web-t-50", "status": "blocked", "evidence": ["ev-old"]},
        "rejected",
    )
    assert _one([*cited, *bare, older]).suggestions == ()  # fmt: skip
    # Too few approved moves cited one: none.
    assert _one([*cited[:5], *bare]).suggestions == ()
    # The grant it prints covers no move that cites nothing (core/standing/grants.py).
    grant = _grant({"status": "blocked"}).model_copy(update={"evidence": "newer"})
    plain = {"task_id": "web-t-1", "status": "blocked"}
    assert covering("set_task_status", plain, [grant], {}, NOW, HUB, False).grant is None


def test_a_mode_an_operation_has_is_never_suggested() -> None:
    done = [
        _at(n, "update_task_status", {"task_id": f"web-t-{n}", "status": "done"}, "executed")
        for n in range(12)
    ]
    assert _one(done, "auto").suggestions == ()
    assert _one(done, None).none_because == "already auto: it runs on its own"
    [asked] = _one(done, "ask").suggestions
    assert "--mode auto" in asked.command and asked.kind == "mode"


def test_a_create_that_omits_status_is_held_as_todo() -> None:
    creates = [
        _at(n, "create_task", {"workstream_id": "web-ws-1", "title": f"T {n}"}, "executed")
        for n in range(8)
    ]
    cancel = _at(99, "create_task", {"workstream_id": "web-ws-1", "title": "X",
                                     "status": "cancelled"}, "rejected")  # fmt: skip
    found = _one([*creates, cancel])
    assert [s.where for s in found.suggestions] == [{"status": "todo", "workstream_id": "web-ws-1"}]
    grant = _grant({"status": "todo"}, op="create_task")
    omitted = {"workstream_id": "web-ws-1", "title": "New"}
    assert covering("create_task", omitted, [grant], {}, NOW, HUB).grant is not None
    assert covering("create_task", cancel.params, [grant], {}, NOW, HUB).grant is None


def test_the_standing_panel_shows_what_the_report_suggests(quiet_env: Path) -> None:
    from custodian_runtime.review.standing_data import standing_view
    from custodian_runtime.settings import load_settings

    memory = quiet_env / "memory"
    _decided(memory, "http://127.0.0.1:9/")
    data = json.loads(_report(memory, "--json"))
    settings = load_settings({"memory": str(memory)}, {}, quiet_env, domain_required=False,
                             hub_required=False)  # fmt: skip
    said = standing_view(settings, DOMAIN, datetime.now(UTC)).suggested_of("set_task_status")
    [row] = data["operations"]
    assert [s.as_json() for s in said.suggestions] == row["suggestions"] != []
    assert "--hub http://127.0.0.1:9/" in row["suggest"]
