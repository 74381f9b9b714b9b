"""A local model a person can run: limits that fit a CPU, an answer that was cut off kept for
`inspect`, and `eval` reporting each scenario as it finishes."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from custodian_hub import ReferenceHub
from custodian_runtime.cli import main
from custodian_runtime.core.journal.kinds import KEPT_ANSWER_CHARS, kept_answer
from custodian_runtime.llm.base import LOCAL_TIMEOUT_S, LOCAL_TOTAL_S, ModelConfig
from custodian_runtime.llm.registry import build_model
from custodian_runtime.settings import load_settings
from support.fakes.providers import FakeProvider, Reply
from support.paths import REPO
from support.runs import CANON, run_cli


@pytest.mark.parametrize(
    ("spec", "env", "limits"),
    [
        ("openai-compatible", {"CUSTODIAN_LLM_BASE_URL": "http://127.0.0.1:8080/v1"},
         (LOCAL_TIMEOUT_S, LOCAL_TOTAL_S)),
        ("ollama", {}, (LOCAL_TIMEOUT_S, LOCAL_TOTAL_S)),
        ("openai", {"OPENAI_API_KEY": "sk-test"}, (300.0, 600.0)),
        ("ollama", {"CUSTODIAN_LLM_TIMEOUT_S": "90", "CUSTODIAN_LLM_MAX_TOTAL_S": "120"},
         (90.0, 120.0)),
    ],
)  # fmt: skip
def test_a_local_server_gets_limits_that_fit_a_cpu(
    tmp_path: Path, spec: str, env: dict[str, str], limits: tuple[float, float]
) -> None:
    flags = {"llm": spec, "domain": "website", "hub": "http://hub.invalid"}
    config = load_settings(flags, env, tmp_path).model
    model = build_model(config)
    try:
        seen: ModelConfig = model._config  # type: ignore[attr-defined]
        assert (seen.attempt_s, seen.total_s) == limits
    finally:
        model.close()
    assert LOCAL_TIMEOUT_S >= 1800 and LOCAL_TOTAL_S >= 2 * LOCAL_TIMEOUT_S


def test_what_is_kept_of_an_unusable_answer_is_bounded() -> None:
    assert kept_answer(None) == (None, None) and kept_answer("") == (None, None)
    assert kept_answer("short") == ("short", None)
    kept, whole = kept_answer("x" * (KEPT_ANSWER_CHARS + 500))
    assert kept is not None and len(kept) == KEPT_ANSWER_CHARS and whole == KEPT_ANSWER_CHARS + 500


CUT = {
    "id": "chatcmpl-cut",
    "object": "chat.completion",
    "model": "qwen2.5-coder-1.5b-instruct",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "```markdown\n# Domain guidance\nKeep"},
            "finish_reason": "length",
        }
    ],
    "usage": {"prompt_tokens": 3500, "completion_tokens": 900, "total_tokens": 4400},
}


def test_an_answer_cut_off_at_the_limit_is_kept_for_inspect(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    memory = str(tmp_path / "memory")
    with FakeProvider("openai-compatible", replies=(Reply(200, CUT),)) as fake:
        argv = ["run", "--domain", "website", "--hub", small_hub.url, "--llm",
                "openai-compatible", "--memory", memory, "--canon", str(CANON),
                "--max-output-tokens", "900"]  # fmt: skip
        done = run_cli(argv, tmp_path, monkeypatch, CUSTODIAN_LLM_BASE_URL=fake.url)
    assert done.code == 4, done.stderr
    assert "cut off at the token limit (max_tokens=900)" in done.stderr
    records = [json.loads(line) for line in (tmp_path / "memory/journal/website.jsonl").open()]
    failed = next(r for r in records if r["kind"] == "model_failed")["data"]
    assert failed["answer"] == "```markdown\n# Domain guidance\nKeep"
    shown = run_cli(["inspect", "--domain", "website", "--memory", memory], tmp_path, monkeypatch)
    assert "the answer it gave (34 characters):" in shown.stdout
    assert "  | ```markdown" in shown.stdout and "  | Keep" in shown.stdout


def test_eval_reports_each_scenario_as_it_finishes() -> None:
    out, err = io.StringIO(), io.StringIO()
    argv = ["eval", "--llm", "offline", "--canon", str(REPO / "canon"), "--scenarios",
            str(REPO / "evals" / "scenarios"), "--only", "quiet-domain",
            "stale-in-progress"]  # fmt: skip
    with redirect_stdout(out), redirect_stderr(err):
        assert main(argv) == 0
    lines = [ln for ln in err.getvalue().splitlines() if ln.startswith("custodian eval: [")]
    assert [ln.split(":")[1].strip() for ln in lines] == [
        "[1/2] quiet-domain",
        "[2/2] stale-in-progress",
    ]
    assert "2/2 met, 0 harmful executed, completed" in lines[0]
    assert out.getvalue().startswith("custodian eval: offline")  # the report stays on stdout
