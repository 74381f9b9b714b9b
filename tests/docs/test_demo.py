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

from custodian_hub import DEMO_DOMAINS, demo_dataset
from custodian_runtime.core.plan.extract import extract_plan
from custodian_runtime.core.presentation.display import columns
from support.runs import REPO, CliResult, run_cli
from support.spine import journal, of_run


def _demo_commands(domain: str = "website") -> list[list[str]]:
    """The `custodian` commands `make demo DOMAIN=<domain>` runs, as argv lists."""
    make = shutil.which("make")
    assert make is not None, "make is needed for `make demo`"
    printed = subprocess.run(
        [make, "-s", "-n", "demo", f"DOMAIN={domain}", "CUSTODIAN=custodian", "VENV=.venv"],
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


def test_every_demo_domain_has_its_answer_and_no_other_file_is_one() -> None:
    answers = sorted(p.name for p in (REPO / "demo").glob("*-answer.md"))
    assert answers == sorted(f"{domain}-answer.md" for domain in DEMO_DOMAINS)


@pytest.mark.parametrize("domain", DEMO_DOMAINS)
def test_the_demo_answer_names_only_ids_of_its_domain(domain: str) -> None:
    data = demo_dataset(datetime.now(UTC))
    workstreams = {ws["id"] for ws in data["workstreams"] if ws["domain"] == domain}
    known = workstreams | {
        row["id"]
        for key in ("tasks", "decisions", "flags", "events")
        for row in data[key]
        if row.get("workstream_id") in workstreams or row.get("domain") == domain
    }
    plan = extract_plan((REPO / "demo" / f"{domain}-answer.md").read_text(encoding="utf-8"))
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


@pytest.mark.parametrize("domain", DEMO_DOMAINS)
def test_each_demo_domain_executes_three_queues_two_and_denies_one(
    domain: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    argv = [*_demo_commands(domain)[0], "--json"]
    assert argv[argv.index("--domain") + 1] == domain
    summary = _cli(tmp_path, monkeypatch, argv).json()
    assert summary["status"] == "completed"
    counts = {key: summary["counts"][key] for key in ("executed", "queued", "denied")}
    assert counts == {"executed": 3, "queued": 2, "denied": 1}


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


def test_a_second_demo_run_after_deciding_denies_what_was_decided(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the README says of `make demo` again once a person approved one item, rejected one."""
    run_argv = [*_demo_commands()[0], "--json"]
    first = _cli(tmp_path, monkeypatch, run_argv).json()
    queued = {q["operation"]: q["approval_id"] for q in first["queued"]}
    approve = ["approvals", "approve", queued["create_task"], "--by", "ana", "--hub", "embedded"]
    assert _cli(tmp_path, monkeypatch, approve).code == 0
    reject = ["approvals", "reject", queued["set_task_status"], "--by", "ana", "--reason", "no"]
    assert _cli(tmp_path, monkeypatch, reject).code == 0
    again = _cli(tmp_path, monkeypatch, run_argv).json()
    assert again["counts"]["denied"] == len(again["items"]) == 6
    reasons = {item["operation"]: item["reason"] for item in again["items"]}
    assert "its workstream already has a task" in reasons["create_task"]
    assert "a person rejected the same proposal" in reasons["set_task_status"]
