"""Realistic journals for the journal tests: runs written through any object with
`append(kind, data)`, in memory or on disk."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from custodian_runtime.core.digest import sha256_hex
from custodian_runtime.core.fold import api as core_journal
from custodian_runtime.core.plan.extract import fingerprint as real_fingerprint

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
DOMAIN = "website"


class StepClock:
    """A clock that moves one second on every read."""

    def __init__(self, start: datetime = T0, step: timedelta = timedelta(seconds=1)) -> None:
        self.now = start
        self.step = step

    def __call__(self) -> datetime:
        self.now += self.step
        return self.now


class Appender(Protocol):
    def append(self, kind: str, data: dict[str, Any]) -> core_journal.Record: ...


class MemoryWriter:
    """Appends to a shared in-memory list of records, the way the disk writer would."""

    def __init__(self, records: list[core_journal.Record], run_id: str, clock: StepClock) -> None:
        self.records, self.run_id, self.clock = records, run_id, clock

    def append(self, kind: str, data: dict[str, Any]) -> core_journal.Record:
        prev = self.records[-1] if self.records else None
        record = core_journal.make_record(prev, self.run_id, DOMAIN, kind, self.clock(), data)
        self.records.append(record)
        return record


ITEMS = [
    ("add_progress_event", "ws-site", {"workstream_id": "ws-site", "summary": "Homepage shipped"}),
    ("create_task", "ws-site", {"workstream_id": "ws-site", "title": "Write the launch post"}),
    ("set_task_status", "t-9", {"task_id": "t-9", "status": "cancelled"}),
]
OUTCOMES = [
    ("execute", "sanctioned write within the per-run caps"),
    ("queue", "create_task needs a person's approval"),
    ("deny", "task t-9 is not in the observed state"),
]


def fingerprint(index: int) -> str:
    return sha256_hex(f"item-{index}")


def key_of(run_id: str, index: int) -> str:
    return f"custodian-{run_id}-{index}"


def write_opening(w: Appender, state_digest: str = "c" * 64) -> None:
    """run_started, observed, prompt, model_response, plan and one ruling per item."""
    w.append("run_started", {
        "settings_digest": "a" * 64, "constitution_digest": "b" * 64, "model_spec": "offline",
        "hub_url": "http://127.0.0.1:8765", "pid": 4242, "host": "runner-1", "dry_run": False,
    })  # fmt: skip
    summary = {"domain": DOMAIN, "generated_at": "2025-03-01T09:00:00Z", "workstreams": []}
    overview = {"generated_at": "2025-03-01T09:00:00Z", "domains": [{"domain": DOMAIN}]}
    w.append("observed", {"state_digest": state_digest, "overview": overview, "summary": summary})
    w.append(
        "prompt", {"system": "You are Custodian.", "user": "State: …", "estimated_tokens": 1200}
    )
    w.append("model_response", {
        "text": "```json\n{\"actions\": []}\n```", "provider": "offline", "model": "rules-1",
        "usage": {"input_tokens": 1200, "output_tokens": 80, "cost_usd": 0.0}, "request_id": None,
    })  # fmt: skip
    w.append(
        "plan", {"status": "accepted", "reason": None, "observations": ["quiet week"], "items": 3}
    )
    for index, ((operation, target, params), (outcome, reason)) in enumerate(
        zip(ITEMS, OUTCOMES, strict=True)
    ):
        w.append("ruling", {
            "index": index, "operation": operation, "target": target, "params": params,
            "fingerprint": fingerprint(index), "outcome": outcome, "reason": reason,
        })  # fmt: skip


def write_authorized(w: Appender, run_id: str, index: int = 0) -> None:
    operation, _, params = ITEMS[index]
    w.append("authorized", {
        "index": index, "operation": operation, "params": params, "fingerprint": fingerprint(index),
        "idempotency_key": key_of(run_id, index), "by": "policy",
    })  # fmt: skip


def write_receipt(w: Appender, index: int, hub_id: str, **extra: Any) -> None:
    w.append("receipt", {
        "index": index, "status_code": 201, "hub_id": hub_id, "replayed": False,
        "response_sha256": "d" * 64, "attempts": 1, **extra,
    })  # fmt: skip


def write_closing(w: Appender, counts: dict[str, int] | None = None) -> None:
    w.append("queued", {"index": 1, "approval_id": "apr-7", "fingerprint": fingerprint(1)})
    w.append("note_written", {"path": "2025-03-01-website.md", "sha256": "e" * 64})
    counts = counts or {"executed": 1, "queued": 1, "denied": 1, "failed": 0}
    w.append("finished", {"status": "completed", "exit_code": 0, "counts": counts})


def write_completed_run(w: Appender, run_id: str, state_digest: str = "c" * 64) -> None:
    """A whole run: one write executed and receipted, one queued, one denied."""
    write_opening(w, state_digest)
    write_authorized(w, run_id)
    w.append("dispatched", {"index": 0, "idempotency_key": key_of(run_id, 0)})
    write_receipt(w, 0, "ev-101")
    write_closing(w)


def write_interrupted_run(w: Appender, run_id: str, dispatched: bool = True) -> None:
    """A run killed after authorizing (and maybe dispatching) its write: no receipt, no finished."""
    write_opening(w)
    write_authorized(w, run_id)
    if dispatched:
        w.append("dispatched", {"index": 0, "idempotency_key": key_of(run_id, 0)})


def write_reconciling_run(w: Appender, pending: Sequence[core_journal.PendingWrite]) -> None:
    """The next run: re-sends each unfinished write with its original key, then runs normally."""
    w.append("run_started", {"model_spec": "offline", "pid": 4243, "host": "runner-1"})
    for p in pending:
        w.append("reconciled", {
            "run_id_of_the_interrupted_run": p.run_id, "index": p.index,
            "idempotency_key": p.idempotency_key,
        })  # fmt: skip
        marker = {"reconciles": p.run_id}
        w.append("dispatched", {"index": p.index, "idempotency_key": p.idempotency_key, **marker})
        write_receipt(w, p.index, "ev-102", **marker)
    w.append("finished", {"status": "skipped", "exit_code": 0, "counts": {}})


def build(*runs: tuple[str, Any]) -> list[core_journal.Record]:
    """Records of several runs written one after the other with the given builders."""
    records: list[core_journal.Record] = []
    clock = StepClock()
    for run_id, builder in runs:
        builder(MemoryWriter(records, run_id, clock), run_id)
    return records


def completed(w: Appender, run_id: str) -> None:
    write_completed_run(w, run_id)


def interrupted(w: Appender, run_id: str) -> None:
    write_interrupted_run(w, run_id)


def messages(problems: Sequence[core_journal.Problem]) -> list[str]:
    return [str(p) for p in problems]


# --- records and the chain -------------------------------------------------------------------


AUTH0 = {"index": 0, "operation": "add_progress_event", "params": ITEMS[0][2],
         "fingerprint": fingerprint(0), "idempotency_key": "k0", "by": "policy"}  # fmt: skip
DISP0 = {"index": 0, "idempotency_key": "k0"}
RCPT0 = {"index": 0, "status_code": 201, "hub_id": "ev-1", "replayed": False,
         "response_sha256": "d" * 64, "attempts": 1}  # fmt: skip


def _approval_ruling() -> dict[str, Any]:
    operation, target, params = ITEMS[0]
    return {"index": 0, "operation": operation, "target": target, "params": params,
            "fingerprint": real_fingerprint(operation, params), "outcome": "execute",
            "reason": "approved by ana", "approval_id": "apr-7",
            "precondition": {"workstream": {"id": "ws-site", "status": "active"}}}  # fmt: skip


APPROVAL_RULING = _approval_ruling()
APPROVAL_AUTH = {**AUTH0, "fingerprint": APPROVAL_RULING["fingerprint"], "by": "person:ana"}
