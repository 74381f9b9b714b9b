"""Bad paths and settings are exit 2 before the hub is read or anything is written; no tracebacks.

Each case runs the real CLI as a child process against a loopback socket that stands in for the
hub: the test then checks that nothing ever connected to it, and that nothing under the test's
directory was created or changed.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from support.runs import CANON, plan_response
from support.spine import (
    THREE_WRITES,
    custodian_cli,
    held_hub,
    journal,
    run_argv,
    start_run,
    write_plan,
)
from support.spine import finish as finish_run

Setup = Callable[[Path], list[str]]


@contextmanager
def silent_hub() -> Iterator[tuple[str, socket.socket]]:
    """A listening socket posing as the hub: a run that reads the hub would connect to it."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        server.setblocking(False)
        yield f"http://127.0.0.1:{server.getsockname()[1]}", server


def _never_connected(server: socket.socket) -> bool:
    try:
        connection, _ = server.accept()
    except BlockingIOError:
        return True
    connection.close()
    return False


def _snapshot(root: Path) -> list[tuple[str, bytes | None]]:
    """Every path under `root`, with the bytes of each file (None for a directory)."""
    return [
        (str(p.relative_to(root)), None if p.is_dir() else p.read_bytes())
        for p in sorted(root.rglob("*"))
    ]


def _answer(tmp: Path) -> str:
    (tmp / "answer.md").write_text(plan_response({"observations": ["fine"]}), "utf-8")
    return f"file:{tmp / 'answer.md'}"


def _memory_is_a_file(tmp: Path) -> list[str]:
    (tmp / "memory").write_text("not a directory", "utf-8")
    return ["--memory", str(tmp / "memory")]


def _memory_under_a_file(tmp: Path) -> list[str]:
    (tmp / "volume").write_text("a file where a directory should be", "utf-8")
    return ["--memory", str(tmp / "volume" / "memory")]


def _part_is_a_file(part: str) -> Setup:
    def setup(tmp: Path) -> list[str]:
        (tmp / "memory").mkdir()
        (tmp / "memory" / part).write_text("not a directory", "utf-8")
        return ["--memory", str(tmp / "memory")]

    return setup


def _memory_unwritable(tmp: Path) -> list[str]:
    # procfs refuses new entries even to root: a real unwritable directory without privileges.
    return ["--memory", "/proc/1/custodian-memory"]


def _existing_memory_unwritable(tmp: Path) -> list[str]:
    return ["--memory", "/proc/1"]


def _canon_missing(tmp: Path) -> list[str]:
    (tmp / "canon").mkdir()
    return ["--canon", str(tmp / "canon")]


def _model_missing(tmp: Path) -> list[str]:
    return ["--llm", f"file:{tmp / 'no-such-answer.md'}"]


def _model_is_a_directory(tmp: Path) -> list[str]:
    (tmp / "answers").mkdir()
    return ["--llm", f"file:{tmp / 'answers'}"]


def _bad_number(tmp: Path) -> list[str]:
    (tmp / ".env").write_text("STATE_HUB_TIMEOUT_S=nan\n", "utf-8")
    return []


CASES: dict[str, tuple[Setup, str]] = {
    "memory-is-a-file": (_memory_is_a_file, "is a file, not a directory"),
    "memory-under-a-file": (_memory_under_a_file, "is a file, not a directory"),
    "working-is-a-file": (_part_is_a_file("working"), "working is a file, not a directory"),
    "journal-is-a-file": (_part_is_a_file("journal"), "journal is a file, not a directory"),
    "approvals-is-a-file": (_part_is_a_file("approvals"), "approvals is a file"),
    "memory-unwritable": (_memory_unwritable, "is not writable by this user"),
    "existing-memory-unwritable": (_existing_memory_unwritable, "is not writable by this user"),
    "canon-missing": (_canon_missing, "no constitution at"),
    "model-file-missing": (_model_missing, "does not exist"),
    "model-file-is-a-directory": (_model_is_a_directory, "is a directory"),
    "malformed-setting": (_bad_number, "STATE_HUB_TIMEOUT_S must be a positive, finite number"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_bad_setup_is_exit_2_before_the_hub_or_the_disk(tmp_path: Path, case: str) -> None:
    setup, expected = CASES[case]
    overrides = setup(tmp_path)
    argv = ["run", "--domain", "website", "--llm", _answer(tmp_path), "--canon", str(CANON)]
    argv += ["--memory", str(tmp_path / "memory"), "--json", *overrides]
    before = _snapshot(tmp_path)
    with silent_hub() as (url, server):
        done = custodian_cli(tmp_path, *argv, "--hub", url)
        assert _never_connected(server), "the hub was read before the check"
    assert done.returncode == 2, done.stderr
    assert expected in done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    assert _snapshot(tmp_path) == before


def test_a_dry_run_needs_no_writable_memory(tmp_path: Path) -> None:
    """A dry run writes nothing, so a read-only memory volume is enough for it."""
    llm = write_plan(tmp_path / "answer.md", THREE_WRITES)
    with held_hub(tmp_path, None) as hub:
        argv = run_argv(hub.url, llm, Path("/proc/1"), "--dry-run")
        code, out, err = finish_run(start_run(tmp_path, argv))
    assert code == 0, err
    assert json.loads(out)["dry_run"] is True


CRASH = """
import sys
import custodian_runtime.run.observe
def boom(*args, **kwargs):
    raise ValueError("an unexpected bug")
custodian_runtime.run.observe.observe = boom
import custodian_runtime.run._full
custodian_runtime.run._full.observe = boom
from custodian_runtime.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_an_unexpected_error_is_one_line_exit_1_and_the_run_is_finished(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    llm = write_plan(tmp_path / "answer.md", THREE_WRITES)
    with held_hub(tmp_path, None) as hub:
        argv = run_argv(hub.url, llm, memory)
        argv[1:3] = ["-c", CRASH]  # the same CLI, with observe replaced by a bug
        code, out, err = finish_run(start_run(tmp_path, argv))
    assert code == 1
    assert "Traceback" not in err + out
    line = next(x for x in err.splitlines() if "internal error" in x)
    assert "ValueError: an unexpected bug" in line
    crash_file = Path(line.split("the traceback is in ")[1].split(". This is a bug")[0])
    assert crash_file.parent == memory / "crashes"
    assert "Traceback" in crash_file.read_text("utf-8")
    assert "in boom" in crash_file.read_text("utf-8")
    finished = [r for r in journal(memory) if r.kind == "finished"]
    assert [(r.data["status"], r.data["exit_code"]) for r in finished] == [("failed", 1)]


def test_custodian_debug_prints_the_traceback_too(tmp_path: Path) -> None:
    llm = write_plan(tmp_path / "answer.md", THREE_WRITES)
    with held_hub(tmp_path, None) as hub:
        argv = run_argv(hub.url, llm, tmp_path / "memory")
        argv[1:3] = ["-c", CRASH]
        code, _, err = finish_run(start_run(tmp_path, argv, CUSTODIAN_DEBUG="1"))
    assert code == 1
    assert "Traceback (most recent call last)" in err and "internal error" in err
