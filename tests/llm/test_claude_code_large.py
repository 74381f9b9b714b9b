"""claude-code at any canon size: the system prompt goes through a file, never one huge argument.

Linux caps one argument (and one environment string) at 128 KiB; a 45,606-character Chinese
constitution is about 134 KiB of UTF-8. An E2BIG on spawn gets its own message.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from custodian_hub import ReferenceHub
from custodian_runtime.core.context.prompt import estimate_tokens
from custodian_runtime.errors import ModelError
from custodian_runtime.llm.base import ModelConfig, Prompt
from custodian_runtime.llm.claude_code import ClaudeCodeModel
from support.fakes.claude import SUCCESS, FakeClaude, result
from support.fakes.clock import FakeSleep
from support.runs import CANON, CliResult, plan_response, run_cli

MAX_ARG_BYTES = 4096
SENTENCE = "本项目的宪章：保管人只做三件被认可的写入，其余一切都交给人来批准。"


def chinese_constitution(length: int = 45_606) -> str:
    """A Markdown constitution of exactly `length` characters, nearly all of them Chinese."""
    head = "# 宪章\n\n"
    body = (SENTENCE * (length // len(SENTENCE) + 1))[: length - len(head) - 1]
    text = head + body + "\n"
    assert len(text) == length
    return text


def _adapter(fake: FakeClaude, **env: str) -> ClaudeCodeModel:
    full = {"PATH": "/usr/bin:/bin", "CUSTODIAN_CLAUDE_BIN": str(fake.path), **env}
    config = ModelConfig(spec="claude-code", env=full, child_env=tuple(env))
    return ClaudeCodeModel(config, sleep=FakeSleep())


def _run_with(
    tmp_path: Path, mp: pytest.MonkeyPatch, hub: ReferenceHub, constitution: str, **env: str
) -> tuple[CliResult, FakeClaude]:
    canon = tmp_path / "canon"
    shutil.copytree(CANON, canon)
    (canon / "constitution.md").write_text(constitution, encoding="utf-8")
    cli_dir = tmp_path / "cli"
    cli_dir.mkdir()
    answer = plan_response({"observations": ["宪章已读。"]})
    fake = FakeClaude(cli_dir, {"kind": "answer", "result": result(result=answer)})
    argv = ["run", "--domain", "website", "--hub", hub.url, "--llm", "claude-code"]
    argv += ["--memory", str(tmp_path / "memory"), "--canon", str(canon), "--json"]
    return run_cli(argv, tmp_path, mp, CUSTODIAN_CLAUDE_BIN=str(fake.path), **env), fake


def _assert_small_argv(call: dict[str, Any]) -> None:
    sizes = {arg[:40]: len(arg.encode("utf-8")) for arg in call["argv"]}
    assert max(sizes.values()) <= MAX_ARG_BYTES, sizes


def test_a_large_chinese_system_prompt_reaches_the_cli_whole_through_a_file(
    tmp_path: Path,
) -> None:
    system = chinese_constitution()
    assert len(system.encode("utf-8")) > 128 * 1024  # over Linux's cap on one argument
    fake = FakeClaude(tmp_path, SUCCESS)
    completion = _adapter(fake).complete(Prompt(system=system, user="Observe and plan."))
    assert completion.text
    [call] = fake.calls()
    _assert_small_argv(call)
    assert "--system-prompt" not in call["argv"]
    file = Path(call["argv"][call["argv"].index("--system-prompt-file") + 1])
    assert call["system_prompt_file"] == system
    assert call["stdin"] == "Observe and plan."
    assert file.name not in call["cwd_listing"] and not file.exists()  # private, and removed


def test_a_run_with_a_45606_character_chinese_constitution_through_claude_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    constitution = chinese_constitution()
    budget = {"CUSTODIAN_TOKEN_BUDGET": "400000"}
    done, fake = _run_with(tmp_path, monkeypatch, small_hub, constitution, **budget)
    assert done.code == 0, done.stderr + done.stdout
    [call] = fake.calls()
    _assert_small_argv(call)
    assert constitution.strip() in call["system_prompt_file"]


def test_the_estimate_counts_chinese_at_least_one_token_a_character() -> None:
    constitution = chinese_constitution()
    assert estimate_tokens(constitution) >= len(constitution)


def test_under_the_default_budget_a_chinese_constitution_is_refused_before_the_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    done, fake = _run_with(tmp_path, monkeypatch, small_hub, chinese_constitution())
    assert done.code == 2, done.stderr
    assert "CUSTODIAN_TOKEN_BUDGET" in done.stderr and "more than the token budget" in done.stderr
    assert fake.calls() == []


def test_an_argument_list_too_long_gets_its_own_message(tmp_path: Path) -> None:
    fake = FakeClaude(tmp_path, SUCCESS)
    # One environment string over 128 KiB makes execve fail with E2BIG, as a huge argument did.
    model = _adapter(fake, HUGE_SETTING="x" * (200 * 1024))
    with pytest.raises(ModelError) as caught:
        model.complete(Prompt(system="s", user="u"))
    message = caught.value.message
    assert "CUSTODIAN_CLAUDE_BIN" not in message
    assert "too long" in message and "E2BIG" in message
    assert caught.value.exit_code == 4
    assert fake.calls() == []
