"""`make demo DOMAIN=website`, as the quick start runs it: the commands the Makefile prints, run
against a fresh memory directory and a fresh embedded hub, then the approve and reject commands
the quick start shows.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from custodian_hub import demo_dataset
from custodian_runtime.core.plan.extract import extract_plan
from custodian_runtime.core.presentation.display import columns
from runsupport import REPO, CliResult, run_cli
from spinesupport import journal, of_run

ANSWER = REPO / "demo" / "website-answer.md"


def _demo_commands() -> list[list[str]]:
    """The `custodian` commands `make demo DOMAIN=website` runs, as argv lists."""
    make = shutil.which("make")
    assert make is not None, "make is needed for `make demo`"
    printed = subprocess.run(
        [make, "-s", "-n", "demo", "DOMAIN=website", "CUSTODIAN=custodian", "VENV=.venv"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    lines = [line for line in printed.splitlines() if line.startswith("custodian ")]
    return [shlex.split(line)[1:] for line in lines]


def _env(tmp_path: Path) -> dict[str, str]:
    return {
        "CUSTODIAN_MEMORY_DIR": str(tmp_path / "memory"),
        "CUSTODIAN_EMBEDDED_DIR": str(tmp_path / "hub"),
    }


def _cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, argv: list[str]) -> CliResult:
    # From the repository root, as `make` runs it: the answer and the canon by relative path.
    return run_cli(argv, REPO, monkeypatch, **_env(tmp_path))


def test_the_demo_answer_names_only_ids_of_the_demo_website_domain() -> None:
    data = demo_dataset(datetime.now(UTC))
    known = {
        row["id"] for key in ("workstreams", "tasks", "decisions", "flags") for row in data[key]
    }
    known = {i for i in known if i.startswith("web-")}
    plan = extract_plan(ANSWER.read_text(encoding="utf-8"))
    named = {
        value
        for item in plan.items
        for key, value in item.params.items()
        if key.endswith("_id") and isinstance(value, str)
    }
    assert named and named <= known, named - known
    assert all(item.error is None for item in plan.items)


def test_make_demo_executes_queues_and_denies_then_lists_the_queue(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    commands = _demo_commands()
    assert [argv[:2] for argv in commands] == [["run", "--domain"], ["approvals", "list"]]
    assert "--hub" in commands[0] and "embedded" in commands[0]
    ran = _cli(tmp_path, monkeypatch, commands[0])
    assert ran.code == 0, ran.stderr
    items = [line for line in ran.stdout.splitlines() if line.startswith("  ")]
    kinds = [line.split()[0] for line in items if not line.startswith("  observed")]
    assert kinds.count("executed") >= 1 and kinds.count("queued") >= 1 and "denied" in kinds
    assert all(columns(line) <= 100 for line in items)
    assert "(Replace stock photos" in ran.stdout, "a target's title from the hub is shown"
    listed = _cli(tmp_path, monkeypatch, commands[1])
    assert listed.code == 0
    pending = [line for line in listed.stdout.splitlines() if " pending " in line]
    assert len(pending) == kinds.count("queued")
    assert "task_id=web-t-23 status=blocked" in listed.stdout
    assert "    no update for 41 days" in listed.stdout, "the rationale is listed"


def test_the_quick_starts_approve_and_reject_work_on_the_demo_queue(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_argv = _demo_commands()[0]
    summary = _cli(tmp_path, monkeypatch, [*run_argv, "--json"]).json()
    assert summary["hub"] == "embedded", "the embedded hub's throwaway port is not recorded"
    queued = {q["operation"]: q["approval_id"] for q in summary["queued"]}
    done = [(e["operation"], e["target"]) for e in summary["executed"]]
    assert ("update_task_status", "web-t-04") in done, "the demo's milestone closes web-t-04"
    note = Path(summary["note"]).read_text(encoding="utf-8")
    assert 'hub: "embedded"' in note and "127.0.0.1" not in note
    started = of_run(journal(tmp_path / "memory"), summary["run_id"], "run_started")
    assert [r.data["hub_url"] for r in started] == ["embedded"]
    assert "(Checkout performance)" in note and "**Rationale:** web-evt-11" in note
    assert "Plan item #" not in note, "no boilerplate sentences in the note"
    approve = ["approvals", "approve", queued["create_task"], "--by", "ana", "--hub", "embedded"]
    approved = _cli(tmp_path, monkeypatch, approve)
    assert approved.code == 0, approved.stdout + approved.stderr
    reject = ["approvals", "reject", queued["set_task_status"], "--by", "ana", "--reason", "no"]
    assert _cli(tmp_path, monkeypatch, reject).code == 0
    items = json.loads(_cli(tmp_path, monkeypatch, ["approvals", "list", "--json"]).stdout)
    assert sorted(i["status"] for i in items) == ["executed", "rejected"]


def test_a_second_demo_run_sends_nothing_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_argv = [*_demo_commands()[0], "--json"]
    first = _cli(tmp_path, monkeypatch, run_argv).json()
    second = _cli(tmp_path, monkeypatch, run_argv)
    assert second.code == 0, second.stderr
    again = second.json()
    assert again["status"] == "completed" and first["counts"]["executed"] >= 1
    assert again["counts"]["executed"] == 0 and again["counts"]["queued"] == 0
    assert again["counts"]["denied"] == len(again["items"])
