"""An end-to-end run with each model adapter against a loopback server that speaks its API."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from custodian_hub import ReferenceHub
from support.fakes.claude import FakeClaude, result
from support.fakes.providers import FakeProvider
from support.runs import CANON, hub_get, plan_response, run_cli

PLAN = plan_response(
    {
        "observations": ["ev-1 shows the CDN config is live."],
        "progress_events": [
            {
                "workstream_id": "web-ws-1",
                "task_id": "web-t-4",
                "event_type": "observation",
                "rests_on": ["web-t-4"],
                "summary": "CDN config verified live (ev-1).",
            }
        ],
    },
    prose="The CDN task has evidence of completion.",
)

KEYS = {
    "anthropic": "ANTHROPIC_API_KEY",
    "openai": "OPENAI_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
    "gemini": "GEMINI_API_KEY",
    "ollama": None,
    "openai-compatible": None,
}


def _front_matter(note: Path) -> dict[str, Any]:
    lines = note.read_text(encoding="utf-8").split("---\n")[1].splitlines()
    return {k: json.loads(v) for k, _, v in (line.partition(": ") for line in lines)}


def _journal_usage(memory: Path) -> dict[str, Any]:
    records = [json.loads(line) for line in (memory / "journal" / "website.jsonl").open()]
    response = next(r for r in records if r["kind"] == "model_response")
    usage: dict[str, Any] = response["data"]["usage"]
    return usage


@pytest.mark.parametrize("kind", sorted(KEYS))
def test_a_run_with_each_http_provider(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    key_var = KEYS[kind]
    with FakeProvider(kind, answer=PLAN, key="sk-test" if key_var else None) as fake:
        env = {"CUSTODIAN_LLM_BASE_URL": fake.url}
        if key_var:
            env[key_var] = "sk-test"
        memory = tmp_path / "memory"
        argv = [
            "run",
            "--domain",
            "website",
            "--hub",
            small_hub.url,
            "--llm",
            kind,
            "--model",
            "test-model",
            "--memory",
            str(memory),
            "--canon",
            str(CANON),
            "--json",
        ]
        done = run_cli(argv, tmp_path, monkeypatch, **env)
        requests = list(fake.requests)
    assert done.code == 0, done.stderr
    summary = done.json()
    assert [a["operation"] for a in summary["executed"]] == ["add_progress_event"]
    assert len(requests) == 1
    sent = json.dumps(requests[0].body)
    assert "test-model" in sent or "test-model" in requests[0].path
    assert "web-t-4" in sent, "the observed state reached the model"
    events = hub_get(small_hub, "/events?domain=website")["events"]
    assert any(e["source"] == "custodian" for e in events)
    front = _front_matter(Path(summary["note"]))
    assert front["model_spec"] == kind and front["input_tokens"] == summary["usage"]["input_tokens"]
    assert _journal_usage(memory) == summary["usage"]
    if kind in ("anthropic", "openai", "openrouter", "gemini"):
        assert summary["usage"]["input_tokens"] and summary["usage"]["output_tokens"]
    if kind == "openrouter":
        assert summary["usage"]["cost_usd"] is not None


def test_a_run_with_claude_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    cli_dir = tmp_path / "cli"
    cli_dir.mkdir()
    fake = FakeClaude(cli_dir, {"kind": "answer", "result": result(result=PLAN)})
    memory = tmp_path / "memory"
    argv = [
        "run",
        "--domain",
        "website",
        "--hub",
        small_hub.url,
        "--llm",
        "claude-code",
        "--memory",
        str(memory),
        "--canon",
        str(CANON),
        "--json",
    ]
    done = run_cli(argv, tmp_path, monkeypatch, CUSTODIAN_CLAUDE_BIN=str(fake.path))
    assert done.code == 0, done.stderr
    summary = done.json()
    assert [a["operation"] for a in summary["executed"]] == ["add_progress_event"]
    assert summary["usage"] == {"input_tokens": 12, "output_tokens": 3, "cost_usd": 0.000081}
    (call,) = fake.calls()
    assert "--tools" in call["argv"] and "web-t-4" in call["stdin"]


def test_embedded_defaults_pick_claude_code_when_it_is_on_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cli_dir = tmp_path / "cli"
    cli_dir.mkdir()
    FakeClaude(cli_dir, {"kind": "answer", "result": result(result=PLAN)})
    monkeypatch.setenv("PATH", f"{cli_dir}:/usr/bin:/bin")
    argv = [
        "run",
        "--domain",
        "website",
        "--embedded-defaults",
        "--memory",
        str(tmp_path / "memory"),
        "--canon",
        str(CANON),
        "--json",
    ]
    done = run_cli(argv, tmp_path, monkeypatch)
    assert done.code == 0, done.stderr
    assert done.json()["model_spec"] == "claude-code"
    assert "embedded" in done.stderr and "claude-code" in done.stderr
    assert (tmp_path / ".custodian" / "hub.sqlite3").exists()
