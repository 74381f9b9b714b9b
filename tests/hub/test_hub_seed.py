"""Seeding the reference hub: the demo dataset's guarantees, seed files, and bad seeds."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from datetime import datetime, timedelta
from importlib import resources
from pathlib import Path
from typing import Any

import httpx
import pytest

from conftest import HUB_NOW
from custodian_hub import (
    ReferenceHub,
    SeedError,
    demo_dataset,
    load_seed,
    seed_database,
    serve_command,
)
from custodian_runtime.core import contract
from custodian_runtime.errors import ConfigError
from support.runs import run_cli


def ts(value: str) -> datetime:
    return datetime.fromisoformat(value)


@pytest.fixture
def demo() -> dict[str, Any]:
    return demo_dataset(HUB_NOW)


def test_demo_has_both_domains_and_enough_of_everything(demo: dict[str, Any]) -> None:
    assert {ws["domain"] for ws in demo["workstreams"]} == {"website", "platform"}
    assert len(demo["workstreams"]) >= 6
    assert len(demo["tasks"]) >= 40
    assert {t["status"] for t in demo["tasks"]} == set(contract.TASK_STATUSES)
    assert {ws["status"] for ws in demo["workstreams"]} == set(contract.WORKSTREAM_STATUSES)
    recent = [e for e in demo["events"] if ts(e["created_at"]) > HUB_NOW - timedelta(days=14)]
    assert {e["event_type"] for e in recent} == set(contract.EVENT_TYPES)
    for domain in ("website", "platform"):
        assert any(d["domain"] == domain and d["status"] == "open" for d in demo["decisions"])
    assert sum(f["status"] == "open" for f in demo["flags"]) >= 2
    for kind in ("workstreams", "tasks", "decisions", "events", "flags"):
        assert all(re.fullmatch(contract.ID_PATTERN, item["id"]) for item in demo[kind])


def test_demo_has_in_progress_tasks_untouched_for_weeks(demo: dict[str, Any]) -> None:
    stale = [
        t
        for t in demo["tasks"]
        if t["status"] == "in_progress" and ts(t["updated_at"]) <= HUB_NOW - timedelta(days=20)
    ]
    assert len(stale) >= 3
    touched = {
        e["task_id"] for e in demo["events"] if ts(e["created_at"]) > HUB_NOW - timedelta(days=20)
    }
    assert any(t["id"] not in touched for t in stale)


def test_demo_has_blocked_tasks_without_a_flag(demo: dict[str, Any]) -> None:
    flagged = {f["task_id"] for f in demo["flags"] if f["status"] == "open"}
    blocked = [t["id"] for t in demo["tasks"] if t["status"] == "blocked"]
    assert len([t for t in blocked if t not in flagged]) >= 2
    assert any(t in flagged for t in blocked)


def test_demo_has_tasks_whose_events_say_finished_but_are_not_done(demo: dict[str, Any]) -> None:
    not_done = {t["id"] for t in demo["tasks"] if t["status"] not in ("done", "cancelled")}
    finished = {
        e["task_id"]
        for e in demo["events"]
        if e["task_id"] in not_done and re.search(r"verified|complete", e["summary"])
    }
    assert len(finished) >= 2


def test_demo_holds_text_that_tries_to_instruct_a_model(demo: dict[str, Any]) -> None:
    texts = [t["description"] for t in demo["tasks"]] + [e["summary"] for e in demo["events"]]
    assert any("IGNORE PREVIOUS INSTRUCTIONS" in text for text in texts)
    assert sum("```json" in text for text in texts) >= 2


def test_demo_dates_move_with_now(demo: dict[str, Any]) -> None:
    later = demo_dataset(HUB_NOW + timedelta(days=10))
    first, moved = demo["tasks"][0], later["tasks"][0]
    assert ts(moved["updated_at"]) - ts(first["updated_at"]) == timedelta(days=10)
    assert max(ts(e["created_at"]) for e in demo["events"]) <= HUB_NOW


def test_seeding_twice_does_not_duplicate(tmp_path: Path, demo: dict[str, Any]) -> None:
    db_path = tmp_path / "hub.sqlite3"
    assert load_seed(db_path, demo) is True
    assert load_seed(db_path, demo) is False
    with ReferenceHub(db_path) as hub:
        assert len(httpx.get(f"{hub.url}/workstreams").json()["workstreams"]) == 9
        tasks = httpx.get(f"{hub.url}/domains/website/summary").json()["workstreams"]
        assert sum(len(ws["tasks"]) for ws in tasks) == 27


def test_a_seed_file_is_loaded_as_given(tmp_path: Path) -> None:
    dataset = {
        "workstreams": [
            {
                "id": "ops-1",
                "domain": "ops",
                "title": "Backups",
                "status": "active",
                "created_at": "2026-01-02T03:04:05+01:00",
            }
        ],
        "tasks": [
            {
                "id": "ops-t-1",
                "workstream_id": "ops-1",
                "title": "Test restore",
                "status": "todo",
                "due": "2026-02-01",
                "created_at": "2026-01-02T03:04:05Z",
            }
        ],
    }
    seed_file = tmp_path / "seed.json"
    seed_file.write_text(json.dumps(dataset), encoding="utf-8")
    db_path = tmp_path / "hub.sqlite3"
    assert seed_database(db_path, str(seed_file), HUB_NOW) is True
    with ReferenceHub(db_path) as hub:
        ws = httpx.get(f"{hub.url}/workstreams").json()["workstreams"][0]
        task = httpx.get(f"{hub.url}/tasks/ops-t-1").json()
    assert (ws["created_at"], ws["updated_at"]) == ("2026-01-02T02:04:05Z", "2026-01-02T02:04:05Z")
    assert (task["due"], task["description"], task["assignee"]) == ("2026-02-01", "", None)


BASE_WS = {
    "id": "w1",
    "domain": "ops",
    "title": "T",
    "status": "active",
    "created_at": "2026-01-01T00:00:00Z",
}


@pytest.mark.parametrize(
    ("dataset", "needle"),
    [
        ({"workstreams": [BASE_WS], "colour": []}, "colour"),
        ({"workstreams": [{**BASE_WS, "extra": 1}]}, "workstreams.0.extra"),
        ({"workstreams": [{**BASE_WS, "id": "bad id"}]}, "workstreams.0.id"),
        ({"workstreams": [BASE_WS, BASE_WS]}, "repeat the ids w1"),
        (
            {
                "tasks": [
                    {
                        "id": "t",
                        "workstream_id": "w9",
                        "title": "x",
                        "status": "todo",
                        "created_at": "2026-01-01T00:00:00Z",
                    }
                ]
            },
            "tasks[0].workstream_id",
        ),
        (
            {
                "workstreams": [BASE_WS],
                "flags": [
                    {
                        "id": "f",
                        "workstream_id": "w1",
                        "note": "n",
                        "status": "resolved",
                        "raised_by": "a",
                        "created_at": "2026-01-01T00:00:00Z",
                    }
                ],
            },
            "resolved_at",
        ),
        (
            {
                "workstreams": [BASE_WS],
                "decisions": [
                    {
                        "id": "d",
                        "domain": "web",
                        "title": "x",
                        "status": "open",
                        "created_at": "2026-01-01T00:00:00Z",
                    }
                ],
            },
            "decisions[0].domain",
        ),
        (
            {
                "workstreams": [BASE_WS],
                "events": [
                    {
                        "id": "e",
                        "workstream_id": "w1",
                        "task_id": "t9",
                        "event_type": "note",
                        "summary": "s",
                        "source": "x",
                        "created_at": "2026-01-01T00:00:00Z",
                    }
                ],
            },
            "events[0].task_id",
        ),
    ],
)
def test_a_bad_dataset_is_refused_with_what_to_fix(
    tmp_path: Path, dataset: dict[str, Any], needle: str
) -> None:
    db_path = tmp_path / "hub.sqlite3"
    with pytest.raises(SeedError) as caught:
        load_seed(db_path, dataset)
    assert needle in str(caught.value)
    assert isinstance(caught.value, ConfigError) and caught.value.exit_code == 2
    assert not db_path.exists()


def _everything(db_path: Path) -> dict[str, Any]:
    with ReferenceHub(db_path) as hub:
        read = {"workstreams": httpx.get(f"{hub.url}/workstreams").json()}
        for domain in ("website", "platform"):
            summary = httpx.get(f"{hub.url}/domains/{domain}/summary").json()
            read[domain] = {k: v for k, v in summary.items() if k != "generated_at"}
    return read


def test_the_packaged_demo_json_is_a_seed_file_dated_on_load(tmp_path: Path) -> None:
    packaged = Path(str(resources.files("custodian_hub").joinpath("demo.json")))
    raw = json.loads(packaged.read_text(encoding="utf-8"))
    assert "created_days_ago" in raw["workstreams"][0] and "$comment" in raw  # ages, not dates
    assert seed_database(tmp_path / "file.sqlite3", str(packaged), HUB_NOW) is True
    assert seed_database(tmp_path / "demo.sqlite3", "demo", HUB_NOW) is True
    from_file = _everything(tmp_path / "file.sqlite3")
    assert from_file == _everything(tmp_path / "demo.sqlite3")
    first = from_file["workstreams"]["workstreams"][0]
    assert ts(first["created_at"]) == HUB_NOW.replace(microsecond=0) - timedelta(
        days=raw["workstreams"][0]["created_days_ago"]
    )


def _undated(row: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in row.items() if key != "created_at"}


def test_ages_and_dates_mix_in_one_seed_file(tmp_path: Path) -> None:
    dataset = {
        "$comment": "ages are relative to the moment of seeding",
        "workstreams": [{**_undated(BASE_WS), "created_days_ago": 10}],
        "tasks": [
            {
                "id": "t1",
                "workstream_id": "w1",
                "title": "t",
                "status": "todo",
                "created_at": "2026-01-01T00:00:00Z",
                "updated_days_ago": 2,
                "due_in_days": 3,
            }
        ],
        "flags": [
            {
                "id": "f1",
                "workstream_id": "w1",
                "note": "n",
                "raised_by": "x",
                "created_days_ago": 1,
                "resolved_days_ago": None,
            }
        ],
    }
    seed_file = tmp_path / "seed.json"
    seed_file.write_text(json.dumps(dataset), encoding="utf-8")
    assert seed_database(tmp_path / "hub.sqlite3", str(seed_file), HUB_NOW) is True
    with ReferenceHub(tmp_path / "hub.sqlite3") as hub:
        ws = httpx.get(f"{hub.url}/workstreams").json()["workstreams"][0]
        task = httpx.get(f"{hub.url}/tasks/t1").json()
    now = HUB_NOW.replace(microsecond=0)
    assert ts(ws["created_at"]) == now - timedelta(days=10)
    assert ts(ws["updated_at"]) == now - timedelta(days=2)  # its latest task's update
    assert task["created_at"] == "2026-01-01T00:00:00Z"
    assert task["due"] == (now + timedelta(days=3)).date().isoformat()


@pytest.mark.parametrize(
    ("row", "needle"),
    [
        ({"created_days_ago": "ten"}, "workstreams[0].created_days_ago: a number (or null)"),
        ({"created_days_ago": True}, "workstreams[0].created_days_ago: a number (or null)"),
        ({"created_days_ago": 1, "created_at": "2026-01-01T00:00:00Z"}, "not both"),
    ],
)
def test_a_bad_age_is_refused_with_what_to_fix(
    tmp_path: Path, row: dict[str, Any], needle: str
) -> None:
    seed_file = tmp_path / "seed.json"
    seed_file.write_text(json.dumps({"workstreams": [{**_undated(BASE_WS), **row}]}), "utf-8")
    with pytest.raises(SeedError) as caught:
        seed_database(tmp_path / "hub.sqlite3", str(seed_file), HUB_NOW)
    assert needle in str(caught.value)
    assert not (tmp_path / "hub.sqlite3").exists()


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        (None, "does not exist"),
        ("{oops", "not valid JSON"),
        ("[1, 2]", "one JSON object"),
        ("\udcff", "cannot be read"),
    ],
)
def test_a_bad_seed_file_is_refused(tmp_path: Path, content: str | None, needle: str) -> None:
    seed_file = tmp_path / "seed.json"
    if content is not None:
        seed_file.write_bytes(content.encode("utf-8", "surrogateescape"))
    with pytest.raises(SeedError, match=needle):
        seed_database(tmp_path / "hub.sqlite3", str(seed_file), HUB_NOW)


def test_serve_command_refuses_a_port_in_use(tmp_path: Path, hub: ReferenceHub) -> None:
    port = int(hub.url.rsplit(":", 1)[1])
    with pytest.raises(ConfigError, match="--port"):
        serve_command("127.0.0.1", port, tmp_path / "hub.sqlite3", None, None)


@pytest.mark.parametrize("seed", [None, "demo"])
def test_hub_serve_on_a_busy_port_creates_no_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hub: ReferenceHub, seed: str | None
) -> None:
    port = hub.url.rsplit(":", 1)[1]
    db = tmp_path / "state" / "hub.sqlite3"
    argv = ["hub", "serve", "--port", port, "--db", str(db), *(["--seed", seed] if seed else [])]
    result = run_cli(argv, tmp_path, monkeypatch)
    assert result.code == 2, result.stderr
    assert "--port" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "state").exists()  # neither the database nor its directory


def test_a_hub_bound_but_never_started_stops_cleanly(tmp_path: Path) -> None:
    bound = ReferenceHub(tmp_path / "hub.sqlite3").bind()
    assert bound.url.startswith("http://127.0.0.1:")
    bound.stop()
    assert not (tmp_path / "hub.sqlite3").exists()


def test_serve_command_serves_until_sigterm(tmp_path: Path) -> None:
    db_path = tmp_path / "served.sqlite3"
    code = (
        "import sys; from pathlib import Path; from custodian_hub import serve_command;"
        f"sys.exit(serve_command('127.0.0.1', 0, Path({str(db_path)!r}), 'demo', 'tok'))"
    )
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stderr=subprocess.PIPE, text=True, env=env
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+", line)
        assert url, line
        headers = {"Authorization": "Bearer tok"}
        summary = httpx.get(f"{url.group()}/domains/website/summary", headers=headers)
        assert summary.status_code == 200
        assert httpx.get(f"{url.group()}/state/summary").status_code == 401
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
        assert "stopped" in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
    assert db_path.exists()
