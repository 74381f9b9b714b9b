"""Each rule of grants (issue #22), one test each, through the CLI against a real reference hub.

A grant is a person's approval given in advance: bounded in uses and time, bound to one domain
and one hub, and it never skips a rule the authority applies to every write.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx

from custodian_hub import ReferenceHub, load_seed
from custodian_runtime.clock import simulated_clock
from custodian_runtime.journal.lock import RunLock
from custodian_runtime.journal.person.queue import ApprovalStore
from support.runs import hub_get, small_dataset
from support.spine import journal
from support.standing import GRANT_LINE, Cli, note_of, status


def _hub_id(hub: ReferenceHub) -> str:
    return f"hub_id:{hub_get(hub, '/health')['hub_id']}"


def _pending(cli: Cli) -> list[Any]:
    return ApprovalStore(cli.memory).all("website", verify=False)


# --- issuing ----------------------------------------------------------------------------------


def test_issue_prints_the_id_alone_and_json_an_object_with_the_id(
    cli: Cli, small_hub: ReferenceHub
) -> None:
    done = cli.ok(
        "grants", "issue", "--domain", "website", "--operation", "set_task_status", "--max", "2",
        "--expires", "7d", "--hub", small_hub.url, "--by", "ana", "--reason", "routine",
    )  # fmt: skip
    assert GRANT_LINE.fullmatch(done.stdout), done.stdout
    as_json = cli.ok(
        "grants", "issue", "--domain", "website", "--operation", "create_task", "--max", "1",
        "--expires", "1d", "--hub", small_hub.url, "--by", "ana", "--reason", "routine", "--json",
    ).json()  # fmt: skip
    assert GRANT_LINE.fullmatch(as_json["id"] + "\n")
    assert as_json["operation"] == "create_task" and as_json["max_uses"] == 1
    assert sorted(g["id"] for g in cli.grants()) == sorted([done.stdout.strip(), as_json["id"]])


def test_the_hub_defaults_as_for_approve_and_the_grant_is_bound_to_its_hub_id(
    cli: Cli, small_hub: ReferenceHub, tmp_path: Path
) -> None:
    grant = cli.issue(None, "--max", "5", "--expires", "7d", STATE_HUB_URL=small_hub.url)
    [listed] = cli.grants()
    assert listed["id"] == grant and listed["hub_id"] == _hub_id(small_hub)
    no_hub = cli("grants", "issue", "--domain", "website", "--operation", "set_task_status",
                 "--max", "5", "--expires", "7d", "--by", "ana", "--reason", "x")  # fmt: skip
    assert no_hub.code == 2 and "--hub" in no_hub.stderr
    # Another hub (another database, so another hub_id) does not use it.
    other = tmp_path / "other.sqlite3"
    load_seed(other, small_dataset())
    with ReferenceHub(other) as elsewhere:
        assert _hub_id(elsewhere) != _hub_id(small_hub)
        [item] = cli.run(elsewhere.url, status("web-t-4"))["items"]
        assert item["outcome"] == "queued" and item.get("grant") is None, item
        assert hub_get(elsewhere, "/tasks/web-t-4")["status"] == "in_progress"
    [item] = cli.run(small_hub.url, status("web-t-1"))["items"]
    assert item["outcome"] == "executed" and item["grant"] == grant, item


def test_expires_takes_days_or_hours_up_to_30_days(cli: Cli, small_hub: ReferenceHub) -> None:
    before = datetime.now(UTC)
    cli.issue(small_hub.url, "--max", "1", "--expires", "7d")
    cli.issue(small_hub.url, "--max", "1", "--expires", "36h")
    cli.issue(small_hub.url, "--max", "1", "--expires", "30d")
    cli.refused("--max", "1", "--expires", "721h", hub_url=small_hub.url)
    spans = sorted(datetime.fromisoformat(g["expires_at"]) - before for g in cli.grants())
    assert [round(s / timedelta(hours=1)) for s in spans] == [36, 7 * 24, 30 * 24]


def test_expires_past_30_days_or_unreadable_exits_2_saying_what_to_write(
    cli: Cli, small_hub: ReferenceHub
) -> None:
    too_long = cli.refused("--max", "1", "--expires", "31d", hub_url=small_hub.url)
    assert "at most 30 days" in too_long.stderr and "7d" in too_long.stderr
    for garbage in ("soon", "7", "1.5d", "0d", "7days"):
        done = cli.refused("--max", "1", "--expires", garbage, hub_url=small_hub.url)
        assert "--expires" in done.stderr, (garbage, done.stderr)
        assert "7d" in done.stderr or "36h" in done.stderr, (garbage, done.stderr)


def test_max_0_is_refused(cli: Cli, small_hub: ReferenceHub) -> None:
    for bad in ("0", "-3", "1001"):
        done = cli.refused("--max", bad, "--expires", "7d", hub_url=small_hub.url)
        assert f"--max {bad}" in done.stderr and "from 1 to 1000" in done.stderr


def test_write_canon_and_resolve_decision_are_refused_with_the_reason(
    cli: Cli, small_hub: ReferenceHub
) -> None:
    canon = cli.refused("--max", "1", "--expires", "7d", op="write_canon", hub_url=small_hub.url)
    assert "write_canon is never grantable: the canon is the project's own word" in canon.stderr
    decision = cli.refused(
        "--max", "1", "--expires", "7d", op="resolve_decision", hub_url=small_hub.url
    )
    assert "resolve_decision is never grantable: resolving a decision is a person's judgement" in (
        decision.stderr
    )


def test_a_sanctioned_write_is_refused(cli: Cli, small_hub: ReferenceHub) -> None:
    for op in ("add_progress_event", "update_task_status", "flag_for_human"):
        done = cli.refused("--max", "1", "--expires", "7d", op=op, hub_url=small_hub.url)
        assert f"{op} cannot be granted" in done.stderr and "run on their own" in done.stderr
    unknown = cli.refused("--max", "1", "--expires", "7d", op="drop_tables", hub_url=small_hub.url)
    assert "cannot be granted" in unknown.stderr and "set_task_status" in unknown.stderr


def test_a_grant_without_who_or_why_or_with_an_unknown_where_key_exits_2(
    cli: Cli, small_hub: ReferenceHub
) -> None:
    for by, reason in (("", "x"), ("  ", "x"), ("ana", ""), ("a" * 201, "x")):
        done = cli(
            "grants", "issue", "--domain", "website", "--operation", "set_task_status",
            "--max", "1", "--expires", "7d", "--hub", small_hub.url, "--by", by, "--reason", reason,
        )  # fmt: skip
        assert done.code == 2 and ("name the person" in done.stderr or "--reason: say why"
                                   in done.stderr), done.stderr  # fmt: skip
    typo = cli.refused("--max", "1", "--expires", "7d", "--where", "stauts=blocked",
                       hub_url=small_hub.url)  # fmt: skip
    assert "set_task_status has no param 'stauts'; narrow by one of " in typo.stderr
    assert "status, task_id" in typo.stderr
    grant = cli.issue(small_hub.url, "--max", "1", "--expires", "7d")
    blank = cli("grants", "revoke", grant, "--by", "bo", "--reason", " ")
    assert blank.code == 2 and "--reason: say why" in blank.stderr
    assert cli.grants()[0]["state"] == "live"


# --- using ------------------------------------------------------------------------------------


def test_where_narrows_by_equality_on_the_items_params(cli: Cli, small_hub: ReferenceHub) -> None:
    grant = cli.issue(small_hub.url, "--max", "5", "--expires", "7d", "--where", "status=blocked",
                      "--where", "task_id=web-t-4")  # fmt: skip
    covered, other_status, other_task = cli.run(
        small_hub.url, status("web-t-4"), status("web-t-1", "cancelled"), status("web-t-5")
    )["items"]
    assert covered["outcome"] == "executed" and covered["grant"] == grant, covered
    for item in (other_status, other_task):
        assert item["outcome"] == "queued" and item.get("grant") is None, item
    assert hub_get(small_hub, "/tasks/web-t-4")["status"] == "blocked"
    assert hub_get(small_hub, "/tasks/web-t-5")["status"] == "todo"
    assert len(_pending(cli)) == 2
    bad = cli.refused("--max", "1", "--expires", "7d", "--where", "status", hub_url=small_hub.url)
    assert "KEY=VALUE" in bad.stderr


def test_the_oldest_live_grant_that_covers_an_item_is_used(
    cli: Cli, small_hub: ReferenceHub
) -> None:
    oldest = cli.issue(small_hub.url, "--max", "1", "--expires", "7d", "--where", "status=blocked")
    broad = cli.issue(small_hub.url, "--max", "5", "--expires", "7d")
    first, second = cli.run(small_hub.url, status("web-t-4"), status("web-t-5"))["items"]
    assert (first["grant"], second["grant"]) == (oldest, broad)
    uses = {g["id"]: g["uses"] for g in cli.grants()}
    assert uses == {oldest: 1, broad: 1}


def test_a_grant_issued_while_a_run_holds_the_domain_is_used_from_the_next_run(
    cli: Cli, small_hub: ReferenceHub
) -> None:
    with RunLock(cli.memory, "website", run_id="r-busy"):
        kept = cli.ok(
            "grants", "issue", "--domain", "website", "--operation", "set_task_status",
            "--max", "1", "--expires", "7d", "--hub", small_hub.url, "--by", "ana", "--reason", "x",
        )  # fmt: skip
        assert GRANT_LINE.fullmatch(kept.stdout) and "r-busy" in kept.stderr
        assert cli.grants() == []
    [item] = cli.run(small_hub.url, status("web-t-4"))["items"]
    assert item["outcome"] == "executed" and item["grant"] == kept.stdout.strip(), item


def test_a_revoke_kept_while_the_domain_is_busy_shows_in_the_list_at_once(
    cli: Cli, small_hub: ReferenceHub
) -> None:
    grant = cli.issue(small_hub.url, "--max", "5", "--expires", "7d")
    with RunLock(cli.memory, "website", run_id="r-busy"):
        cli.ok("grants", "revoke", grant, "--by", "bo", "--reason", "stop")
        assert [g["state"] for g in cli.grants()] == ["revoked"]
    assert "grant_revoked" not in [r.kind for r in journal(cli.memory)]


def test_a_grant_kept_while_the_domain_is_busy_can_be_revoked_at_once(
    cli: Cli, small_hub: ReferenceHub
) -> None:
    with RunLock(cli.memory, "website", run_id="r-busy"):
        grant = cli.issue(small_hub.url, "--max", "5", "--expires", "7d")
        revoked = cli.ok("grants", "revoke", grant, "--by", "bo", "--reason", "a mistake")
        assert f"{grant} revoked: kept; the domain website is busy" in revoked.stdout
    [item] = cli.run(small_hub.url, status("web-t-4"))["items"]
    assert item["outcome"] == "queued" and item.get("grant") is None, item
    assert [g["state"] for g in cli.grants()] == ["revoked"]


def test_a_covered_proposal_runs_without_a_card_and_says_so_everywhere(
    cli: Cli, small_hub: ReferenceHub
) -> None:
    grant = cli.issue(small_hub.url, "--max", "3", "--expires", "7d")
    summary = cli.run(small_hub.url, status("web-t-4"))
    [item] = summary["items"]
    assert item["outcome"] == "executed" and item["grant"] == grant
    assert f"executes under grant {grant}, issued by" in item["reason"]
    assert _pending(cli) == []
    assert hub_get(small_hub, "/tasks/web-t-4")["status"] == "blocked"
    assert f"**Why:** executed (grant {grant})" in note_of(summary)
    inspected = cli.ok("inspect", summary["run_id"])
    assert f"executes under grant {grant}" in inspected.stdout, inspected.stdout


def test_past_max_a_proposal_is_queued_as_today(cli: Cli, small_hub: ReferenceHub) -> None:
    grant = cli.issue(small_hub.url, "--max", "1", "--expires", "7d")
    first, second = cli.run(small_hub.url, status("web-t-4"), status("web-t-1"))["items"]
    assert first["outcome"] == "executed" and first["grant"] == grant
    assert second["outcome"] == "queued" and second.get("grant") is None, second
    [third] = cli.run(small_hub.url, status("web-t-5"))["items"]
    assert third["outcome"] == "queued", third
    assert [p.params["task_id"] for p in sorted(_pending(cli), key=lambda p: p.created_at)] == [
        "web-t-1", "web-t-5",
    ]  # fmt: skip
    assert hub_get(small_hub, "/tasks/web-t-5")["status"] == "todo"


def test_past_expiry_a_proposal_is_queued(cli: Cli, small_hub: ReferenceHub) -> None:
    # Issued two days ago (by the hub's clock and the host's alike), for one day: expired now.
    then = datetime.now(UTC) - timedelta(days=2)
    with simulated_clock(lambda: then):
        grant = cli.issue(small_hub.url, "--max", "5", "--expires", "1d")
    [item] = cli.run(small_hub.url, status("web-t-4"))["items"]
    assert item["outcome"] == "queued" and item.get("grant") is None, item
    assert hub_get(small_hub, "/tasks/web-t-4")["status"] == "in_progress"
    [listed] = cli.grants()
    assert (listed["id"], listed["state"], listed["uses"]) == (grant, "expired", 0)


def test_a_revoke_binds_at_once(cli: Cli, small_hub: ReferenceHub) -> None:
    grant = cli.issue(small_hub.url, "--max", "5", "--expires", "7d")
    revoked = cli.ok("grants", "revoke", grant, "--by", "bo", "--reason", "too broad")
    assert f"{grant} revoked: journaled" in revoked.stdout
    [item] = cli.run(small_hub.url, status("web-t-4"))["items"]
    assert item["outcome"] == "queued" and item.get("grant") is None, item
    unknown = cli("grants", "revoke", "grant-000000000000", "--by", "bo", "--reason", "x")
    assert unknown.code == 2 and "grants list" in unknown.stderr


def test_a_revoke_made_while_a_run_holds_the_domain_binds_that_run(
    cli: Cli, small_hub: ReferenceHub
) -> None:
    grant = cli.issue(small_hub.url, "--max", "5", "--expires", "7d")
    revoke = ["grants", "revoke", grant, "--by", "bo", "--reason", "stop", "--memory",
              str(cli.memory)]  # fmt: skip
    plan = {"observations": ["web-t-4 waits."], "proposals": [status("web-t-4")]}
    summary = cli.run(small_hub.url, llm=cli.thinking(small_hub.url, plan, argv=revoke))
    [item] = summary["items"]
    assert item["outcome"] == "queued" and item.get("grant") is None, item
    assert hub_get(small_hub, "/tasks/web-t-4")["status"] == "in_progress"
    # Journaled by the next command that has the domain's lock.
    [listed] = cli.grants()
    assert listed["state"] == "revoked"
    cli.run(small_hub.url, status("web-t-1", "todo"))
    assert [r.kind for r in journal(cli.memory)].count("grant_revoked") == 1


# --- a grant never skips a rule ---------------------------------------------------------------


def test_a_plan_item_cannot_claim_a_grant_for_itself(cli: Cli, small_hub: ReferenceHub) -> None:
    grant = cli.issue(small_hub.url, "--max", "5", "--expires", "7d", "--where", "task_id=web-t-2")
    claims = {**status("web-t-4"), "grant": grant}
    [item] = cli.run(small_hub.url, claims)["items"]
    assert item["outcome"] == "denied" and "malformed" in item["reason"], item
    assert hub_get(small_hub, "/tasks/web-t-4")["status"] == "in_progress"
    assert cli.grants()[0]["uses"] == 0


def test_a_grant_never_skips_the_preconditions(cli: Cli, small_hub: ReferenceHub) -> None:
    cli.issue(small_hub.url, "--max", "9", "--expires", "7d")
    cli.ok("approvals", "list")  # an empty queue lists fine
    elsewhere, same, cancelled_first = cli.run(
        small_hub.url, status("plat-t-1"), status("web-t-2", "blocked"), status("web-t-3",
                                                                                   "cancelled"),
    )["items"]  # fmt: skip
    assert elsewhere["outcome"] == "denied" and "plat-t-1" in elsewhere["reason"], elsewhere
    assert same["outcome"] == "denied" and "already" in same["reason"], same
    assert cancelled_first["outcome"] == "executed"
    # A task a person closed (cancelled): only a person reopens it, grant or not.
    [reopen] = cli.run(small_hub.url, status("web-t-3", "todo"))["items"]
    assert reopen["outcome"] == "queued" and "closed (cancelled) by a person" in reopen["reason"]
    assert hub_get(small_hub, "/tasks/web-t-3")["status"] == "cancelled"
    assert hub_get(small_hub, "/tasks/plat-t-1")["status"] == "todo"


def test_a_grant_never_skips_the_observation_check(cli: Cli, small_hub: ReferenceHub) -> None:
    grant = cli.issue(small_hub.url, "--max", "5", "--expires", "7d")
    plan = {"observations": ["web-t-4 waits."], "proposals": [status("web-t-4")]}
    llm = cli.thinking(small_hub.url, plan, patch=("web-t-4", "cancelled"))
    summary = cli.run(small_hub.url, llm=llm)
    [item] = summary["items"]
    assert item["outcome"] == "stale" and item["grant"] == grant, item
    assert hub_get(small_hub, "/tasks/web-t-4")["status"] == "cancelled"
    # The write was authorized under the grant: that is a use, though the hub refused it.
    assert cli.grants()[0]["uses"] == 1


def test_a_grant_never_skips_evidence_for_a_status_write(cli: Cli, small_hub: ReferenceHub) -> None:
    cli.issue(small_hub.url, "--max", "5", "--expires", "7d")
    summary = cli.run(small_hub.url, status("web-t-1", "done"), status("web-t-3", "in_progress"))
    done, started = summary["items"]
    for item in (done, started):
        assert item["outcome"] == "queued" and item.get("grant") is None, item
        assert "evidence" in item["reason"], item
    assert hub_get(small_hub, "/tasks/web-t-1")["status"] == "in_progress"
    assert hub_get(small_hub, "/tasks/web-t-3")["status"] == "todo"
    assert cli("replay", summary["run_id"]).code == 0


def test_a_grant_never_skips_deference_to_a_persons_reversal(
    cli: Cli, small_hub: ReferenceHub
) -> None:
    cli.issue(small_hub.url, "--max", "5", "--expires", "7d")
    [first] = cli.run(small_hub.url, status("web-t-4"))["items"]
    assert first["outcome"] == "executed"
    # A person moves it back; the next grant-covered proposal on it is theirs to decide.
    moved = httpx.patch(
        f"{small_hub.url}/tasks/web-t-4", json={"status": "in_progress"}, timeout=10
    )
    assert moved.status_code == 200, moved.text
    [again] = cli.run(small_hub.url, status("web-t-4", "cancelled"))["items"]
    # Held: neither run under the grant nor asked again; the person's reversal stands.
    assert again["outcome"] == "denied" and again["code"] == "held_deference", again
    assert again.get("grant") is None and not again.get("approval_id")
    assert "after Custodian set it to blocked" in again["reason"]
    assert hub_get(small_hub, "/tasks/web-t-4")["status"] == "in_progress"


def test_a_grant_never_runs_a_proposal_a_person_rejected_or_that_awaits_them(
    cli: Cli, small_hub: ReferenceHub
) -> None:
    rejected, pending = cli.run(small_hub.url, status("web-t-4"), status("web-t-5"))["items"]
    cli.ok("approvals", "reject", rejected["approval_id"], "--by", "bo", "--reason", "not blocked")
    cli.issue(small_hub.url, "--max", "5", "--expires", "7d")
    again, waiting = cli.run(small_hub.url, status("web-t-4"), status("web-t-5"))["items"]
    assert again["outcome"] == "denied" and "a person rejected the same proposal" in again["reason"]
    assert waiting["outcome"] == "denied", waiting
    assert f"already awaits approval as {pending['approval_id']}" in waiting["reason"]
    assert hub_get(small_hub, "/tasks/web-t-4")["status"] == "in_progress"
    assert cli.grants()[0]["uses"] == 0


def test_a_grant_never_skips_the_rolling_budgets(cli: Cli, small_hub: ReferenceHub) -> None:
    cli.issue(small_hub.url, "--max", "9", "--expires", "7d")
    [first] = cli.run(small_hub.url, status("web-t-5"))["items"]
    assert first["outcome"] == "executed"
    [again] = cli.run(small_hub.url, status("web-t-5", "cancelled"))["items"]
    assert again["outcome"] == "queued" and "rolling budget" in again["reason"], again
    assert hub_get(small_hub, "/tasks/web-t-5")["status"] == "blocked"


# --- listing and scope ------------------------------------------------------------------------


def test_grants_list_shows_uses_left_expiry_and_state(cli: Cli, small_hub: ReferenceHub) -> None:
    used_up = cli.issue(
        small_hub.url, "--max", "1", "--expires", "7d", "--where", "task_id=web-t-4"
    )
    live = cli.issue(small_hub.url, "--max", "3", "--expires", "36h", "--where", "task_id=web-t-5")
    revoked = cli.issue(small_hub.url, "--max", "2", "--expires", "7d")
    cli.ok("grants", "revoke", revoked, "--by", "bo", "--reason", "too broad")
    with simulated_clock(lambda: datetime.now(UTC) - timedelta(days=3)):
        expired = cli.issue(small_hub.url, "--max", "4", "--expires", "1d")
    cli.run(small_hub.url, status("web-t-4"), status("web-t-5"))
    rows = {g["id"]: g for g in cli.grants()}
    got = {i: (rows[i]["uses"], rows[i]["left"], rows[i]["state"]) for i in rows}
    assert got == {
        used_up: (1, 0, "used up"), live: (1, 2, "live"), revoked: (0, 2, "revoked"),
        expired: (0, 4, "expired"),
    }  # fmt: skip
    text = cli.ok("grants", "list", "--domain", "website").stdout
    line = next(x for x in text.splitlines() if x.startswith(live))
    assert "live website set_task_status (task_id=web-t-5): 1 used, 2 left, expires " in line
    assert rows[live]["expires_at"] in line
    for grant, state in ((used_up, "used up"), (revoked, "revoked"), (expired, "expired")):
        assert f"{grant} {state} website" in text
    assert cli.grants("platform") == []


def test_a_grant_of_one_domain_is_not_used_in_another(cli: Cli, small_hub: ReferenceHub) -> None:
    cli.issue(small_hub.url, "--max", "5", "--expires", "7d")
    summary = cli.run(small_hub.url, status("plat-t-1"), domain="platform")
    [item] = summary["items"]
    assert item["outcome"] == "queued" and item.get("grant") is None, item
    assert hub_get(small_hub, "/tasks/plat-t-1")["status"] == "todo"
    assert json.loads(json.dumps(cli.grants()))[0]["uses"] == 0


def test_a_decision_recorded_under_a_grant_lands_in_the_runs_domain(
    cli: Cli, small_hub: ReferenceHub
) -> None:
    grant = cli.issue(small_hub.url, "--max", "1", "--expires", "7d", op="record_decision")
    proposal = {
        "operation": "record_decision",
        "params": {"title": "Which CMS for the new site?"},
        "rationale": "two teams asked",
    }
    summary = cli.run(small_hub.url, proposal)
    [item] = summary["items"]
    assert item["outcome"] == "executed" and item["grant"] == grant, item
    decisions = hub_get(small_hub, "/decisions?domain=website")["decisions"]
    assert [d["title"] for d in decisions].count("Which CMS for the new site?") == 1
    assert cli("inspect", summary["run_id"]).code == 0
