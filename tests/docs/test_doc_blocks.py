"""Every ```console block in README.md and docs/*.md runs, offline, and prints what it shows.

The convention: a block fenced as `console` is a shell session that runs offline, and this test
runs it; a block that needs a network, a key or a cluster is fenced as `sh` and is not run.
In a console block:

- a line starting with `$ ` is a command (a trailing `\\` continues it on the next line);
- the lines after it are what it prints, stdout and stderr together;
- `...` stands for any text within a line, and a line that is only `...` for any lines;
- `[exit N]` after the output says the command exits N; without it, it must exit 0.

The blocks of one file run in order in one fresh directory holding a copy of `canon/`, the
recorded answers (`demo/`) and `.venv` (this environment's), with no CUSTODIAN_* or STATE_HUB_*
variable set; that directory's path prints as `.`.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from support.paths import REPO

DOCUMENTS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
FENCE = re.compile(r"^```console[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
EXIT = re.compile(r"^\[exit (\d+)\]$")


@dataclass(frozen=True)
class Step:
    """One command of a console block, with what it should print and its exit code."""

    command: str
    expected: tuple[str, ...]
    exit_code: int
    line: int


def steps(text: str) -> list[Step]:
    """The commands of every console block in `text`, in order."""
    found = []
    for block in FENCE.finditer(text):
        start = text.count("\n", 0, block.start(1)) + 1
        found += _block_steps(block.group(1).splitlines(), start)
    return found


def _block_steps(lines: list[str], start: int) -> list[Step]:
    found: list[Step] = []
    command: list[str] = []
    expected: list[str] = []
    exit_code, line = 0, start

    def close() -> None:
        if command:
            found.append(Step("\n".join(command), tuple(expected), exit_code, line))

    for number, text in enumerate(lines, start=start):
        if text.startswith("$ "):
            close()
            command, expected, exit_code, line = [text[2:]], [], 0, number
        elif command and command[-1].endswith("\\") and not expected:
            command.append(text)
        elif EXIT.match(text):
            exit_code = int(EXIT.match(text).group(1))  # type: ignore[union-attr]
        else:
            assert command, f"line {number}: output before any `$ ` command"
            expected.append(text)
    close()
    return found


def matches(expected: tuple[str, ...], actual: list[str]) -> bool:
    """True when `actual` fits `expected`, with `...` as a wildcard (see the module's text)."""
    if not expected:
        return not actual
    head, rest = expected[0], expected[1:]
    if head == "...":
        return any(matches(rest, actual[i:]) for i in range(len(actual) + 1))
    pattern = ".*".join(re.escape(part) for part in head.split("..."))
    return (
        bool(actual) and re.fullmatch(pattern, actual[0]) is not None and matches(rest, actual[1:])
    )


def _sandbox(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    work = tmp_path / "work"
    work.mkdir()
    shutil.copytree(REPO / "canon", work / "canon")
    (work / "demo").symlink_to(REPO / "demo")
    venv = Path(sys.executable).parent.parent
    (work / ".venv").symlink_to(venv)
    base = {k: v for k, v in os.environ.items() if not k.startswith(("CUSTODIAN_", "STATE_HUB"))}
    env = {
        **base,
        "PATH": f"{venv / 'bin'}{os.pathsep}{base.get('PATH', '')}",
        "HOME": str(tmp_path),
        "COLUMNS": "100",
        "PYTHONUNBUFFERED": "1",  # stdout and stderr in the order they were written
    }
    return work, env


def _run_step(step: Step, work: Path, env: dict[str, str]) -> tuple[int, list[str]]:
    done = subprocess.run(
        ["bash", "-c", step.command],
        cwd=work,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=120,
    )
    shown = done.stdout.replace(str(work.resolve()), ".").replace(str(work), ".")
    return done.returncode, shown.splitlines()


@pytest.mark.slow  # each command is a real process: about a second of CPU each
@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_console_block_runs_and_prints_what_it_shows(document: Path, tmp_path: Path) -> None:
    found = steps(document.read_text(encoding="utf-8"))
    if not found:
        return  # nothing in this document is marked as runnable
    work, env = _sandbox(tmp_path)
    for step in found:
        code, actual = _run_step(step, work, env)
        where = f"{document.relative_to(REPO)}:{step.line} `{step.command}`"
        assert code == step.exit_code, f"{where}: exit {code}\n" + "\n".join(actual)
        assert matches(step.expected, actual), f"{where} printed:\n" + "\n".join(actual)


def test_some_document_has_a_console_block() -> None:
    assert sum(len(steps(p.read_text(encoding="utf-8"))) for p in DOCUMENTS) >= 5


def test_the_block_reader_and_the_matcher() -> None:
    text = (
        "prose\n```console\n$ custodian status\nno domain under ./memory\n[exit 8]\n"
        "$ echo a \\\n  b\na b\n```\n```sh\n$ not run\n```\n"
    )
    assert steps(text) == [
        Step("custodian status", ("no domain under ./memory",), 8, 3),
        Step("echo a \\\n  b", ("a b",), 0, 6),
    ]
    assert matches(("run ... (website): completed", "..."), ["run r1 (website): completed", "x"])
    assert matches(("a", "...", "z"), ["a", "z"]) and matches(("a", "...", "z"), ["a", "b", "z"])
    assert not matches(("a", "z"), ["a", "b", "z"])
    assert not matches(("no runs",), ["no runs in website"])
    assert not matches(("a",), [])
