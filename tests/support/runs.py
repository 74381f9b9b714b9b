"""Shared helpers for end-to-end run tests: a small seeded hub and an in-process CLI call."""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Iterator
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from custodian_hub import ReferenceHub, load_seed
from custodian_runtime.cli import main
from custodian_runtime.run import RunResult, run
from custodian_runtime.settings import load_settings
from support.paths import REPO

CANON = REPO / "canon"


def _ts(days_ago: float) -> str:
    moment = datetime.now(UTC) - timedelta(days=days_ago)
    return moment.replace(microsecond=0).isoformat().replace("+00:00", "Z")


def small_dataset() -> dict[str, Any]:
    """Two domains; `website` has a stale task, a blocked task without a flag, one with a flag."""
    ws = [
        ("web-ws-1", "website", "Relaunch the marketing site", "ana"),
        ("web-ws-2", "website", "Content migration", "ben"),
        ("plat-ws-1", "platform", "Move CI to the new runners", "cy"),
    ]
    tasks = [
        ("web-t-1", "web-ws-1", "Finish the pricing page", "in_progress", 30),
        ("web-t-2", "web-ws-1", "Get legal sign-off on cookies banner", "blocked", 9),
        ("web-t-3", "web-ws-1", "Write launch announcement", "todo", 3),
        ("web-t-4", "web-ws-1", "Deploy the new CDN config", "in_progress", 2),
        ("web-t-5", "web-ws-2", "Migrate blog posts", "todo", 5),
        ("web-t-6", "web-ws-2", "Fix broken image links", "blocked", 6),
        ("plat-t-1", "platform", "Provision runners", "todo", 4),
    ]
    return {
        "workstreams": [
            {
                "id": i,
                "domain": d,
                "title": t,
                "status": "active",
                "owner": o,
                "created_at": _ts(60),
                "updated_at": _ts(2),
            }
            for i, d, t, o in ws
        ],
        "tasks": [
            {
                "id": i,
                "workstream_id": w if w != "platform" else "plat-ws-1",
                "title": t,
                "description": "",
                "status": s,
                # Created as the hub shows it: no one's change since, to defer to.
                "created_at": _ts(age),
                "updated_at": _ts(age),
            }
            for i, w, t, s, age in tasks
        ],
        "decisions": [
            {
                "id": "dec-1",
                "domain": "website",
                "workstream_id": "web-ws-1",
                "title": "Which analytics vendor?",
                "context": "",
                "options": ["A", "B"],
                "status": "open",
                "created_at": _ts(8),
            }
        ],
        "events": [
            {
                "id": "ev-1",
                "workstream_id": "web-ws-1",
                "task_id": "web-t-4",
                "event_type": "milestone",
                "summary": "CDN config deployed to production and verified.",
                "source": "ana",
                "created_at": _ts(1),
            }
        ],
        "flags": [
            {
                "id": "fl-1",
                "workstream_id": "web-ws-2",
                "task_id": "web-t-6",
                "note": "Image CDN credentials missing",
                "status": "open",
                "raised_by": "ben",
                "created_at": _ts(5),
            }
        ],
    }


@pytest.fixture
def small_hub(tmp_path: Path) -> Any:
    """A reference hub on loopback seeded with `small_dataset()`."""
    db = tmp_path / "hub.sqlite3"
    load_seed(db, small_dataset())
    with ReferenceHub(db) as hub:
        yield hub


@pytest.fixture
def small_hub_with_token(tmp_path: Path) -> Any:
    """The same hub, requiring `Authorization: Bearer cronjob-test-token`."""
    db = tmp_path / "hub-token.sqlite3"
    load_seed(db, small_dataset())
    with ReferenceHub(db, token="cronjob-test-token") as hub:
        yield hub


@dataclass
class CliResult:
    """What one in-process `custodian` call returned and printed."""

    code: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        """The `--json` summary."""
        return json.loads(self.stdout)

    def ok(self) -> CliResult:
        """This result, which must be exit 0 (else the test fails showing stderr)."""
        assert self.code == 0, self.stderr
        return self


def run_cli(argv: list[str], cwd: Path, monkeypatch: pytest.MonkeyPatch, **env: str) -> CliResult:
    """Call `custodian` in-process in `cwd` with only the given CUSTODIAN/STATE_HUB variables."""
    monkeypatch.chdir(cwd)
    for name in (
        "STATE_HUB_URL",
        "STATE_HUB_TOKEN",
        "CUSTODIAN_LLM",
        "CUSTODIAN_MODEL",
        "CUSTODIAN_MEMORY_DIR",
        "CUSTODIAN_CANON_DIR",
        "CUSTODIAN_DOMAIN",
    ):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(argv)
    return CliResult(code, out.getvalue(), err.getvalue())


def cli_io(*argv: str) -> tuple[int, str, str]:
    """`custodian` in-process, with the environment and working directory as they are: its exit
    code, stdout and stderr (with `quiet_env`, none of a person's own settings reach it)."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def quiet_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """`tmp_path` as the working directory, with no hub, domain, memory directory, seal key or
    embedded hub directory taken from the environment."""
    for name in ("STATE_HUB_URL", "CUSTODIAN_DOMAIN", "CUSTODIAN_MEMORY_DIR", "CUSTODIAN_SEAL_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("CUSTODIAN_EMBEDDED_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    yield tmp_path


def hub_get(hub: ReferenceHub, path: str, token: str | None = None) -> Any:
    """GET a hub path and return its JSON."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    response = httpx.get(hub.url + path, headers=headers, timeout=5)
    response.raise_for_status()
    return response.json()


def tree_digest(root: Path) -> str:
    """One digest of every file's path and bytes under `root` (missing root: empty digest)."""
    h = hashlib.sha256()
    if root.exists():
        for path in sorted(p for p in root.rglob("*") if p.is_file()):
            h.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def plan_response(plan: dict[str, Any], prose: str = "Looked at the website domain.") -> str:
    """A model answer: prose, then exactly one json block."""
    return f"{prose}\n\n```json\n{json.dumps(plan, indent=2)}\n```\n"


def run_args(
    hub_url: str, llm: str, memory: Path, *extra: str, domain: str = "website", canon: Path = CANON
) -> list[str]:
    """`custodian run`'s words for `domain` on `hub_url` with the model `llm`, then `extra`."""
    argv = ["run", "--domain", domain, "--hub", hub_url, "--llm", llm]
    return [*argv, "--memory", str(memory), "--canon", str(canon), *extra]


def run_plan(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    hub_url: str,
    plan: dict[str, Any] | str,
    *extra: str,
    domain: str = "website",
    canon: Path = CANON,
    **env: str,
) -> CliResult:
    """`custodian run` in-process in `tmp_path`, its memory `tmp_path/memory`, with a `file:`
    model whose answer holds `plan` (or is `plan`, given as text); `extra` flags follow."""
    answer = tmp_path / "answer.md"
    answer.write_text(plan if isinstance(plan, str) else plan_response(plan), encoding="utf-8")
    argv = run_args(
        hub_url, f"file:{answer}", tmp_path / "memory", *extra, domain=domain, canon=canon
    )
    return run_cli(argv, tmp_path, monkeypatch, **env)


def run_in_process(tmp_path: Path, hub: ReferenceHub, llm: str) -> RunResult:
    """A forced run of `website` through `run()` itself, its memory `tmp_path/memory`, its clock
    the second it began."""
    flags = {"domain": "website", "hub": hub.url, "llm": llm, "force": True}
    flags |= {"memory": str(tmp_path / "memory"), "canon": str(CANON)}
    at = datetime.now(UTC).replace(microsecond=0)
    return run(load_settings(flags, {}, tmp_path), clock=lambda: at, stderr=io.StringIO())
