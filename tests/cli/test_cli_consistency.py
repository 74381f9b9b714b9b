"""The commands agree: unknown things are exit 2, flags go where a person puts them."""

from __future__ import annotations

import json
from pathlib import Path

from support.spine import (
    THREE_WRITES,
    custodian_cli,
    finish,
    held_hub,
    run_argv,
    start_run,
    write_plan,
)


def _one_run(tmp_path: Path, memory: Path) -> str:
    """A completed run that queues nothing; returns its run id."""
    llm = write_plan(tmp_path / "answer.md", THREE_WRITES)
    with held_hub(tmp_path, None) as hub:
        code, out, err = finish(start_run(tmp_path, run_argv(hub.url, llm, memory)))
    assert code == 0, err
    return str(json.loads(out)["run_id"])


def test_replay_of_an_unknown_run_is_exit_2_like_inspect(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    _one_run(tmp_path, memory)
    inspected = custodian_cli(tmp_path, "inspect", "run-nope", "--memory", str(memory))
    replayed = custodian_cli(tmp_path, "replay", "run-nope", "--memory", str(memory))
    assert inspected.returncode == 2
    assert replayed.returncode == 2, replayed.stderr
    assert "no run 'run-nope' in any journal" in replayed.stderr
    assert "Traceback" not in replayed.stderr


def test_approvals_list_rejects_an_unknown_status(tmp_path: Path) -> None:
    done = custodian_cli(
        tmp_path, "approvals", "--memory", str(tmp_path), "list", "--status", "pendng"
    )
    assert done.returncode == 2
    assert "invalid choice: 'pendng'" in done.stderr and "'pending'" in done.stderr
    ok = custodian_cli(tmp_path, "approvals", "list", "--status", "rejected", "--json")
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout) == []


def test_memory_is_taken_after_the_approvals_subcommand_too(tmp_path: Path) -> None:
    memory = tmp_path / "elsewhere"
    memory.mkdir()
    for argv in (
        ("approvals", "show", "apr-000000000000", "--memory", str(memory)),
        ("approvals", "--memory", str(memory), "show", "apr-000000000000"),
    ):
        done = custodian_cli(tmp_path, *argv)
        assert done.returncode == 2, done.stderr
        assert f"no approval 'apr-000000000000' in {memory / 'approvals'}" in done.stderr
    listed = custodian_cli(tmp_path, "approvals", "list", "--json", "--memory", str(memory))
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout) == []


def test_an_unknown_domain_leaves_no_journal_and_no_lock_behind(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    llm = write_plan(tmp_path / "answer.md", THREE_WRITES)
    with held_hub(tmp_path, None) as hub:
        argv = run_argv(hub.url, llm, memory)
        argv[argv.index("website")] = "websit"
        code, _, err = finish(start_run(tmp_path, argv))
    assert code == 2, err
    assert "the hub has no domain 'websit'; it knows: platform, website" in err
    leftovers = sorted(str(p.relative_to(memory)) for p in memory.rglob("*") if p.is_file())
    assert leftovers == []
