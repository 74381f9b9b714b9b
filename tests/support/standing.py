"""Helpers for the rules of modes and grants: in-process `custodian` calls against a real hub."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from support.runs import CANON, CliResult, plan_response, run_cli

GRANT_LINE = re.compile(r"grant-[0-9a-f]{12}\n")

# A person's PATCH of a task on the hub, made while the model is thinking; then the answer.
THINKING = """\
import json, os, subprocess, sys, urllib.request
hub, answer = sys.argv[1], sys.argv[2]
then = json.loads(open(sys.argv[3], encoding="utf-8").read())
sys.stdin.read()
if then["patch"]:
    request = urllib.request.Request(
        hub + "/tasks/" + then["patch"][0], data=json.dumps({"status": then["patch"][1]}).encode(),
        method="PATCH",
        headers={"Content-Type": "application/json", "Idempotency-Key": "a-person-" + then["key"]},
    )
    urllib.request.urlopen(request, timeout=5).read()
if then["argv"]:
    done = subprocess.run([sys.executable, "-m", "custodian_runtime", *then["argv"]],
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "CUSTODIAN_TYPED_NAMES": "1"})  # a person's shell
    sys.stderr.write(done.stdout + done.stderr)
    if done.returncode != 0:
        sys.exit(9)
sys.stdout.write(open(answer, encoding="utf-8").read())
"""


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Cli:
    """`custodian` in-process, with this test's memory directory."""
    return Cli(tmp_path, monkeypatch)


class Cli:
    """`custodian` called in-process in `tmp_path`, with the memory directory `memory`."""

    def __init__(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.tmp_path = tmp_path
        self.monkeypatch = monkeypatch
        self.memory = tmp_path / "memory"
        self.canon = CANON

    def __call__(self, *argv: str, **env: str) -> CliResult:
        """One command, with `--memory` added."""
        return run_cli(
            [*argv, "--memory", str(self.memory)], self.tmp_path, self.monkeypatch, **env
        )

    def ok(self, *argv: str, **env: str) -> CliResult:
        """One command that must exit 0."""
        done = self(*argv, **env)
        assert done.code == 0, done.stdout + done.stderr
        return done

    def issue(
        self, hub_url: str | None, *extra: str, op: str = "set_task_status", **env: str
    ) -> str:
        """`grants issue` by ana; the grant's id."""
        hub = () if hub_url is None else ("--hub", hub_url)
        done = self.ok(
            "grants", "issue", "--domain", "website", "--operation", op, *hub,
            "--by", "ana", "--reason", "routine blocks", *extra, **env,
        )  # fmt: skip
        return done.stdout.strip()

    def refused(self, *extra: str, op: str = "set_task_status", hub_url: str = "") -> CliResult:
        """`grants issue` that must exit 2, with nothing journaled."""
        hub = ("--hub", hub_url) if hub_url else ()
        before = self.grants()
        done = self(
            "grants", "issue", "--domain", "website", "--operation", op, *hub,
            "--by", "ana", "--reason", "x", *extra,
        )  # fmt: skip
        assert done.code == 2, done.stdout + done.stderr
        assert done.stdout == ""
        assert self.grants() == before
        return done

    def grants(self, domain: str | None = None) -> list[dict[str, Any]]:
        """`grants list --json`."""
        where = () if domain is None else ("--domain", domain)
        return list(self.ok("grants", "list", "--json", *where).json())

    def set_mode(
        self, op: str, mode: str, by: str = "ana", reason: str = "onboarding"
    ) -> CliResult:
        """`policy set` in the website domain."""
        return self(
            "policy", "set", "--domain", "website", "--operation", op, "--mode", mode,
            "--by", by, "--reason", reason,
        )  # fmt: skip

    def modes(self) -> dict[str, str]:
        """`policy show --json`'s modes."""
        shown = self.ok("policy", "show", "--domain", "website", "--json").json()
        return dict(shown["modes"])

    def run(
        self, hub_url: str, *items: dict[str, Any], llm: str | None = None, domain: str = "website",
        plan: dict[str, Any] | None = None,
    ) -> dict[str, Any]:  # fmt: skip
        """One forced run whose model proposes `items`; its `--json` summary."""
        if llm is None:
            llm = self.answer({"observations": ["Tasks wait on others."], "proposals": list(items),
                               **(plan or {})})  # fmt: skip
        done = self.ok(
            "run", "--domain", domain, "--hub", hub_url, "--llm", llm, "--canon", str(self.canon),
            "--json", "--force",
        )  # fmt: skip
        return dict(done.json())

    def answer(self, plan: dict[str, Any]) -> str:
        """A `file:` model that answers `plan`."""
        path = self.tmp_path / "answer.md"
        path.write_text(plan_response(plan), encoding="utf-8")
        return f"file:{path}"

    def thinking(
        self, hub_url: str, plan: dict[str, Any], patch: tuple[str, str] | None = None,
        argv: list[str] | None = None,
    ) -> str:  # fmt: skip
        """A `cmd:` model that, thinking, has a person patch a task or run `custodian argv`."""
        script = self.tmp_path / "thinking.py"
        script.write_text(THINKING, encoding="utf-8")
        answer = self.answer(plan).removeprefix("file:")
        then = self.tmp_path / "then.json"
        then.write_text(json.dumps({"patch": patch, "argv": argv, "key": "k"}), encoding="utf-8")
        return f"cmd:{sys.executable} {script} {hub_url} {answer} {then}"


def status(task: str, to: str = "blocked") -> dict[str, Any]:
    """A `set_task_status` proposal."""
    return {
        "operation": "set_task_status",
        "params": {"task_id": task, "status": to},
        "rationale": "the vendor has not answered",
    }


def note_of(summary: dict[str, Any]) -> str:
    """The run's session note."""
    return Path(summary["note"]).read_text("utf-8")
