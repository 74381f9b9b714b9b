"""The embedded hub is wired in where the program is composed, never by the hub client itself."""

from __future__ import annotations

import io
from datetime import UTC, datetime
from pathlib import Path

import pytest

from custodian_runtime.cli.hub import embedded_hub, with_embedded_hub
from custodian_runtime.errors import ConfigError
from custodian_runtime.run import run
from custodian_runtime.settings import load_settings
from custodian_runtime.statehub.connect import open_hub

FLAGS = {"domain": "website", "hub": "embedded", "llm": "offline"}


def _now() -> datetime:
    return datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def test_settings_alone_do_not_open_the_embedded_hub(tmp_path: Path) -> None:
    settings = load_settings(FLAGS, {}, tmp_path)
    assert settings.hub is not None and settings.hub.open_embedded is None
    with (
        pytest.raises(ConfigError, match="with_embedded_hub") as caught,
        open_hub(settings.hub, tmp_path, _now),
    ):
        pass
    assert caught.value.setting == "--hub"
    assert not (tmp_path / "hub.sqlite3").exists()  # refused before anything was created


def test_a_run_without_the_wiring_is_refused_as_a_config_error(tmp_path: Path) -> None:
    settings = load_settings({**FLAGS, "memory": str(tmp_path / "m")}, {}, tmp_path)
    result = run(settings, clock=_now, stderr=io.StringIO())
    assert result.exit_code == 2 and "with_embedded_hub" in result.message


def test_the_wired_settings_reach_the_seeded_reference_hub(tmp_path: Path) -> None:
    settings = with_embedded_hub(load_settings(FLAGS, {}, tmp_path))
    assert settings.hub is not None and settings.hub.open_embedded is embedded_hub
    with open_hub(settings.hub, tmp_path / "hub", _now) as client:
        assert client.domain_summary("website").domain == "website"
    assert (tmp_path / "hub" / "hub.sqlite3").exists()


def test_a_url_hub_is_left_as_it_is(tmp_path: Path) -> None:
    settings = load_settings({**FLAGS, "hub": "http://127.0.0.1:9"}, {}, tmp_path)
    assert with_embedded_hub(settings) is settings
