"""Only a model that plans from the structured observation gets it, and only then is it built."""

from __future__ import annotations

import gzip
import io
from datetime import UTC, datetime
from pathlib import Path

import pytest

from custodian_hub import ReferenceHub
from custodian_runtime.errors import ModelError
from custodian_runtime.llm.base import ModelConfig, Prompt
from custodian_runtime.llm.offline import OfflinePlanner
from custodian_runtime.run import RunResult, run
from custodian_runtime.settings import load_settings
from runsupport import CANON, plan_response


def _run(tmp_path: Path, hub: ReferenceHub, llm: str) -> RunResult:
    flags = {"domain": "website", "hub": hub.url, "llm": llm, "force": True}
    flags |= {"memory": str(tmp_path / "memory"), "canon": str(CANON)}
    at = datetime.now(UTC).replace(microsecond=0)
    return run(load_settings(flags, {}, tmp_path), clock=lambda: at, stderr=io.StringIO())


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
    assert _run(tmp_path, small_hub, f"file:{answer}").exit_code == 0
    assert _spoil_snapshots(tmp_path / "memory") >= 1
    second = _run(tmp_path, small_hub, f"file:{answer}")
    assert second.exit_code == 0, second.message


def test_the_offline_planner_takes_the_last_digests_from_the_journal(
    tmp_path: Path, small_hub: ReferenceHub
) -> None:
    first = _run(tmp_path, small_hub, "offline")
    assert first.exit_code == 0 and first.counts()["executed"] >= 1, first.message
    assert _spoil_snapshots(tmp_path / "memory") >= 1
    # The previous run's per-workstream digests are in its `observed` record: no snapshot is read.
    second = _run(tmp_path, small_hub, "offline")
    assert second.exit_code == 0, second.message


def test_the_offline_planner_still_plans_from_the_facts(
    tmp_path: Path, small_hub: ReferenceHub
) -> None:
    first = _run(tmp_path, small_hub, "offline")
    assert first.exit_code == 0 and first.counts()["executed"] >= 1, first.message


def test_the_offline_planner_refuses_a_prompt_without_facts() -> None:
    planner = OfflinePlanner(ModelConfig(spec="offline"))
    for facts in (None, {"domain": "website"}):
        with pytest.raises(ModelError, match=r"prompt\.facts"):
            planner.complete(Prompt(system="s", user="u", facts=facts))
