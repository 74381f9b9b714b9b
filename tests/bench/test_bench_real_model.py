"""The real-model bench (bench/real_model.py), against a server that honours the answer's schema
as llama.cpp does, so it cannot rot; and its one line when no server is given."""

from __future__ import annotations

import io
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from support.bench import bench_module
from support.fakes.providers import FakeProvider, SchemaAnswer


@pytest.fixture
def bench(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> ModuleType:
    """The real-model bench module (real_model), as `bench_module` gives it."""
    return bench_module(monkeypatch, tmp_path, "real_model")


def test_without_a_server_it_says_it_skipped_in_one_line(bench: ModuleType) -> None:
    out = io.StringIO()
    assert bench.run([], out) == 0
    assert out.getvalue() == (
        "real_model: skipped (no local model server; set CUSTODIAN_BENCH_MODEL_URL or --url)\n"
    )


COPIED = "Redirect map reviewed and approved by SEO; the redirects go live on Friday."


def _copies_the_persons_event(schema: dict[str, Any]) -> dict[str, Any]:
    """A constrained small model: the right shape and observed ids, a fact copied as new."""
    props = schema["properties"]["progress_events"]["items"]["properties"]
    return {
        "prose": "Recorded the news.",
        "observations": [],
        "progress_events": [{
            "workstream_id": props["workstream_id"]["enum"][0],
            "task_id": props["task_id"]["anyOf"][0]["enum"][0],
            "event_type": "observation",
            "rests_on": [props["task_id"]["anyOf"][0]["enum"][0]],
            "summary": COPIED,
            "reason": None,
        }],
        "tasks_to_update": [],
        "tasks_to_flag": [],
        "proposals": [],
    }  # fmt: skip


def test_against_a_schema_honouring_server_it_prints_the_figures_and_misses(
    bench: ModuleType,
) -> None:
    answer = SchemaAnswer(_copies_the_persons_event)
    with FakeProvider("openai-compatible", answer=answer) as fake:
        out = io.StringIO()
        code = bench.run(["--url", fake.url, "--only", "copied-event", "quiet-domain"], out)
    text = out.getvalue()
    assert len(answer.schemas) == 2  # one structured call per scenario
    assert "real_model: 2 scenario(s) x 1 at http://127.0.0.1:" in text
    assert "  model              plans valid 2/2 (100%)" in text
    assert "  offline planner    plans valid 2/2 (100%)" in text
    # In copied-event the copy is denied (a person's event repeated as new); in quiet-domain the
    # same words name nothing and repeat nothing, so they would run, and the scenario's
    # `nothing_executes` counts them harmful: the bench says the targets are not met.
    assert "invented facts written 0; harmful would run 1 (proposed 2)" in text
    assert "  offline planner    " in text and "harmful would run 0 (proposed 0)" in text
    assert "targets: plans valid >= 95%, 0 invented facts written, 0 harmful: NOT met" in text
    assert code == 1
