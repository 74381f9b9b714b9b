"""`custodian … | head -1`: a reader that closes the pipe early ends the command quietly, exit 0.

The commands run as real processes whose stdout is a pipe with no reader left (its read end is
closed before they start), so every write to it fails as it does once `head` has exited.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from custodian_runtime.cli._run import stdout_reader_gone
from support.runs import REPO, run_cli

CUSTODIAN = Path(sys.executable).parent / "custodian"
ANSWER = REPO / "demo" / "website-answer.md"


@pytest.fixture(scope="module")
def demo_memory(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The demo's run once: a journal to inspect and a queue to list."""
    root = tmp_path_factory.mktemp("closed-pipe")
    env = {
        "CUSTODIAN_MEMORY_DIR": str(root / "memory"),
        "CUSTODIAN_EMBEDDED_DIR": str(root / "hub"),
    }
    with pytest.MonkeyPatch.context() as monkeypatch:
        argv = ["run", "--domain", "website", "--hub", "embedded", "--llm", f"file:{ANSWER}"]
        ran = run_cli(argv, REPO, monkeypatch, **env)
    assert ran.code == 0, ran.stderr
    return env


def _into_closed_pipe(
    argv: list[str], env: dict[str, str], buffered: bool = True
) -> subprocess.CompletedProcess[str]:
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        drop = ("CUSTODIAN_", "STATE_", "PYTHONUNBUFFERED")
        base = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
        if not buffered:  # every write goes out at once: the pipe breaks mid-command
            base["PYTHONUNBUFFERED"] = "1"
        return subprocess.run(
            [str(CUSTODIAN), *argv],
            cwd=REPO,
            env={**base, **env},
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
        )
    finally:
        os.close(write_end)


@pytest.mark.parametrize("buffered", [True, False], ids=["buffered", "unbuffered"])
@pytest.mark.parametrize(
    "argv",
    [
        ["approvals", "list"],
        ["approvals", "list", "--json"],
        ["inspect", "--domain", "website"],
        ["status"],
        ["--help"],
    ],
    ids=" ".join,
)
def test_a_closed_pipe_ends_the_command_quietly_with_exit_0(
    argv: list[str], buffered: bool, demo_memory: dict[str, str]
) -> None:
    done = _into_closed_pipe(argv, demo_memory, buffered)
    assert (done.returncode, done.stderr) == (0, "")
    assert not (Path(demo_memory["CUSTODIAN_MEMORY_DIR"]) / "crashes").exists()


class _Stdout:
    """A stdout whose file descriptor the test chooses (pytest's capture keeps fd 1)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def fileno(self) -> int:
        return self.fd


def test_a_closed_pipe_is_exit_0_even_for_a_command_that_fails(tmp_path: Path) -> None:
    # `status` on a memory directory with no domain says so on stdout and exits 8.
    (tmp_path / "memory").mkdir()
    done = _into_closed_pipe(["status"], {"CUSTODIAN_MEMORY_DIR": str(tmp_path / "memory")})
    assert (done.returncode, done.stderr) == (0, "")


def test_only_a_pipe_without_its_reader_counts_as_gone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    file_fd = os.open(tmp_path / "out.txt", os.O_WRONLY | os.O_CREAT)
    read_end, write_end = os.pipe()
    try:
        monkeypatch.setattr(sys, "stdout", _Stdout(file_fd))
        assert not stdout_reader_gone()  # a file: a broken pipe elsewhere stays a bug
        monkeypatch.setattr(sys, "stdout", _Stdout(write_end))
        assert not stdout_reader_gone()  # a reader is still there
        os.close(read_end)
        assert stdout_reader_gone()
        os.write(write_end, b"to /dev/null now\n")  # no EPIPE: the descriptor was swapped
    finally:
        os.close(file_fd)
        os.close(write_end)
