"""The embedded hub runs in the caller's process: no socket, no port, no server thread.

A run and an approval against `--hub embedded` go through with `socket.socket` made to fail, and
the only threads they start are the client's own per-request deadline workers (which it starts for
any hub), all finished by the end.
"""

from __future__ import annotations

import json
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from support.runs import REPO, CliResult, run_cli

DEMO_RUN = [
    "run",
    "--domain",
    "website",
    "--hub",
    "embedded",
    "--llm",
    "file:demo/website-answer.md",
    "--force",
    "--json",
]
# The client runs each request under a whole deadline in a worker of this name, for any hub.
CLIENT_WORKER = "custodian-http"


class _NoSocket(socket.socket):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise AssertionError("the embedded hub opened a socket")


def _guarded(monkeypatch: pytest.MonkeyPatch) -> list[threading.Thread]:
    """Fail every new socket; record every thread started from now on."""
    started: list[threading.Thread] = []
    real_start = threading.Thread.start

    def start(thread: threading.Thread) -> None:
        started.append(thread)
        real_start(thread)

    monkeypatch.setattr(threading.Thread, "start", start)
    monkeypatch.setattr(socket, "socket", _NoSocket)
    return started


def _cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, argv: list[str]) -> CliResult:
    env = {
        "CUSTODIAN_MEMORY_DIR": str(tmp_path / "memory"),
        "CUSTODIAN_EMBEDDED_DIR": str(tmp_path / "hub"),
        # An environment proxy must not pull the in-process hub onto the network.
        "HTTP_PROXY": "http://127.0.0.1:9",
        "ALL_PROXY": "http://127.0.0.1:9",
    }
    return run_cli(argv, REPO, monkeypatch, **env)


def _settle(started: list[threading.Thread]) -> None:
    for thread in started:
        thread.join(timeout=5)


def test_an_embedded_run_opens_no_socket_and_starts_no_hub_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = threading.active_count()
    started = _guarded(monkeypatch)
    ran = _cli(tmp_path, monkeypatch, DEMO_RUN)
    assert ran.code == 0, ran.stderr
    summary = ran.json()
    assert summary["hub"] == "embedded" and summary["counts"]["executed"] >= 1
    assert started, "the client's requests ran"
    assert {t.name for t in started} == {CLIENT_WORKER}
    _settle(started)
    assert threading.active_count() == before
    assert (tmp_path / "hub" / "hub.sqlite3").is_file()


def test_an_embedded_approval_opens_no_socket_and_starts_no_hub_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    queued = _cli(tmp_path, monkeypatch, DEMO_RUN).json()["queued"]
    item = next(q["approval_id"] for q in queued if q["operation"] == "create_task")
    before = threading.active_count()
    started = _guarded(monkeypatch)
    argv = ["approvals", "approve", item, "--by", "ana", "--hub", "embedded"]
    approved = _cli(tmp_path, monkeypatch, argv)
    assert approved.code == 0, approved.stdout + approved.stderr
    assert {t.name for t in started} == {CLIENT_WORKER}
    _settle(started)
    assert threading.active_count() == before
    listed = _cli(tmp_path, monkeypatch, ["approvals", "list", "--json"])
    assert {i["id"]: i["status"] for i in json.loads(listed.stdout)}[item] == "executed"


def test_the_guard_catches_a_hub_on_a_port(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from custodian_hub import ReferenceHub

    _guarded(monkeypatch)
    with pytest.raises(AssertionError, match="opened a socket"):
        ReferenceHub(tmp_path / "hub.sqlite3").start()


def test_an_item_queued_on_the_embedded_hub_is_bound_to_its_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    queued = _cli(tmp_path, monkeypatch, DEMO_RUN).json()["queued"]
    item = next(q["approval_id"] for q in queued if q["operation"] == "create_task")
    bound_to = f"embedded:{(tmp_path / 'hub' / 'hub.sqlite3').resolve()}"
    stored = tmp_path / "memory" / "approvals" / f"{item}.json"
    assert json.loads(stored.read_text(encoding="utf-8"))["hub_at"] == bound_to
    argv = ["approvals", "approve", item, "--by", "ana", "--hub", "embedded"]
    monkeypatch.setenv("CUSTODIAN_EMBEDDED_DIR", str(tmp_path / "other-hub"))
    elsewhere = run_cli(
        argv, REPO, monkeypatch, **{"CUSTODIAN_MEMORY_DIR": str(tmp_path / "memory")}
    )
    assert elsewhere.code != 0
    said = elsewhere.stdout + elsewhere.stderr
    assert "it was proposed on hub hub_id:" in said
    assert f"CUSTODIAN_EMBEDDED_DIR={(tmp_path / 'hub').resolve()} custodian" in said
    assert not (tmp_path / "other-hub" / "hub.sqlite3").exists(), "refused before the hub opened"
    assert _cli(tmp_path, monkeypatch, argv).code == 0


def test_a_write_to_a_locked_embedded_hub_ends_at_the_hub_deadline(tmp_path: Path) -> None:
    # The embedded hub waits up to 30 s for SQLite's lock; the client's whole-request deadline
    # (STATE_HUB_MAX_TOTAL_S) must end the write long before that, as it does for any hub.
    from support.spine import clean_env

    env = clean_env(
        CUSTODIAN_MEMORY_DIR=str(tmp_path / "memory"),
        CUSTODIAN_EMBEDDED_DIR=str(tmp_path / "hub"),
        STATE_HUB_TIMEOUT_S="1",
        STATE_HUB_MAX_TOTAL_S="2",
    )
    argv = [sys.executable, "-m", "custodian_runtime", *DEMO_RUN]
    seeded = subprocess.run([*argv, "--dry-run"], cwd=REPO, env=env, capture_output=True)
    assert seeded.returncode == 0, seeded.stderr
    holder = sqlite3.connect(tmp_path / "hub" / "hub.sqlite3", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another writer holds the database
    try:
        started = time.monotonic()
        ran = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
        took = time.monotonic() - started
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    summary = json.loads(ran.stdout)
    # No authorized write got an answer in time: each is `unknown`, for the next run to settle.
    assert ran.returncode == 5, ran.stderr
    assert summary["counts"]["unknown"] >= 1 and summary["counts"]["executed"] == 0
    assert took < 20, f"the write waited {took:.1f} s, past its 2 s deadline"
