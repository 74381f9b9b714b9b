"""Two planners at decide: a model gets the prompt's text, the rule planner the facts, built
only for it."""

from __future__ import annotations

import gzip
import json
from dataclasses import fields
from pathlib import Path

import pytest

from custodian_hub import ReferenceHub
from custodian_runtime.errors import ConfigError
from custodian_runtime.llm.base import Model, ModelConfig, Prompt
from custodian_runtime.llm.registry import build_model
from custodian_runtime.run import RulePlanner, build_planner
from support.runs import plan_response, run_in_process


def _spoil_snapshots(memory: Path) -> int:
    """Overwrite each stored snapshot (a later put keeps an existing file): reading one fails."""
    spoiled = sorted((memory / "snapshots").rglob("*.json.gz"))
    for path in spoiled:
        path.write_bytes(gzip.compress(b"{}"))
    return len(spoiled)


def test_a_text_model_run_does_not_read_the_last_snapshot(
    tmp_path: Path, small_hub: ReferenceHub
) -> None:
    answer = tmp_path / "answer.md"
    answer.write_text(plan_response({}), encoding="utf-8")
    assert run_in_process(tmp_path, small_hub, f"file:{answer}").exit_code == 0
    assert _spoil_snapshots(tmp_path / "memory") >= 1
    second = run_in_process(tmp_path, small_hub, f"file:{answer}")
    assert second.exit_code == 0, second.message


def test_the_offline_planner_takes_the_last_digests_from_the_journal(
    tmp_path: Path, small_hub: ReferenceHub
) -> None:
    first = run_in_process(tmp_path, small_hub, "offline")
    assert first.exit_code == 0 and first.counts()["executed"] >= 1, first.message
    assert _spoil_snapshots(tmp_path / "memory") >= 1
    # The previous run's per-workstream digests are in its `observed` record: no snapshot is read.
    second = run_in_process(tmp_path, small_hub, "offline")
    assert second.exit_code == 0, second.message


def test_the_offline_planner_still_plans_from_the_facts(
    tmp_path: Path, small_hub: ReferenceHub
) -> None:
    first = run_in_process(tmp_path, small_hub, "offline")
    assert first.exit_code == 0 and first.counts()["executed"] >= 1, first.message


def test_the_offline_spec_is_the_rule_planner_and_no_model_adapter(tmp_path: Path) -> None:
    planner = build_planner(ModelConfig(spec="offline"))
    assert isinstance(planner, RulePlanner) and planner.model_name == "offline-rules-v1"
    with pytest.raises(ConfigError, match="rule planner"):
        build_model(ModelConfig(spec="offline"))
    answer = tmp_path / "answer.md"
    answer.write_text(plan_response({}), encoding="utf-8")
    model = build_planner(ModelConfig(spec=f"file:{answer}", argument=str(answer)))
    assert isinstance(model, Model) and not isinstance(model, RulePlanner)
    with pytest.raises(ConfigError, match="gemini, offline, ollama"):
        build_planner(ModelConfig(spec="offlin"))


def test_a_prompt_is_text_and_at_most_a_json_schema() -> None:
    # The answer's schema (structured output) is plain JSON built from the plan's models, never
    # the run's planning facts.
    names = [f.name for f in fields(Prompt)]
    assert names == ["system", "user", "max_output_tokens", "answer_schema"]
    schema = next(f for f in fields(Prompt) if f.name == "answer_schema")
    assert schema.type == "Mapping[str, Any] | None" and schema.default is None


def test_the_rule_planners_run_journals_its_answer_as_before(
    tmp_path: Path, small_hub: ReferenceHub
) -> None:
    assert run_in_process(tmp_path, small_hub, "offline").exit_code == 0
    lines = (tmp_path / "memory" / "journal" / "website.jsonl").read_text("utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    started = next(r["data"] for r in records if r["kind"] == "run_started")
    answer = next(r["data"] for r in records if r["kind"] == "model_response")
    assert started["model_spec"] == "offline"
    assert (answer["provider"], answer["model"]) == ("offline", "offline-rules-v1")
    assert answer["usage"] == {"input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0}
    assert '"observations"' in answer["text"]
