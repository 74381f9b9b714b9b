"""The run's result is built once from what the steps returned, and a failed run keeps it."""

from __future__ import annotations

from dataclasses import FrozenInstanceError, replace
from pathlib import Path

import pytest

from custodian_hub import ReferenceHub
from custodian_runtime.core.outcomes import ItemOutcome
from custodian_runtime.run import RunResult, RunSoFar
from support.runs import CANON, run_cli


def test_the_result_is_frozen_and_built_from_what_was_known() -> None:
    known = RunSoFar("r1", "website", model_spec="file:x", hub="embedded")
    later = replace(known, model="m", observations=("seen",))
    assert known.model is None and later.model == "m"  # a new value; the old one is as it was
    outcome = ItemOutcome(0, "add_progress_event", "web-ws-1", "executed", "ok", hub_id="evt-1")
    result = replace(later, outcomes=(outcome,)).ended("completed", 0, "1 executed", "note.md")
    assert isinstance(result, RunResult)
    assert (result.status, result.exit_code, result.note_path) == ("completed", 0, "note.md")
    assert (result.model, result.hub, result.observations) == ("m", "embedded", ("seen",))
    assert result.counts()["executed"] == 1
    assert result.summary()["observations"] == ["seen"]
    with pytest.raises(FrozenInstanceError):
        result.status = "failed"  # type: ignore[misc]


def test_a_rejected_plan_still_reports_the_model_its_usage_and_its_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    answer = tmp_path / "answer.md"
    answer.write_text("I looked, but I have no plan for you.\n", encoding="utf-8")
    argv = ["run", "--domain", "website", "--hub", small_hub.url, "--llm", f"file:{answer}"]
    argv += ["--memory", str(tmp_path / "memory"), "--canon", str(CANON), "--json"]
    result = run_cli(argv, tmp_path, monkeypatch)
    assert result.code == 4, result.stderr
    summary = result.json()
    assert summary["status"] == "rejected"
    assert summary["hub"] == small_hub.url
    assert summary["model"] is not None
    assert set(summary["usage"]) == {"input_tokens", "output_tokens", "cost_usd"}
    assert summary["note"] is not None
    note = Path(summary["note"]).read_text(encoding="utf-8")
    assert "I looked, but I have no plan for you." in note  # the raw answer, for a person
