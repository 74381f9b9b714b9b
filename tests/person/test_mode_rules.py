"""Each rule of modes per operation (issue #22), one test each, through the CLI on a real hub.

A mode is a person's decision and only narrows: `ask` queues, `shadow` records what would have
happened and does nothing, `off` denies. The model cannot change a mode, not even through the canon.
"""

from __future__ import annotations

import shutil
from typing import Any

from custodian_hub import ReferenceHub
from custodian_runtime.core import operations
from custodian_runtime.journal.lock import RunLock
from custodian_runtime.journal.person.queue import ApprovalStore
from support.runs import CANON, hub_get
from support.spine import custodian_events, journal
from support.standing import Cli, note_of, status

EVENT = {
    "operation": "add_progress_event",
    "params": {"workstream_id": "web-ws-2", "event_type": "note",
               "rests_on": ["web-t-5"],
               "summary": "Blog migration waits on the image links fix."},
    "rationale": "keeps the log current",
}  # fmt: skip
EVENTS = {"observations": ["The blog waits."], "progress_events": [EVENT["params"]]}


def _pending(cli: Cli) -> list[Any]:
    return ApprovalStore(cli.memory).all("website", verify=False)


def _kinds(cli: Cli) -> list[str]:
    return [r.kind for r in journal(cli.memory)] if (cli.memory / "journal").exists() else []


def test_policy_show_lists_every_registered_operation_with_its_default(cli: Cli) -> None:
    modes = cli.modes()
    want = {
        op: "auto" if op in operations.names("sanctioned") else "ask" for op in operations.names()
    }
    assert modes == want and len(modes) == len(operations.all_specs())
    text = cli.ok("policy", "show", "--domain", "website").stdout.splitlines()
    assert text == [f"{op}: {mode}" for op, mode in sorted(want.items())]


def test_auto_on_an_approvable_operation_exits_2_and_journals_nothing(cli: Cli) -> None:
    for op in sorted(operations.names("approvable")):
        done = cli.set_mode(op, "auto")
        assert done.code == 2, (op, done.stderr)
        assert f"{op} needs a person's approval, so it cannot be set to auto" in done.stderr
        assert "custodian grants issue" in done.stderr
    assert _kinds(cli) == []
    assert cli.modes()["create_task"] == "ask"
    # A sanctioned write may go back to auto, its default.
    assert cli.set_mode("flag_for_human", "shadow").code == 0
    assert cli.set_mode("flag_for_human", "auto").code == 0
    assert cli.modes()["flag_for_human"] == "auto"


def test_an_unknown_operation_or_mode_exits_2_naming_the_known_ones(cli: Cli) -> None:
    unknown_op = cli.set_mode("drop_database", "off")
    assert unknown_op.code == 2
    assert "unknown operation 'drop_database'; known operations: " in unknown_op.stderr
    for op in operations.names():
        assert op in unknown_op.stderr
    unknown_mode = cli.set_mode("create_task", "yolo")
    assert unknown_mode.code == 2
    assert "unknown mode 'yolo'; give one of auto, ask, shadow, off" in unknown_mode.stderr
    assert _kinds(cli) == []


def test_a_mode_set_without_who_or_why_exits_2_and_journals_nothing(cli: Cli) -> None:
    for by, reason in (("", "quiet week"), ("ana", ""), (" ", " ")):
        done = cli.set_mode("create_task", "off", by=by, reason=reason)
        assert done.code == 2, done.stdout
        assert "--by: name the person" in done.stderr or "--reason: say why" in done.stderr
    assert _kinds(cli) == [] and cli.modes()["create_task"] == "ask"


def test_ask_on_a_sanctioned_write_queues_a_card_and_writes_nothing(
    cli: Cli, small_hub: ReferenceHub
) -> None:
    assert cli.set_mode("add_progress_event", "ask").code == 0
    summary = cli.run(small_hub.url, llm=cli.answer(EVENTS))
    [item] = summary["items"]
    assert item["outcome"] == "queued", item
    assert "a person set add_progress_event to ask (ana: onboarding)" in item["reason"]
    [card] = _pending(cli)
    assert card.id == item["approval_id"] and card.operation == "add_progress_event"
    assert card.id in cli.ok("approvals", "list").stdout
    assert custodian_events(small_hub) == []


def test_ask_does_not_queue_the_same_sanctioned_write_twice(
    cli: Cli, small_hub: ReferenceHub
) -> None:
    cli.set_mode("add_progress_event", "ask")
    [first] = cli.run(small_hub.url, llm=cli.answer(EVENTS))["items"]
    [again] = cli.run(small_hub.url, llm=cli.answer(EVENTS))["items"]
    assert first["outcome"] == "queued"
    assert again["outcome"] == "denied", again
    assert f"already awaits approval as {first['approval_id']}" in again["reason"]
    assert len(_pending(cli)) == 1


def test_shadow_writes_and_queues_nothing_and_says_what_would_have_happened(
    cli: Cli, small_hub: ReferenceHub
) -> None:
    cli.set_mode("add_progress_event", "shadow")
    cli.set_mode("set_task_status", "shadow")
    plan = {**EVENTS, "proposals": [status("web-t-4")]}
    summary = cli.run(small_hub.url, llm=cli.answer(plan))
    event, block = summary["items"]
    assert event["outcome"] == "denied" and "would have executed" in event["reason"]
    assert block["outcome"] == "denied" and "would have queued" in block["reason"]
    assert "a person set set_task_status to shadow (ana: onboarding)" in block["reason"]
    note = note_of(summary)
    assert "would have executed" in note and "would have queued" in note
    assert custodian_events(small_hub) == [] and _pending(cli) == []
    assert hub_get(small_hub, "/tasks/web-t-4")["status"] == "in_progress"


def test_off_denies_with_who_and_why(cli: Cli, small_hub: ReferenceHub) -> None:
    cli.set_mode("flag_for_human", "off", by="bo", reason="too noisy this week")
    flag = {
        "observations": ["web-t-2 is blocked."],
        "tasks_to_flag": [{"task_id": "web-t-2", "note": "Blocked 9 days, no flag."}],
    }
    summary = cli.run(small_hub.url, llm=cli.answer(flag))
    [item] = summary["items"]
    assert item["outcome"] == "denied", item
    assert "a person set flag_for_human to off (bo: too noisy this week)" in item["reason"]
    assert "flag_for_human to off (bo: too noisy this week)" in note_of(summary)
    flags = hub_get(small_hub, "/flags?domain=website")["flags"]
    assert [f["task_id"] for f in flags] == ["web-t-6"]


def test_modes_are_in_the_notes_front_matter_and_the_json_summary(
    cli: Cli, small_hub: ReferenceHub
) -> None:
    cli.set_mode("create_task", "off")
    cli.set_mode("flag_for_human", "shadow")
    summary = cli.run(small_hub.url)
    assert summary["modes"] == {**cli.modes(), "create_task": "off", "flag_for_human": "shadow"}
    front = note_of(summary).split("\n---\n", 1)[0]
    assert '"create_task": "off"' in front and '"flag_for_human": "shadow"' in front
    assert '"set_task_status": "ask"' in front and '"add_progress_event": "auto"' in front


def test_a_plan_item_naming_a_policy_mode_or_grant_is_denied(
    cli: Cli, small_hub: ReferenceHub
) -> None:
    tries = [
        {"operation": "set_mode", "params": {"operation": "create_task", "mode": "auto"}},
        {"operation": "update_policy", "params": {"create_task": "auto"}},
        {"operation": "grant", "params": {"operation": "create_task"}},
        {"operation": "revoke_grant", "params": {"id": "grant-000000000000"}},
        {"operation": "Set-Modes", "params": {}},
    ]
    sections = {"policy": {"set_task_status": "auto"}, "grants": [{"operation": "create_task"}]}
    items = cli.run(small_hub.url, *tries, plan=sections)["items"]
    tries = [*tries, *sections]
    assert [i["outcome"] for i in items] == ["denied"] * len(tries), items
    for item in items:
        assert "modes and grants are a person's decisions" in item["reason"], item
    assert _pending(cli) == [] and cli.modes()["create_task"] == "ask"
    assert not {"policy_set", "grant_issued"} & set(_kinds(cli))


def test_write_canon_cannot_change_a_mode(cli: Cli, small_hub: ReferenceHub) -> None:
    canon = cli.tmp_path / "canon"
    shutil.copytree(CANON, canon)
    cli.canon = canon
    text = "---\npolicy: auto\nmodes:\n  set_task_status: auto\n---\n# Modes\n\npolicy: auto\n"
    write = {"operation": "write_canon", "params": {"path": "domains/website.md", "content": text},
             "rationale": "run status writes on their own"}  # fmt: skip
    [queued] = cli.run(small_hub.url, write)["items"]
    assert queued["outcome"] == "queued", queued
    cli.ok("approvals", "approve", queued["approval_id"], "--by", "ana", "--hub", small_hub.url,
           "--canon", str(canon))  # fmt: skip
    assert (canon / "domains" / "website.md").read_text("utf-8") == text
    assert cli.modes()["set_task_status"] == "ask"
    # web-t-1, untouched for 30 days: no person's recent change on the hub to defer to.
    [block] = cli.run(small_hub.url, status("web-t-1"))["items"]
    assert block["outcome"] == "queued" and block["reason"].endswith(
        "it is a write that Custodian may not make on its own."
    )
    assert "policy_set" not in _kinds(cli)


def test_a_change_while_a_run_holds_the_domain_binds_it_then_is_journaled_for_the_next_run(
    cli: Cli, small_hub: ReferenceHub
) -> None:
    off = ["policy", "set", "--domain", "website", "--operation", "add_progress_event",
           "--mode", "off", "--by", "ana", "--reason", "quiet week",
           "--memory", str(cli.memory)]  # fmt: skip
    holding = cli.run(small_hub.url, llm=cli.thinking(small_hub.url, EVENTS, argv=off))
    [held] = holding["items"]
    # Kept while the run had the domain's lock, and read by its ruling all the same.
    assert held["outcome"] == "denied" and "to off (ana: quiet week)" in held["reason"], held
    assert custodian_events(small_hub) == []
    records = journal(cli.memory)
    [policy_set] = [r for r in records if r.kind == "policy_set"]
    last_of_run = [r for r in records if r.run_id == holding["run_id"]][-1]
    assert policy_set.seq > last_of_run.seq and policy_set.run_id.startswith("person-")
    assert not list((cli.memory / "inbox").rglob("*.json"))
    later = {**EVENT["params"], "summary": "The image links fix is under review."}
    summary = cli.run(small_hub.url, llm=cli.answer({**EVENTS, "progress_events": [later]}))
    [item] = summary["items"]
    assert item["outcome"] == "denied" and "to off (ana: quiet week)" in item["reason"]
    assert custodian_events(small_hub) == []


def test_a_change_kept_while_the_domain_is_locked_is_journaled_before_the_next_run(
    cli: Cli, small_hub: ReferenceHub
) -> None:
    with RunLock(cli.memory, "website", run_id="r-busy"):
        kept = cli.set_mode("add_progress_event", "off", reason="quiet week")
        assert kept.code == 0 and "busy (locked by" in kept.stdout and "r-busy" in kept.stdout
        assert "policy_set" not in _kinds(cli)
    summary = cli.run(small_hub.url, llm=cli.answer(EVENTS))
    [item] = summary["items"]
    assert item["outcome"] == "denied" and "to off (ana: quiet week)" in item["reason"]
    records = journal(cli.memory)
    [policy_set] = [r for r in records if r.kind == "policy_set"]
    first_of_run = next(r for r in records if r.run_id == summary["run_id"])
    assert policy_set.seq < first_of_run.seq
    assert custodian_events(small_hub) == []
