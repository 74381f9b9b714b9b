"""Seal key rotation without loss: CUSTODIAN_SEAL_KEY_PREVIOUS and `custodian journal reseal`.

Runs, approvals and inspect are called in-process against the reference hub on loopback; the
files they leave in memory/ are read back as they are on disk.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from test_journal_prune import _skipped_run

from custodian_hub import ReferenceHub
from custodian_runtime.core.journal.seals import SealKey, seal_record
from custodian_runtime.journal.prune import prune
from custodian_runtime.journal.snapshots import ContentStore
from custodian_runtime.journal.store import JournalStore
from support.journal import DOMAIN, StepClock
from support.runs import CliResult, run_args, run_cli, tree_digest
from support.spine import THREE_WRITES, journal, write_plan

OLD_KEY = "old-" + "a" * 28 + "-rotation-test"
NEW_KEY = "new-" + "b" * 28 + "-rotation-test"
STRANGER_KEY = "who-" + "c" * 28 + "-rotation-test"
RECORD = b"custodian journal record v1\n"
PENDING = {
    "operation": "set_task_status",
    "rationale": "The announcement waits for the launch date.",
    "params": {"task_id": "web-t-3", "status": "blocked"},
}
REJECTED = {
    "operation": "create_task",
    "rationale": "Search console reports it missing.",
    "params": {"workstream_id": "web-ws-1", "title": "Add a sitemap"},
}


def _cli(tmp_path: Path, mp: pytest.MonkeyPatch, argv: list[str], *keys: str) -> CliResult:
    for name in ("CUSTODIAN_SEAL_KEY", "CUSTODIAN_SEAL_KEY_PREVIOUS"):
        mp.delenv(name, raising=False)
    env = dict(zip(("CUSTODIAN_SEAL_KEY", "CUSTODIAN_SEAL_KEY_PREVIOUS"), keys, strict=False))
    return run_cli(argv, tmp_path, mp, **env)


def _run_with_keys(
    tmp_path: Path, mp: pytest.MonkeyPatch, hub: ReferenceHub, plan: dict[str, Any], *keys: str
) -> CliResult:
    llm = write_plan(tmp_path / "answer.md", plan)
    return _cli(
        tmp_path, mp, run_args(hub.url, llm, tmp_path / "memory", "--json", "--force"), *keys
    )


def _memory(tmp_path: Path, *args: str) -> list[str]:
    return [*args, "--memory", str(tmp_path / "memory")]


def _seal_of(key: str, record_hash: str) -> str:
    return hmac.new(key.encode(), RECORD + record_hash.encode(), hashlib.sha256).hexdigest()


def _checkpoint(tmp_path: Path) -> dict[str, Any]:
    path = tmp_path / "memory" / "journal" / "website.checkpoint.json"
    return dict(json.loads(path.read_text(encoding="utf-8")))


def _items(tmp_path: Path) -> dict[str, dict[str, Any]]:
    folder = tmp_path / "memory" / "approvals"
    return {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in folder.glob("*.json")}


def _history_under_the_old_key(
    tmp_path: Path, mp: pytest.MonkeyPatch, hub: ReferenceHub
) -> tuple[str, str]:
    """Three executed writes, one item pending and one rejected, all sealed by OLD_KEY."""
    first = _run_with_keys(
        tmp_path, mp, hub, {**THREE_WRITES, "proposals": [PENDING, REJECTED]}, OLD_KEY
    )
    assert first.code == 0, first.stderr
    queued = {q["operation"]: q["approval_id"] for q in first.json()["queued"]}
    pending, rejected = queued["set_task_status"], queued["create_task"]
    reason = ["--by", "ana", "--reason", "we have one"]
    no = _cli(tmp_path, mp, _memory(tmp_path, "approvals", "reject", rejected, *reason), OLD_KEY)
    assert no.code == 0, no.stderr + no.stdout
    return pending, rejected


def test_rotation_keeps_pending_items_rejections_and_budget_history(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    pending, rejected = _history_under_the_old_key(tmp_path, monkeypatch, small_hub)
    writes_before = _checkpoint(tmp_path)["checkpoint"]["writes"]
    assert len(writes_before) == 3  # the budget history: Custodian's own writes

    # The new key alone refuses the old seals: this is what the previous key is for.
    alone = _run_with_keys(tmp_path, monkeypatch, small_hub, {"observations": ["x"]}, NEW_KEY)
    assert alone.code == 6 and "CUSTODIAN_SEAL_KEY_PREVIOUS" in alone.stderr

    # Both keys: old seals verify, and what is written now is sealed with the new key.
    during = _run_with_keys(
        tmp_path, monkeypatch, small_hub, {"observations": ["mid"]}, NEW_KEY, OLD_KEY
    )
    assert during.code == 0, during.stderr
    for record in journal(tmp_path / "memory"):
        new_run = record.run_id == during.json()["run_id"]
        assert record.seal == _seal_of(NEW_KEY if new_run else OLD_KEY, record.hash)

    chain = [(r.seq, r.hash) for r in journal(tmp_path / "memory")]
    argv = _memory(tmp_path, "journal", "reseal")
    resealed = _cli(tmp_path, monkeypatch, argv, NEW_KEY, OLD_KEY)
    assert resealed.code == 0, resealed.stderr
    assert "website: " in resealed.stdout and "2 of 2 approval item(s) resealed" in resealed.stdout
    assert "CUSTODIAN_SEAL_KEY_PREVIOUS can be removed" in resealed.stdout
    records = journal(tmp_path / "memory")
    assert [(r.seq, r.hash) for r in records] == chain  # only seals changed: the chain holds
    assert all(r.seal == _seal_of(NEW_KEY, r.hash) for r in records)
    assert _checkpoint(tmp_path)["checkpoint"]["writes"] == writes_before

    # From now on only the new key: everything verifies, nothing was dropped.
    court = _cli(
        tmp_path, monkeypatch, _memory(tmp_path, "inspect", "--domain", "website"), NEW_KEY
    )
    assert court.code == 0, court.stdout
    assert f"seals     verified: all {len(records)} record(s) in the domain" in court.stdout
    listed = _cli(tmp_path, monkeypatch, _memory(tmp_path, "approvals", "list", "--json"), NEW_KEY)
    statuses = {i["id"]: i["status"] for i in json.loads(listed.stdout)}
    assert statuses == {pending: "pending", rejected: "rejected"}
    another_flag = {"task_id": "web-t-1", "note": "In progress for 30 days."}
    again = {
        **THREE_WRITES,
        "tasks_to_flag": [*THREE_WRITES["tasks_to_flag"], another_flag],
        "proposals": [PENDING, REJECTED],
    }
    monkeypatch.setenv("CUSTODIAN_BUDGET_FLAGS", "1")  # the flag raised under the old key counts
    after = _run_with_keys(tmp_path, monkeypatch, small_hub, again, NEW_KEY)
    assert after.code == 0, after.stderr
    summary = after.json()
    assert summary["executed"] == [] and summary["queued"] == []
    reasons = [d["reason"] for d in summary["denied"]]
    assert "event evt-000001 already records it" in reasons[0]  # the journal remembers its writes
    assert "rolling budget of 1 flag_for_human per 24 h" in reasons[3]  # budgets remember too
    assert f"already awaits approval as {pending}" in reasons[4]  # the pending item is seen
    assert "a person rejected the same proposal before (rejected by ana" in reasons[5]
    assert set(_items(tmp_path)) == {pending, rejected}


def test_reseal_refuses_when_something_verifies_under_neither_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    _history_under_the_old_key(tmp_path, monkeypatch, small_hub)
    before = tree_digest(tmp_path / "memory")
    argv = _memory(tmp_path, "journal", "reseal", "--domain", "website")
    wrong = _cli(tmp_path, monkeypatch, argv, NEW_KEY, STRANGER_KEY)
    assert wrong.code == 6
    assert "verifies under CUSTODIAN_SEAL_KEY or CUSTODIAN_SEAL_KEY_PREVIOUS" in wrong.stderr
    assert "nothing was resealed" in wrong.stderr
    assert tree_digest(tmp_path / "memory") == before
    for key in (OLD_KEY, NEW_KEY, STRANGER_KEY):
        assert key not in wrong.stdout + wrong.stderr

    unkeyed = _cli(tmp_path, monkeypatch, argv)
    assert unkeyed.code == 2 and "CUSTODIAN_SEAL_KEY" in unkeyed.stderr
    idle = _cli(tmp_path, monkeypatch, argv, OLD_KEY)  # nothing sealed by a previous key
    assert idle.code == 0, idle.stderr
    assert "website: 0 of" in idle.stdout and "0 of 2 approval item(s) resealed" in idle.stdout


def _sealed_history(memory: Path, key: SealKey) -> JournalStore:
    """Forty old runs and ten recent ones in small segments, sealed with `key`, then pruned."""
    store = JournalStore(memory, segment_bytes=4096, seal_key=key)
    content = ContentStore(memory, "snapshots")
    old, new = content.put(DOMAIN, '{"old":1}'), content.put(DOMAIN, '{"new":1}')
    clock = StepClock(datetime.now(UTC) - timedelta(days=200), timedelta(minutes=20))
    for n in range(40):
        _skipped_run(store, f"r{n:03d}", clock, old)
    clock.now = datetime.now(UTC) - timedelta(days=2)
    for n in range(40, 50):
        _skipped_run(store, f"r{n:03d}", clock, new)
    done = prune(memory, DOMAIN, timedelta(days=31), datetime.now(UTC), key)
    assert done.anchor is not None and done.anchor.seal is not None
    return store


def test_reseal_moves_every_segment_the_anchor_and_the_checkpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = tmp_path / "memory"
    layout = _sealed_history(memory, SealKey(OLD_KEY)).layout(DOMAIN)
    segments = len(layout.segments())
    assert segments >= 2
    chain = [(r.seq, r.hash) for r in journal(memory, DOMAIN)]

    argv = ["journal", "reseal", "--memory", str(memory)]
    result = _cli(tmp_path, monkeypatch, argv, NEW_KEY, OLD_KEY)
    assert result.code == 0, result.stderr
    assert f"{DOMAIN}: {len(chain)} of {len(chain)} journal record(s) resealed" in result.stdout
    assert f"(in {segments} file(s))" in result.stdout
    assert "checkpoint resealed" in result.stdout and "anchor resealed" in result.stdout
    records = journal(memory, DOMAIN)
    assert [(r.seq, r.hash) for r in records] == chain
    assert all(r.seal == _seal_of(NEW_KEY, r.hash) for r in records)

    reopened = JournalStore(memory, seal_key=SealKey(NEW_KEY)).open(DOMAIN)
    assert reopened.rebuilt is None  # the resealed checkpoint is trusted and still points true
    inspect = ["inspect", "--domain", DOMAIN, "--memory", str(memory)]
    court = _cli(tmp_path, monkeypatch, inspect, NEW_KEY)
    assert court.code == 0, court.stdout
    assert f"seals     verified: all {len(chain)} record(s) in the domain" in court.stdout


def test_the_previous_key_only_verifies_and_is_never_shown() -> None:
    from custodian_runtime.core.fold.api import make_record
    from custodian_runtime.core.journal.seals import record_sealer, verify_seals
    from custodian_runtime.settings import load_settings

    at = datetime(2026, 1, 1, tzinfo=UTC)
    record = make_record(None, "r1", "website", "run_started", at, {"pid": 1})
    by_old = seal_record(SealKey(OLD_KEY), record)
    rotating = SealKey(NEW_KEY, OLD_KEY)
    assert record_sealer(rotating, by_old) == "previous" and verify_seals([by_old], rotating) == []
    assert seal_record(rotating, record).seal == _seal_of(NEW_KEY, record.hash)  # seals with new
    assert record_sealer(rotating.current_only(), by_old) is None
    assert verify_seals([by_old], SealKey(NEW_KEY))  # without the previous key: refused
    assert record_sealer(SealKey(OLD_KEY, NEW_KEY), by_old) == "current"

    env = {
        "CUSTODIAN_SEAL_KEY": NEW_KEY,
        "CUSTODIAN_SEAL_KEY_PREVIOUS": OLD_KEY,
        "STATE_HUB_URL": "http://127.0.0.1:1",
        "CUSTODIAN_LLM": "offline",
    }
    settings = load_settings({"domain": "website"}, env, Path("/nonexistent"))
    assert settings.seal_key is not None and settings.seal_key.rotating
    shown = repr(settings) + json.dumps(settings.digest_view()) + repr(settings.seal_key)
    assert OLD_KEY not in shown and NEW_KEY not in shown
    assert not {"CUSTODIAN_SEAL_KEY", "CUSTODIAN_SEAL_KEY_PREVIOUS"} & set(settings.model.env)
