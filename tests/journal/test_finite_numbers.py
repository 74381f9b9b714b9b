"""Only finite numbers: NaN, Infinity or `1e400` reject a plan; the journal is strict JSON."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from custodian_hub import ReferenceHub
from custodian_runtime.core.digest import canonical_json, strict_loads
from custodian_runtime.errors import ApprovalError
from custodian_runtime.journal.person.queue import ApprovalStore
from custodian_runtime.journal.store import parse_line
from support.runs import CANON, hub_get, run_cli


def _reject(name: str) -> Any:
    raise ValueError(f"{name} in the journal")


def _strict(line: str) -> Any:
    return json.loads(line, parse_constant=_reject)


def _answer(number: str) -> str:
    # Written by hand: json.dumps would never produce these spellings.
    return (
        "Looked at the website domain.\n\n```json\n"
        '{"proposals": [{"operation": "set_task_status", "rationale": "x",\n'
        f'  "params": {{"task_id": "web-t-3", "status": "blocked", "eta_days": {number}}}}}],\n'
        '"tasks_to_update": [{"task_id": "web-t-4", "status": "done"}]}\n```\n'
    )


@pytest.mark.parametrize(
    ("number", "said"),
    [
        ("1e400", "1e400 is too large for a number"),
        ("-1e400", "-1e400 is too large for a number"),
        ("NaN", "NaN is not a JSON number"),
        ("Infinity", "Infinity is not a JSON number"),
    ],
)
def test_a_non_finite_number_rejects_the_plan_and_nothing_is_queued(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    small_hub: ReferenceHub,
    number: str,
    said: str,
) -> None:
    answer = tmp_path / "answer.md"
    answer.write_text(_answer(number), encoding="utf-8")
    memory = tmp_path / "memory"
    argv = ["run", "--domain", "website", "--hub", small_hub.url, "--llm", f"file:{answer}"]
    argv += ["--memory", str(memory), "--canon", str(CANON), "--json"]
    result = run_cli(argv, tmp_path, monkeypatch)
    assert result.code == 4, result.stderr
    assert result.json()["status"] == "rejected"
    note = Path(result.json()["note"]).read_text(encoding="utf-8")
    assert said in note and "numbers must be finite" in note
    assert not list((memory / "approvals").glob("*.json"))
    assert hub_get(small_hub, "/tasks/web-t-4")["status"] == "in_progress"
    journals = list((memory / "journal").rglob("*.jsonl"))
    assert journals
    for path in journals:
        for line in path.read_text(encoding="utf-8").splitlines():
            _strict(line)


def test_canonical_json_refuses_what_is_not_json() -> None:
    for value in (math.inf, -math.inf, math.nan):
        with pytest.raises(ValueError, match="JSON compliant"):
            canonical_json({"n": value})
    assert canonical_json({"n": 1e308}) == '{"n":1e+308}'


def test_strict_loads_keeps_finite_numbers() -> None:
    assert strict_loads('{"a": 1.5e3, "b": -0.0, "c": 12345678901234567890}') == {
        "a": 1500.0,
        "b": -0.0,
        "c": 12345678901234567890,
    }


def test_a_journal_line_with_infinity_is_damage_not_a_record() -> None:
    assert parse_line(b'{"v":1,"data":{"n":Infinity}}').startswith("not strict JSON")
    assert parse_line(b'{"v":1,"data":{"n":1e999}}').startswith("not strict JSON")


def test_an_approval_file_edited_to_hold_infinity_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "approvals"
    folder.mkdir()
    (folder / "apr-000000000001.json").write_text('{"id": "apr-000000000001", "n": 1e999}')
    with pytest.raises(ApprovalError, match="damaged"):
        ApprovalStore(tmp_path).get("apr-000000000001")
