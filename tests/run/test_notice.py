"""A person is told when items wait: a run sends one notice to a webhook (the JSON Slack and
Teams take) when its domain's waiting items change, and once when none wait; journaled before
it is sent, receipted after, never twice for one set; a refused send is told again."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from custodian_hub import ReferenceHub
from custodian_runtime.clock import utc_now
from custodian_runtime.core.approvals.notice import NONE_WAIT, digest_of, notice_for
from custodian_runtime.journal.person.queue import ApprovalStore
from custodian_runtime.journal.store import JournalStore
from support.review import queue_two
from support.runs import run_args, run_cli
from support.spine import journal

REVIEW = "https://review.example.org"


class Receiver(ThreadingHTTPServer):
    """A local incoming webhook: keeps each POST's JSON, answers with `status`."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Hook)
        self.bodies: list[dict[str, Any]] = []
        self.status = 200

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/services/T0/B0/secret-part"


class _Hook(BaseHTTPRequestHandler):
    server: Receiver

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        assert self.headers.get("Content-Type") == "application/json"
        self.server.bodies.append(json.loads(self.rfile.read(length)))
        self.send_response(self.server.status)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")


@contextmanager
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def _forced_run(tmp_path: Path, mp: pytest.MonkeyPatch, hub: ReferenceHub) -> None:
    run_cli(run_args(hub.url, "file:answer.md", tmp_path / "memory", "--force"), tmp_path, mp).ok()


def _notices(memory: Path) -> list[tuple[str, dict[str, Any]]]:
    return [(r.kind, dict(r.data)) for r in journal(memory) if r.kind.startswith("notice")]


def test_one_notice_per_waiting_set_with_a_link_and_once_when_none_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    with receiver() as hook:
        monkeypatch.setenv("CUSTODIAN_NOTIFY_URL", hook.url)
        monkeypatch.setenv("CUSTODIAN_REVIEW_URL", REVIEW)
        queued = queue_two(tmp_path, monkeypatch, small_hub)
        assert hook.bodies == [
            {
                "text": "2 items wait for a decision in website (create_task, resolve_decision). "
                f"Review: {REVIEW}/?domain=website"
            }
        ]
        _forced_run(tmp_path, monkeypatch, small_hub)  # the same two wait: nothing is said again
        assert len(hook.bodies) == 1
        memory = ["--memory", str(queued.memory)]
        for approval_id in (queued.create_id, queued.resolve_id):
            done = run_cli(
                ["approvals", "reject", approval_id, "--by", "ana", "--reason", "No.", *memory],
                tmp_path, monkeypatch,
            )  # fmt: skip
            assert done.code == 0, done.stderr
        (tmp_path / "answer.md").write_text("Nothing to do.\n\n```json\n{}\n```\n")
        _forced_run(tmp_path, monkeypatch, small_hub)
        _forced_run(tmp_path, monkeypatch, small_hub)
    assert hook.bodies[1:] == [
        {"text": f"Nothing waits for a decision in website now. Review: {REVIEW}/?domain=website"}
    ]
    said = _notices(queued.memory)
    assert [k for k, _ in said] == ["notice", "notice_receipt"] * 2
    assert said[0][1] == {
        "digest": digest_of(ApprovalStore(queued.memory).view("website", utc_now()).items),
        "waiting": 2,
        "to": "127.0.0.1",
    }
    assert said[1][1]["outcome"] == "sent" and said[1][1]["status"] == 200
    assert said[2][1]["digest"] == NONE_WAIT and said[3][1]["outcome"] == "sent"
    # The webhook's secret path is never journaled.
    assert "secret-part" not in (queued.memory / "journal" / "website.jsonl").read_text()
    assert JournalStore(queued.memory).open("website").checkpoint.notice == NONE_WAIT
    inspected = run_cli(["inspect", "--domain", "website", *memory], tmp_path, monkeypatch)
    assert inspected.code == 0, inspected.stdout + inspected.stderr


def test_a_refused_notice_is_receipted_failed_and_told_again_by_the_next_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    with receiver() as hook:
        hook.status = 500
        monkeypatch.setenv("CUSTODIAN_NOTIFY_URL", hook.url)
        queued = queue_two(tmp_path, monkeypatch, small_hub)
        hook.status = 204
        _forced_run(tmp_path, monkeypatch, small_hub)
        _forced_run(tmp_path, monkeypatch, small_hub)
    assert len(hook.bodies) == 2 and hook.bodies[0] == hook.bodies[1]
    assert "custodian approvals list --domain website" in hook.bodies[0]["text"]
    outcomes = [d.get("outcome") for k, d in _notices(queued.memory) if k == "notice_receipt"]
    assert outcomes == ["failed", "sent"]


def test_a_webhook_that_cannot_be_reached_never_fails_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    with receiver() as hook:
        gone = hook.url
    monkeypatch.setenv("CUSTODIAN_NOTIFY_URL", gone)
    queued = queue_two(tmp_path, monkeypatch, small_hub)  # asserts the run's exit code 0
    receipts = [d for k, d in _notices(queued.memory) if k == "notice_receipt"]
    assert [r["outcome"] for r in receipts] == ["failed"]
    assert "ConnectError" in receipts[0]["error"]


def test_an_empty_queue_that_was_never_announced_is_not_announced_empty() -> None:
    assert notice_for("website", [], "", None) is None
    assert notice_for("website", [], NONE_WAIT, None) is None
