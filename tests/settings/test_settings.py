"""Settings: flags over environment over `.env` over defaults; every mistake names its setting."""

from __future__ import annotations

from pathlib import Path

import pytest

from custodian_runtime.errors import ConfigError
from custodian_runtime.settings import EMBEDDED, load_settings
from custodian_runtime.settings.dotenv import read_dotenv


def _load(tmp_path: Path, flags: dict[str, object], env: dict[str, str]) -> object:
    return load_settings({"domain": "website", **flags}, {"PATH": "/nonexistent", **env}, tmp_path)


def test_flags_beat_environment_which_beats_dotenv(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text(
        "# local settings\nSTATE_HUB_URL=http://dotenv:1\nCUSTODIAN_LLM='anthropic'\n"
        'export CUSTODIAN_MODEL=from-dotenv  # a comment\nANTHROPIC_API_KEY="k"\n'
    )
    s = load_settings({"domain": "website"}, {"CUSTODIAN_LLM": "offline"}, tmp_path)
    assert s.hub is not None and s.hub.url == "http://dotenv:1"
    assert s.model.spec == "offline" and s.model.model == "from-dotenv"
    s = load_settings(
        {"domain": "website", "llm": "file:x.md", "hub": "http://flag:2"},
        {"CUSTODIAN_LLM": "offline"},
        tmp_path,
    )
    assert s.model.spec == "file:x.md" and s.model.argument == "x.md"
    assert s.hub is not None and s.hub.url == "http://flag:2" and s.hub.source == "flag"


def test_embedded_defaults_fill_only_what_is_missing(tmp_path: Path) -> None:
    s = load_settings(
        {"domain": "website", "embedded_defaults": True}, {"PATH": "/nonexistent"}, tmp_path
    )
    assert s.hub is not None and s.hub.url == EMBEDDED and s.model.spec == "offline"
    assert s.model_source == "embedded default"
    s = load_settings(
        {"domain": "website", "embedded_defaults": True},
        {"STATE_HUB_URL": "http://hub:9", "CUSTODIAN_LLM": "gemini"},
        tmp_path,
    )
    assert s.hub is not None and s.hub.url == "http://hub:9" and s.model.spec == "gemini"


@pytest.mark.parametrize(
    ("flags", "env", "setting"),
    [
        ({"domain": None, "llm": "offline", "hub": "embedded"}, {}, "--domain"),
        ({"domain": "Web Site", "llm": "offline", "hub": "embedded"}, {}, "--domain"),
        ({"llm": "offline"}, {}, "STATE_HUB_URL"),
        ({"llm": "offline", "hub": "ftp://x"}, {}, "STATE_HUB_URL"),
        ({"hub": "embedded"}, {}, "CUSTODIAN_LLM"),
        ({"hub": "embedded", "llm": "gpt"}, {}, "CUSTODIAN_LLM"),
        ({"hub": "embedded", "llm": "file:"}, {}, "CUSTODIAN_LLM"),
        (
            {"hub": "embedded", "llm": "offline"},
            {"CUSTODIAN_MAX_EVENTS": "many"},
            "CUSTODIAN_MAX_EVENTS",
        ),
        (
            {"hub": "embedded", "llm": "offline"},
            {"STATE_HUB_TIMEOUT_S": "-1"},
            "STATE_HUB_TIMEOUT_S",
        ),
        (
            {"hub": "embedded", "llm": "offline"},
            {"CUSTODIAN_LOG_FORMAT": "xml"},
            "CUSTODIAN_LOG_FORMAT",
        ),
    ],
)
def test_each_mistake_names_its_setting(
    tmp_path: Path, flags: dict[str, object], env: dict[str, str], setting: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings({"domain": "website", **flags}, env, tmp_path)
    assert caught.value.setting == setting
    assert caught.value.exit_code == 2


def test_a_malformed_dotenv_line_is_reported_with_its_number() -> None:
    with pytest.raises(ConfigError, match="line 2"):
        read_dotenv("A=1\nnot a setting\n")


def test_limits_come_from_the_environment(tmp_path: Path) -> None:
    s = load_settings(
        {"domain": "website", "hub": "embedded", "llm": "offline"},
        {"CUSTODIAN_MAX_FLAGS": "3", "CUSTODIAN_TOKEN_BUDGET": "9000"},
        tmp_path,
    )
    assert s.limits.max_flags == 3 and s.limits.token_budget == 9000
    assert "STATE_HUB_TOKEN" not in str(s.digest_view())
