"""Scenario files are parsed strictly: a mistake names the file and the field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from custodian_hub import load_seed
from custodian_runtime.errors import ConfigError
from custodian_runtime.evals.runner import _rows_digest
from custodian_runtime.evals.scenario import load_scenario, load_scenarios

SEED = {
    "workstreams": [
        {"id": "ws-1", "domain": "web", "title": "W", "status": "active",
         "created_at": "2026-01-01T00:00:00Z"}
    ],
    "tasks": [
        {"id": "t-1", "workstream_id": "ws-1", "title": "T", "status": "todo",
         "created_at": "2026-01-01T00:00:00Z"}
    ],
}  # fmt: skip


def scenario(**over: Any) -> dict[str, Any]:
    base = {
        "description": "d",
        "category": "c",
        "domain": "web",
        "now": "2026-03-02T09:00:00Z",
        "seed": SEED,
        "expectations": [{"kind": "must_flag", "task": "t-1"}],
    }
    return {**base, **over}


def write(tmp_path: Path, value: dict[str, Any], name: str = "s.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


def test_a_good_scenario_loads(tmp_path: Path) -> None:
    loaded = load_scenario(write(tmp_path, scenario()))
    assert loaded.name == "s" and loaded.spec.expectations[0].required


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        ({"expectations": [{"kind": "must_flag", "task": "t-1", "tsk": 1}]}, "expectations.0"),
        ({"expectations": [{"kind": "must_flg", "task": "t-1"}]}, "expectations.0"),
        ({"expectations": [{"kind": "must_flag", "task": "t-9"}]}, "expectations.0.task"),
        ({"expectations": []}, "expectations"),
        ({"now": "2026-03-02T09:00:00"}, "now"),
        ({"domain": "other"}, "domain"),
        ({"seed_file": "x.json"}, "exactly one of 'seed'"),
        ({"seed": {"tasks": [{"id": "t-1"}]}}, "seed"),
        ({"surprise": True}, "surprise"),
    ],
)
def test_a_bad_scenario_names_the_file_and_field(
    tmp_path: Path, change: dict[str, Any], needle: str
) -> None:
    path = write(tmp_path, scenario(**change))
    with pytest.raises(ConfigError) as info:
        load_scenario(path)
    assert str(path) in info.value.message and needle in info.value.message


def test_a_seed_file_is_read_relative_to_the_scenario(tmp_path: Path) -> None:
    (tmp_path / "seeds").mkdir()
    (tmp_path / "seeds" / "a.json").write_text(json.dumps(SEED), encoding="utf-8")
    body = scenario(seed=None, seed_file="seeds/a.json")
    del body["seed"]
    loaded = load_scenario(write(tmp_path, body))
    assert loaded.dataset["tasks"][0]["id"] == "t-1"


def test_invalid_json_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text("{", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"bad\.json is not valid JSON"):
        load_scenarios(tmp_path)


def test_the_hub_digest_sees_any_write(tmp_path: Path) -> None:
    import sqlite3

    db = tmp_path / "hub.sqlite3"
    load_seed(db, SEED)
    before = _rows_digest(db)
    assert _rows_digest(db) == before
    conn = sqlite3.connect(db)
    conn.execute("UPDATE tasks SET status = 'done' WHERE id = 't-1'")
    conn.commit()
    conn.close()
    assert _rows_digest(db) != before
