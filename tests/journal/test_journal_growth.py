"""What runs add to memory/: a skipped run a few small records, a snapshot only once."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from custodian_hub import ReferenceHub, load_seed
from custodian_runtime.core.digest import canonical_json
from custodian_runtime.journal.store import JournalStore
from support.runs import run_args, run_cli

TASKS = 1500


def _domain(now: datetime) -> dict[str, Any]:
    """One domain of TASKS tasks, all quiet: nothing for the offline planner to write."""
    stamp = (now - timedelta(days=1)).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    workstreams = [
        {"id": f"big-ws-{w}", "domain": "big", "title": f"Workstream {w}", "status": "active",
         "owner": "ops", "created_at": stamp, "updated_at": stamp}
        for w in range(15)
    ]  # fmt: skip
    tasks = [
        {"id": f"big-t-{n}", "workstream_id": f"big-ws-{n % 15}", "title": f"Keep part {n} tidy",
         "description": "Routine.", "status": "todo" if n % 2 else "done",
         "created_at": stamp, "updated_at": stamp}
        for n in range(TASKS)
    ]  # fmt: skip
    return {"workstreams": workstreams, "tasks": tasks, "decisions": [], "events": [],
            "flags": []}  # fmt: skip


def _bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


@pytest.fixture
def big_hub(tmp_path: Path) -> Any:
    db = tmp_path / "big.sqlite3"
    load_seed(db, _domain(datetime.now(UTC)))
    with ReferenceHub(db) as hub:
        yield hub


def test_a_skipped_run_adds_a_few_small_records_and_no_snapshot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, big_hub: ReferenceHub
) -> None:
    memory = tmp_path / "memory"
    first = run_cli(
        run_args(big_hub.url, "offline", tmp_path / "memory", "--json", domain="big"),
        tmp_path,
        monkeypatch,
    )
    assert first.json()["status"] == "completed", first.stderr
    # The domain as observed, and as the run's own writes left it: each once, compressed.
    snapshots = sorted((memory / "snapshots" / "big").iterdir())
    assert 1 <= len(snapshots) <= 2
    journal = memory / "journal" / "big.jsonl"
    for _ in range(3):
        before, lines = _bytes(memory), journal.read_bytes().count(b"\n")
        again = run_cli(
            run_args(big_hub.url, "offline", tmp_path / "memory", "--json", domain="big"),
            tmp_path,
            monkeypatch,
        )
        assert again.json()["status"] == "skipped", again.stderr
        assert _bytes(memory) - before <= 16 * 1024
        assert journal.read_bytes().count(b"\n") - lines == 3  # run_started, observed, finished
    assert sorted((memory / "snapshots" / "big").iterdir()) == snapshots
    # The observed record names the snapshot; the summary itself is not in the journal.
    observed = [r for r in JournalStore(memory).scan("big").records if r.kind == "observed"]
    assert all("summary" not in r.data and r.data["snapshot"] for r in observed)
    # Besides a few small fields, one digest per workstream (15 here), never one per task.
    for record in observed:
        rest = {k: v for k, v in record.data.items() if k != "workstream_digests"}
        assert len(canonical_json(rest)) < 2048
        assert len(record.data.get("workstream_digests") or {}) <= 15


def test_a_forced_run_stores_only_the_snapshots_it_has_not_seen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, big_hub: ReferenceHub
) -> None:
    memory = tmp_path / "memory"
    assert (
        run_cli(
            run_args(big_hub.url, "offline", tmp_path / "memory", "--json", domain="big"),
            tmp_path,
            monkeypatch,
        ).json()["status"]
        == "completed"
    )
    seen = set((memory / "snapshots" / "big").iterdir())
    before = _bytes(memory)
    forced = run_cli(
        run_args(big_hub.url, "offline", tmp_path / "memory", "--json", "--force", domain="big"),
        tmp_path,
        monkeypatch,
    )
    assert forced.json()["status"] == "completed", forced.stderr
    # What it observed first is the state the last run left: stored already. At most the state
    # its own writes leave is new.
    assert len(set((memory / "snapshots" / "big").iterdir()) - seen) <= 1
    assert _bytes(memory) - before <= 128 * 1024
