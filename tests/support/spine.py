"""Helpers for the authority-spine tests: a hub that can hold a write, runs as real processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from custodian_hub import ReferenceHub, load_seed
from custodian_runtime.core.fold.api import Record
from custodian_runtime.journal.store import JournalStore
from support.runs import hub_get, plan_response, run_args, small_dataset

HOLD_TIMEOUT_S = 20.0

# The three sanctioned writes, in plan order: an event, a status, a flag.
THREE_WRITES: dict[str, Any] = {
    "observations": ["web-t-4 was deployed and verified (ev-1); web-t-2 is blocked, unflagged."],
    "progress_events": [
        {
            "workstream_id": "web-ws-1",
            "task_id": "web-t-4",
            "event_type": "observation",
            "rests_on": ["web-t-4"],
            "summary": "CDN config verified in ev-1; marking the task done.",
        }
    ],
    "tasks_to_update": [
        {"task_id": "web-t-4", "status": "done", "evidence": ["ev-1"], "reason": "ev-1"}
    ],
    "tasks_to_flag": [{"task_id": "web-t-2", "note": "Blocked 9 days with no flag."}],
}
WRITE_OPERATIONS = ("add_progress_event", "update_task_status", "flag_for_human")


@dataclass
class WriteHold:
    """An `on_write` hook that holds write number `nth` at `phase` until the test releases it.

    Writes are numbered by their `before_commit` call; the client sends one write at a time, so
    the `after_commit` that follows belongs to the same write. Released with `abort=True`, the
    hook raises: the hub rolls the transaction back (before commit) and drops the connection.
    """

    nth: int
    phase: str
    count: int = 0
    reached: threading.Event = field(default_factory=threading.Event)
    released: threading.Event = field(default_factory=threading.Event)
    abort: bool = False
    seen: list[tuple[str, str, str]] = field(default_factory=list)

    def __call__(self, phase: str, method: str, path: str) -> None:
        if phase == "before_commit":
            self.count += 1
        self.seen.append((phase, method, path))
        if self.count != self.nth or phase != self.phase or self.reached.is_set():
            return
        self.reached.set()
        self.released.wait(HOLD_TIMEOUT_S)
        if self.abort:
            raise RuntimeError("the test aborted this write")

    def release(self, *, abort: bool = False) -> None:
        """Let the held write go on (or fail, with `abort`)."""
        self.abort = abort
        self.released.set()


@contextmanager
def held_hub(tmp_path: Path, hold: WriteHold | None) -> Iterator[ReferenceHub]:
    """A reference hub seeded with `small_dataset()` whose writes pass through `hold`."""
    db = tmp_path / "hub.sqlite3"
    load_seed(db, small_dataset())
    hub = ReferenceHub(db, on_write=hold)
    with hub:
        try:
            yield hub
        finally:
            if hold is not None:
                hold.release(abort=True)  # never leave a server thread parked


def clean_env(**extra: str) -> dict[str, str]:
    """The process environment without any CUSTODIAN_* or STATE_HUB_* setting but the suite's
    CUSTODIAN_TYPED_NAMES (tests/conftest.py), plus `extra`."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k == "CUSTODIAN_TYPED_NAMES"
        or not k.startswith(("CUSTODIAN_", "STATE_HUB_", "ANTHROPIC_", "OPENAI_"))
    }
    env.update(extra)
    return env


def run_argv(hub_url: str, llm: str, memory: Path, *extra: str) -> list[str]:
    """`python -m custodian_runtime run` for the website domain with the repository's canon."""
    return [
        sys.executable,
        "-m",
        "custodian_runtime",
        *run_args(hub_url, llm, memory, "--json", *extra),
    ]


def write_plan(path: Path, plan: dict[str, Any]) -> str:
    """Write a model answer holding `plan` and return the `file:` model spec for it."""
    path.write_text(plan_response(plan), encoding="utf-8")
    return f"file:{path}"


def start_run(cwd: Path, argv: list[str], **env: str) -> subprocess.Popen[str]:
    """Start `custodian run` as a child process with a clean environment."""
    return subprocess.Popen(
        argv,
        cwd=cwd,
        env=clean_env(**env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(proc: subprocess.Popen[str], timeout: float = 30.0) -> tuple[int, str, str]:
    """Wait for the child; return (exit code, stdout, stderr)."""
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out, err


def custodian_cli(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """Run one `custodian` command as a child process."""
    return subprocess.run(
        [sys.executable, "-m", "custodian_runtime", *args],
        cwd=cwd,
        env=clean_env(**env),
        capture_output=True,
        text=True,
        timeout=60,
    )


def journal(memory: Path, domain: str = "website") -> tuple[Record, ...]:
    """Every record of the domain's journal (read-only)."""
    return JournalStore(memory).scan(domain).records


def of_run(records: tuple[Record, ...], run_id: str, kind: str | None = None) -> list[Record]:
    """The records of one run, optionally of one kind."""
    return [r for r in records if r.run_id == run_id and (kind is None or r.kind == kind)]


def custodian_events(hub: ReferenceHub) -> list[dict[str, Any]]:
    """Events in the website domain written by custodian."""
    events = hub_get(hub, "/events?domain=website&limit=1000")["events"]
    return [e for e in events if e["source"] == "custodian"]


def custodian_flags(hub: ReferenceHub, task_id: str) -> list[dict[str, Any]]:
    """Flags (any status) on `task_id` raised by custodian."""
    flags = hub_get(hub, "/flags?domain=website")["flags"]
    return [f for f in flags if f["task_id"] == task_id and f["raised_by"] == "custodian"]


def kill_when_held(cwd: Path, argv: list[str], hold: WriteHold, never: str, **env: str) -> None:
    """Start `argv` in `cwd` and SIGKILL it once it reaches the write `hold` holds on the hub
    (failing with `never` if it does not); the hub still holds that write."""
    proc = start_run(cwd, argv, **env)
    try:
        assert hold.reached.wait(HOLD_TIMEOUT_S), never
    finally:
        proc.send_signal(signal.SIGKILL)
        finish(proc)
