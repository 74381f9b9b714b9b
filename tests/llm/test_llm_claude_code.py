"""The Claude Code CLI adapter against a fake `claude` that records how it was run."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from custodian_runtime.errors import ConfigError, ModelError
from custodian_runtime.llm.base import ModelConfig, Prompt
from custodian_runtime.llm.claude_code import ClaudeCodeModel, find_claude
from support.fakes.claude import (
    ANSWER,
    GARBAGE,
    HANG,
    MAX_TURNS,
    NOT_LOGGED_IN,
    RATE_LIMITED,
    SUCCESS,
    USAGE_ERROR,
    FakeClaude,
)
from support.fakes.clock import FakeSleep

PROMPT = Prompt(system="You are the custodian. Answer in Markdown.", user="Observe and plan.\n" * 3)
ENV = {
    "PATH": "/usr/bin:/bin",
    "HOME": "/home/operator",
    "ANTHROPIC_API_KEY": "sk-ant-allowed",
    "CLAUDE_CODE_OAUTH_TOKEN": "oauth-allowed",
    "OPENAI_API_KEY": "sk-must-not-leak",
    "GITHUB_TOKEN": "ghp-must-not-leak",
    "CUSTODIAN_HUB_TOKEN": "hub-must-not-leak",
    "AWS_SECRET_ACCESS_KEY": "aws-must-not-leak",
    "STATE_HUB_TOKEN": "hub-token-must-not-leak",
    "GEMINI_API_KEY": "gemini-must-not-leak",
    "LANG": "C.UTF-8",
    "LC_MESSAGES": "C",
}
# Python itself may add LC_CTYPE (PEP 538) when no locale is set.
ALLOWED_ENV = {
    "PATH",
    "HOME",
    "ANTHROPIC_API_KEY",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "DISABLE_AUTOUPDATER",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
    "CLAUDE_CODE_MAX_RETRIES",
    "TMPDIR",
    "LANG",
    "LC_MESSAGES",
    "LC_CTYPE",
}


def adapter(fake: FakeClaude, sleep: FakeSleep | None = None, **config: Any) -> ClaudeCodeModel:
    env = {**ENV, "CUSTODIAN_CLAUDE_BIN": str(fake.path), **config.pop("env", {})}
    return ClaudeCodeModel(
        ModelConfig(spec="claude-code", env=env, **config), sleep=sleep or FakeSleep()
    )


def test_success_runs_a_pure_single_completion(tmp_path: Path) -> None:
    fake = FakeClaude(tmp_path, SUCCESS)
    completion = adapter(fake, model="claude-sonnet-4-5").complete(PROMPT)

    assert completion.text == ANSWER
    assert (completion.provider, completion.model) == ("claude-code", "claude-sonnet-4-5")
    assert (completion.usage.input_tokens, completion.usage.output_tokens) == (12, 3)
    assert completion.usage.cost_usd == pytest.approx(0.000081)
    [call] = fake.calls()
    assert call["argv"][1:] == [
        "-p",
        "--output-format",
        "json",
        "--tools",
        "",
        "--strict-mcp-config",
        "--setting-sources",
        "",
        "--max-turns",
        "1",
        "--no-session-persistence",
        "--permission-mode",
        "dontAsk",
        "--model",
        "claude-sonnet-4-5",
        "--system-prompt-file",
        call["argv"][-1],
    ]
    assert call["system_prompt_file"] == PROMPT.system
    assert call["stdin"] == PROMPT.user
    assert call["cwd_listing"] == []
    assert not Path(call["cwd"]).exists()  # the scratch directory is removed afterwards
    assert Path(call["cwd"]).resolve() != Path.cwd().resolve()


def test_child_environment_is_minimal(tmp_path: Path) -> None:
    fake = FakeClaude(tmp_path, SUCCESS)
    adapter(fake).complete(PROMPT)
    env = fake.calls()[0]["env"]

    assert set(env) <= ALLOWED_ENV
    assert env["ANTHROPIC_API_KEY"] == "sk-ant-allowed"
    assert env["CLAUDE_CODE_OAUTH_TOKEN"] == "oauth-allowed"
    assert not {value for value in env.values() if "must-not-leak" in value}
    assert env["DISABLE_AUTOUPDATER"] == "1"
    assert env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] == "1"
    assert int(env["CLAUDE_CODE_MAX_RETRIES"]) <= 2
    assert env["PATH"] == "/usr/bin:/bin"
    assert env["HOME"] not in ("/home/operator", os.path.expanduser("~"))
    assert fake.calls()[0]["home_writable"]
    assert env["LANG"] == "C.UTF-8" and env["LC_MESSAGES"] == "C"
    assert Path(env["TMPDIR"]).parent == Path(env["HOME"]).parent
    assert not Path(env["TMPDIR"]).exists()  # removed after the call


def test_named_variables_pass_but_other_providers_never(tmp_path: Path) -> None:
    fake = FakeClaude(tmp_path, SUCCESS)
    env = {"MY_PROXY_HINT": "corp", "GEMINI_API_KEY": "gemini-must-not-leak"}
    # Listing a provider key is refused by settings; the child env drops it even if listed here.
    adapter(fake, env=env, child_env=("MY_PROXY_HINT", "GEMINI_API_KEY")).complete(PROMPT)
    child = fake.calls()[0]["env"]
    assert child["MY_PROXY_HINT"] == "corp"
    assert "GEMINI_API_KEY" not in child and "STATE_HUB_TOKEN" not in child


def test_claude_home_can_be_set(tmp_path: Path) -> None:
    fake = FakeClaude(tmp_path, SUCCESS)
    home = tmp_path / "claude-home"
    home.mkdir()
    adapter(fake, env={"CUSTODIAN_CLAUDE_HOME": str(home)}).complete(PROMPT)
    assert fake.calls()[0]["env"]["HOME"] == str(home)


def test_rate_limited_is_retried_once_then_succeeds(tmp_path: Path) -> None:
    fake = FakeClaude(tmp_path, RATE_LIMITED, SUCCESS)
    sleep = FakeSleep()
    assert adapter(fake, sleep).complete(PROMPT).text == ANSWER
    assert len(fake.calls()) == 2
    assert len(sleep.calls) == 1


def test_rate_limited_gives_up_after_two_attempts(tmp_path: Path) -> None:
    fake = FakeClaude(tmp_path, RATE_LIMITED)
    with pytest.raises(ModelError) as caught:
        adapter(fake, max_attempts=4).complete(PROMPT)
    err = caught.value
    assert len(fake.calls()) == 2  # the CLI retries inside; ours stays at two
    assert (err.status, err.retryable, err.attempts) == (429, True, 2)
    assert "Request rejected (429)" in err.message


def test_not_logged_in_says_how_to_fix_it(tmp_path: Path) -> None:
    fake = FakeClaude(tmp_path, NOT_LOGGED_IN)
    with pytest.raises(ModelError) as caught:
        adapter(fake).complete(PROMPT)
    assert len(fake.calls()) == 1
    assert "CUSTODIAN_CLAUDE_HOME" in caught.value.message
    assert not caught.value.retryable


def test_garbage_stdout_is_an_error(tmp_path: Path) -> None:
    fake = FakeClaude(tmp_path, GARBAGE)
    with pytest.raises(ModelError, match="not JSON"):
        adapter(fake).complete(PROMPT)


def test_non_zero_exit_carries_the_stderr_tail(tmp_path: Path) -> None:
    fake = FakeClaude(tmp_path, USAGE_ERROR)
    with pytest.raises(ModelError) as caught:
        adapter(fake).complete(PROMPT)
    assert caught.value.stderr_tail == "error: unknown option '--bogus'"
    assert "code 1" in caught.value.message
    assert len(fake.calls()) == 1


def test_error_subtype_is_an_error(tmp_path: Path) -> None:
    fake = FakeClaude(tmp_path, MAX_TURNS)
    with pytest.raises(ModelError, match="error_max_turns: Reached maximum number of turns"):
        adapter(fake).complete(PROMPT)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


def test_a_hang_is_killed_with_its_process_group(tmp_path: Path) -> None:
    fake = FakeClaude(tmp_path, HANG)
    started = time.monotonic()
    with pytest.raises(ModelError) as caught:
        adapter(fake, timeout_s=1.0).complete(PROMPT)
    assert time.monotonic() - started < 10
    assert caught.value.code == "timeout"
    assert len(fake.calls()) == 1  # a timeout is not retried
    grandchild = fake.calls()[0]["grandchild_pid"]
    deadline = time.monotonic() + 3
    while _alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(grandchild)


def test_find_claude_prefers_the_configured_binary(tmp_path: Path) -> None:
    fake = FakeClaude(tmp_path)
    assert find_claude({"CUSTODIAN_CLAUDE_BIN": str(fake.path)}) == str(fake.path)
    assert find_claude({"PATH": f"/nonexistent:{tmp_path}"}) == str(fake.path)
    assert find_claude({"PATH": "/nonexistent"}) is None
    assert find_claude({}) is None
    fake.path.chmod(0o644)
    assert find_claude({"CUSTODIAN_CLAUDE_BIN": str(fake.path)}) is None


def test_missing_cli_is_a_config_error_naming_the_setting(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        ClaudeCodeModel(ModelConfig(spec="claude-code", env={"PATH": str(tmp_path)}))
    assert caught.value.setting == "CUSTODIAN_CLAUDE_BIN"
    with pytest.raises(ConfigError, match="not an executable"):
        ClaudeCodeModel(
            ModelConfig(spec="claude-code", env={"CUSTODIAN_CLAUDE_BIN": str(tmp_path / "nope")})
        )
