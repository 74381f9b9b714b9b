"""A person's standing rules every path that can send a write, and binds a run in flight.

Each finding of issue #28's "one ruling" part, through the CLI against a real reference hub: a
killed `done` is not re-sent once its operation is `off`, `shadow` or `ask`; an expired write's
escalation raises no flag while `flag_for_human` is `off`; an approve is refused (exit 2, the item
stays pending) while its operation is `off` or `shadow`; `policy set --operation all --mode off`
during the model call, and a grant revoked while the run is acting, bind that very run.
"""

from __future__ import annotations

import io
import json
import signal
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from custodian_hub import ReferenceHub, load_seed
from custodian_runtime.journal.person.queue import ApprovalStore
from custodian_runtime.person.carry_out import decide
from custodian_runtime.run import run
from custodian_runtime.settings import load_settings
from support.runs import CANON, hub_get, small_dataset
from support.spine import (
    HOLD_TIMEOUT_S,
    THREE_WRITES,
    WriteHold,
    clean_env,
    custodian_cli,
    custodian_events,
    custodian_flags,
    finish,
    held_hub,
    journal,
    kill_when_held,
    of_run,
    run_argv,
    start_run,
    write_plan,
)
from support.standing import Cli, note_of, status

QUIET = {"observations": ["Nothing needs doing."]}


class Clock:
    """A hand-moved UTC clock shared by the hub and the in-process rerun."""

    def __init__(self) -> None:
        self.offset = timedelta(0)

    def __call__(self) -> datetime:
        return datetime.now(UTC) + self.offset


DONE_AGAIN = {"observations": ["web-t-4 was verified (ev-1)."],
              "tasks_to_update": THREE_WRITES["tasks_to_update"]}  # fmt: skip


def _set_mode(tmp_path: Path, memory: Path, op: str, mode: str, **env: str) -> None:
    done = custodian_cli(
        tmp_path, "policy", "set", "--domain", "website", "--operation", op, "--mode", mode,
        "--by", "bo", "--reason", "a quiet week", "--memory", str(memory), **env,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


def _kill_the_done(tmp_path: Path, hub: ReferenceHub, hold: WriteHold, memory: Path) -> str:
    """Run THREE_WRITES and SIGKILL it while the hub holds its status write; the run's id."""
    llm = write_plan(tmp_path / "answer.md", THREE_WRITES)
    kill_when_held(
        tmp_path, run_argv(hub.url, llm, memory), hold, "the run never reached the status write"
    )
    hold.release(abort=True)  # the status never landed
    return next(r.run_id for r in journal(memory) if r.kind == "run_started")


def _inspected_ok(tmp_path: Path, memory: Path) -> None:
    inspected = custodian_cli(tmp_path, "inspect", "--domain", "website", "--memory", str(memory))
    assert inspected.stdout.rstrip().endswith("replay: ok"), inspected.stdout + inspected.stderr


@pytest.mark.parametrize("mode", ["off", "shadow", "ask"])
def test_a_killed_done_is_not_resent_once_a_person_set_its_operation_to(
    tmp_path: Path, mode: str
) -> None:
    memory = tmp_path / "memory"
    hold = WriteHold(nth=2, phase="before_commit")  # the `done` on web-t-4
    with held_hub(tmp_path, hold) as hub:
        killed = _kill_the_done(tmp_path, hub, hold, memory)
        _set_mode(tmp_path, memory, "update_task_status", mode)
        llm = write_plan(tmp_path / "again.md", DONE_AGAIN)
        code, out, err = finish(start_run(tmp_path, run_argv(hub.url, llm, memory, "--force")))
        assert code == 0, err
        assert hub_get(hub, "/tasks/web-t-4")["status"] == "in_progress"
        summary = json.loads(out)
        [closed] = [r for r in summary["reconciled"] if r["operation"] == "update_task_status"]
        assert closed["outcome"] == "refused", closed
        assert f"a person set update_task_status to {mode} (bo: a quiet week)" in closed["reason"]
        records = journal(memory)
        rerun = summary["run_id"]
        assert not [r for r in of_run(records, rerun, "dispatched") if r.data.get("reconciles")]
        [failed] = [r for r in of_run(records, rerun, "failed") if r.data.get("reconciles")]
        assert failed.data["closed"] == "refused"
        # The same write proposed afresh is ruled the same way: denied, or under ask a card.
        [fresh] = summary["items"]
        assert fresh["outcome"] == ("queued" if mode == "ask" else "denied"), fresh
        # Not dropped silently: the note says what was not sent, and why.
        note = note_of(summary)
        assert killed in note and "not sent" in note and f"to {mode}" in note
        _inspected_ok(tmp_path, memory)


def test_an_expired_writes_escalation_raises_no_flag_while_flag_for_human_is_off(
    tmp_path: Path,
) -> None:
    memory = tmp_path / "memory"
    clock = Clock()
    hold = WriteHold(nth=1, phase="before_commit")  # the progress event on web-t-4
    db = tmp_path / "hub.sqlite3"
    load_seed(db, small_dataset())
    with ReferenceHub(db, on_write=hold, clock=clock) as hub:
        proc = start_run(tmp_path, run_argv(hub.url, write_plan(tmp_path / "a.md", THREE_WRITES),
                                            memory))  # fmt: skip
        try:
            assert hold.reached.wait(HOLD_TIMEOUT_S), "the run never reached the held write"
        finally:
            proc.send_signal(signal.SIGKILL)
            finish(proc)
        hold.release(abort=True)
        _set_mode(tmp_path, memory, "flag_for_human", "off")
        clock.offset = timedelta(hours=25)  # past the hub's idempotency window
        flags = {"domain": "website", "hub": hub.url, "memory": str(memory), "force": True,
                 "llm": write_plan(tmp_path / "quiet.md", QUIET), "canon": str(CANON)}  # fmt: skip
        result = run(load_settings(flags, {}, tmp_path), clock=clock, stderr=io.StringIO())
        assert result.exit_code == 0, result.message
        [item] = result.summary()["reconciled"]
        assert item["outcome"] == "expired", item
        assert item["flag"] is None
        assert "a person set flag_for_human to off (bo: a quiet week)" in item["flag_withheld"]
        assert custodian_flags(hub, "web-t-4") == []
        rerun = result.summary()["run_id"]
        assert of_run(journal(memory), rerun, "authorized") == []


@pytest.mark.parametrize("mode", ["off", "shadow"])
def test_an_approve_is_refused_while_its_operation_is(
    cli: Cli, small_hub: ReferenceHub, mode: str
) -> None:
    [queued] = cli.run(small_hub.url, status("web-t-4"))["items"]
    assert queued["outcome"] == "queued", queued
    approval = queued["approval_id"]
    assert cli.set_mode("set_task_status", mode, by="bo", reason="vendor freeze").code == 0
    kinds = [r.kind for r in journal(cli.memory)]
    refused = cli("approvals", "approve", approval, "--by", "ana", "--hub", small_hub.url)
    assert refused.code == 2, refused.stdout + refused.stderr
    said = refused.stdout + refused.stderr
    assert f"set_task_status is {mode}" in said and "bo" in said and "vendor freeze" in said
    assert " at 20" in said  # when the mode was set
    assert "still pending" in said
    [item] = ApprovalStore(cli.memory).all("website", verify=False)
    assert item.status == "pending"
    assert [r.kind for r in journal(cli.memory)] == kinds  # nothing journaled
    assert hub_get(small_hub, "/tasks/web-t-4")["status"] == "in_progress"
    # The mode changed back: the same item is approvable again, and runs.
    assert cli.set_mode("set_task_status", "ask").code == 0
    cli.ok("approvals", "approve", approval, "--by", "ana", "--hub", small_hub.url)
    assert hub_get(small_hub, "/tasks/web-t-4")["status"] == "blocked"


def test_the_review_pages_approve_is_refused_the_same_way(
    cli: Cli, small_hub: ReferenceHub
) -> None:
    [queued] = cli.run(small_hub.url, status("web-t-4"))["items"]
    assert cli.set_mode("set_task_status", "off", by="bo", reason="vendor freeze").code == 0
    settings = load_settings(
        {"domain": "website", "hub": small_hub.url, "memory": str(cli.memory), "llm": "offline"},
        {},
        cli.tmp_path,
    )
    decided = decide(settings, queued["approval_id"], "approve", "ana", None)
    assert decided.exit_code == 2 and "vendor freeze" in decided.message, decided
    [item] = ApprovalStore(cli.memory).all("website", verify=False)
    assert item.status == "pending"
    assert hub_get(small_hub, "/tasks/web-t-4")["status"] == "in_progress"


def test_an_approve_under_ask_still_executes_a_write_ask_queued(
    cli: Cli, small_hub: ReferenceHub
) -> None:
    assert cli.set_mode("update_task_status", "ask").code == 0
    [queued] = cli.run(small_hub.url, llm=cli.answer(DONE_AGAIN))["items"]
    assert queued["outcome"] == "queued", queued
    cli.ok("approvals", "approve", queued["approval_id"], "--by", "ana", "--hub", small_hub.url)
    assert hub_get(small_hub, "/tasks/web-t-4")["status"] == "done"


ALL_OFF = ["policy", "set", "--domain", "website", "--operation", "all", "--mode", "off",
           "--by", "ana", "--reason", "incident review"]  # fmt: skip
EVENT = {
    "workstream_id": "web-ws-2",
    "event_type": "note",
    "rests_on": ["web-t-5"],
    "summary": "Blog waits on links.",
}


def test_all_off_during_the_model_call_binds_the_running_run(
    cli: Cli, small_hub: ReferenceHub
) -> None:
    plan = {**THREE_WRITES, "progress_events": [EVENT], "proposals": [status("web-t-1")]}
    argv = [*ALL_OFF, "--memory", str(cli.memory)]
    summary = cli.run(small_hub.url, llm=cli.thinking(small_hub.url, plan, argv=argv))
    assert [i["outcome"] for i in summary["items"]] == ["denied"] * 4, summary["items"]
    for item in summary["items"]:
        assert f"a person set {item['operation']} to off (ana: incident review)" in item["reason"]
    assert custodian_events(small_hub) == [] and custodian_flags(small_hub, "web-t-2") == []
    assert hub_get(small_hub, "/tasks/web-t-4")["status"] == "in_progress"
    assert hub_get(small_hub, "/tasks/web-t-1")["status"] == "in_progress"
    assert ApprovalStore(cli.memory).all("website", verify=False) == []
    assert "to off (ana: incident review)" in note_of(summary)
    records = journal(cli.memory)
    assert not of_run(records, summary["run_id"], "authorized")
    # Journaled once the domain was free, after the run; the journal replays as recorded.
    cli.ok("grants", "list")
    assert "policy_set" in [r.kind for r in journal(cli.memory)]
    _inspected_ok(cli.tmp_path, cli.memory)
    replay = custodian_cli(cli.tmp_path, "replay", summary["run_id"], "--memory", str(cli.memory))
    assert replay.returncode == 0, replay.stdout + replay.stderr


class AfterFirstWrite:
    """An `on_write` hook: once the first write committed, a person runs `custodian argv` (kept,
    as the run has the domain's lock) before the hub answers."""

    def __init__(self, tmp_path: Path, memory: Path) -> None:
        self.tmp_path, self.memory = tmp_path, memory
        self.argv: list[str] = []
        self.writes: list[str] = []
        self.said = ""

    def __call__(self, phase: str, method: str, path: str) -> None:
        if phase != "after_commit":
            return
        self.writes.append(f"{method} {path}")
        if len(self.writes) == 1 and self.argv:
            argv = [sys.executable, "-m", "custodian_runtime", *self.argv, "--memory",
                    str(self.memory)]  # fmt: skip
            done = subprocess.run(argv, cwd=self.tmp_path, env=clean_env(), capture_output=True,
                                  text=True, timeout=60)  # fmt: skip
            self.said = done.stdout + done.stderr


def test_a_grant_revoked_while_the_run_is_acting_binds_its_next_write(
    cli: Cli, tmp_path: Path
) -> None:
    db = tmp_path / "hub.sqlite3"
    load_seed(db, small_dataset())
    hook = AfterFirstWrite(tmp_path, cli.memory)
    with ReferenceHub(db, on_write=hook) as hub:
        grant = cli.issue(hub.url, "--max", "5", "--expires", "7d")
        hook.argv = ["grants", "revoke", grant, "--by", "bo", "--reason", "vendor answered"]
        summary = cli.run(hub.url, status("web-t-4"), status("web-t-1"))
        assert "busy" in hook.said, hook.said
        first, second = summary["items"]
        assert first["outcome"] == "executed" and first["grant"] == grant, first
        assert second["outcome"] == "not_sent", second
        assert f"grant {grant} is revoked" in second["error"], second
        assert hook.writes == ["PATCH /tasks/web-t-4"]
        assert hub_get(hub, "/tasks/web-t-1")["status"] == "in_progress"
        records = journal(cli.memory)
        assert len([r for r in records if r.kind == "grant_used"]) == 1
        assert "revoked" in note_of(summary)
    cli.ok("grants", "list")  # carries the kept revoke out
    [listed] = cli.grants()
    assert (listed["state"], listed["uses"]) == ("revoked", 1)
    _inspected_ok(tmp_path, cli.memory)


def test_all_off_while_the_run_is_acting_binds_its_next_write(cli: Cli, tmp_path: Path) -> None:
    db = tmp_path / "hub.sqlite3"
    load_seed(db, small_dataset())
    hook = AfterFirstWrite(tmp_path, cli.memory)
    hook.argv = ALL_OFF
    with ReferenceHub(db, on_write=hook) as hub:
        summary = cli.run(hub.url, llm=cli.answer(THREE_WRITES))
        assert "busy" in hook.said, hook.said
        event, done, flag = summary["items"]
        assert event["outcome"] == "executed", event
        for item in (done, flag):
            assert item["outcome"] == "not_sent", item
            assert (
                f"a person set {item['operation']} to off (ana: incident review)" in item["error"]
            )
        assert len(hook.writes) == 1 and hook.writes[0].startswith("POST /events")
        assert hub_get(hub, "/tasks/web-t-4")["status"] == "in_progress"
        assert custodian_flags(hub, "web-t-2") == []
        assert not [r for r in journal(cli.memory) if r.kind == "authorized"][1:]
    _inspected_ok(tmp_path, cli.memory)
