"""Bounded answers: at most Limits.max_plan_items items, and only valid Unicode, or exit 4."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from custodian_hub import ReferenceHub
from custodian_runtime.core.limits import Limits
from custodian_runtime.core.plan.extract import extract_plan
from custodian_runtime.errors import PlanRejected
from custodian_runtime.llm.base import Completion
from custodian_runtime.run.decide import storable
from support.runs import run_plan


def _records(tmp_path: Path) -> list[dict[str, Any]]:
    journal = tmp_path / "memory" / "journal" / "website.jsonl"
    return [json.loads(line) for line in journal.read_text(encoding="utf-8").splitlines()]


def _block(body: str) -> str:
    return f"Looked at the website domain.\n\n```json\n{body}\n```\n"


def test_ten_thousand_empty_items_are_rejected_fast_with_one_plan_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    answer = _block('{"proposals": [' + ",".join(["{}"] * 10_000) + "]}")
    started = time.monotonic()
    result = run_plan(tmp_path, monkeypatch, small_hub.url, answer, "--json")
    elapsed = time.monotonic() - started
    assert result.code == 4
    assert "10000 items, more than the 200" in result.stderr
    assert "CUSTODIAN_MAX_PLAN_ITEMS" in result.stderr
    kinds = [r["kind"] for r in _records(tmp_path)]
    assert kinds.count("plan") == 1 and "ruling" not in kinds and "queued" not in kinds
    (plan,) = [r for r in _records(tmp_path) if r["kind"] == "plan"]
    assert plan["data"]["status"] == "rejected" and plan["data"]["items"] == 0
    assert len(kinds) < 10  # run_started, observed, prompt, model_response, plan, note, finished
    assert elapsed < 5.0  # was 30-40 s of fsync'd per-item records
    assert not list((tmp_path / "memory" / "approvals").glob("*.json"))


def test_the_cap_is_read_from_its_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    three = {"proposals": [{"operation": "create_task", "params": {}}] * 3}
    monkeypatch.setenv("CUSTODIAN_MAX_PLAN_ITEMS", "2")
    result = run_plan(tmp_path, monkeypatch, small_hub.url, three, "--json")
    assert result.code == 4
    assert "3 items, more than the 2" in result.stderr


def test_a_lone_surrogate_escape_in_a_file_answer_is_exit_4_not_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    body = (
        '{"observations": ["quiet"], "tasks_to_flag": [{"task_id": "web-t-1", "note": "\\ud800"}]}'
    )
    result = run_plan(tmp_path, monkeypatch, small_hub.url, _block(body), "--json")
    assert result.code == 4
    assert "not valid Unicode" in result.stderr and "U+D800" in result.stderr
    assert "internal error" not in result.stderr
    assert not (tmp_path / "memory" / "crashes").exists()
    (plan,) = [r for r in _records(tmp_path) if r["kind"] == "plan"]
    assert plan["data"]["status"] == "rejected"
    assert "ruling" not in [r["kind"] for r in _records(tmp_path)]


def test_exactly_the_cap_is_accepted_and_one_more_is_not() -> None:
    limits = Limits(max_plan_items=4)
    events = [{"workstream_id": "w", "summary": f"s{i}"} for i in range(3)]
    plan = extract_plan(
        _block(json.dumps({"progress_events": events, "frob": 1, "observations": ["a", "b"]})),
        limits.max_plan_items,
    )
    assert len(plan.items) == 4  # observations are not items; an unknown key is one
    with pytest.raises(PlanRejected, match="5 items, more than the 4"):
        extract_plan(_block(json.dumps({"progress_events": [*events, {}, {}]})), 4)


def test_the_default_cap_is_the_policy_default() -> None:
    entries = [{"task_id": "t", "note": "n"}] * Limits().max_plan_items
    assert len(extract_plan(_block(json.dumps({"tasks_to_flag": entries}))).items) == 200
    with pytest.raises(PlanRejected, match="201 items"):
        extract_plan(_block(json.dumps({"tasks_to_flag": [*entries, {}]})))


@pytest.mark.parametrize(
    "answer",
    [
        _block('{"observations": ["\\udc00 alone"]}'),
        _block('{"\\ud800": []}'),
        _block('{"proposals": [{"operation": "create_task", "params": {"title": "a\\ud83d"}}]}'),
        "Prose with a raw \ud800 surrogate.\n```json\n{}\n```\n",
    ],
)
def test_any_lone_surrogate_is_a_plan_rejection(answer: str) -> None:
    with pytest.raises(PlanRejected, match="not valid Unicode"):
        extract_plan(answer)


def test_a_whole_escaped_pair_is_valid_text() -> None:
    plan = extract_plan(_block('{"observations": ["smile \\ud83d\\ude00"]}'))
    assert plan.observations == ("smile \U0001f600",)


def test_a_raw_surrogate_from_an_adapter_is_stored_escaped_and_still_rejected() -> None:
    raw = Completion(text=_block('{"observations": ["x\ud800"]}'), model="m", provider="p")
    kept = storable(raw)
    kept.text.encode("utf-8")  # journalable
    assert "\\ud800" in kept.text
    with pytest.raises(PlanRejected, match="U\\+D800"):
        extract_plan(kept.text)
    fine = Completion(text="plain", model="m", provider="p")
    assert storable(fine) is fine
