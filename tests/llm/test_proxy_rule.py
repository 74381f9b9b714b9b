"""One proxy rule: model clients follow HTTP(S)_PROXY/NO_PROXY; the hub only STATE_HUB_PROXY."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from custodian_hub import ReferenceHub
from custodian_runtime.errors import ConfigError
from custodian_runtime.llm.base import ModelConfig, Prompt
from custodian_runtime.llm.registry import build_model
from custodian_runtime.settings import parse_hub
from custodian_runtime.statehub.connect import open_hub
from support.fakes.providers import FAKE_ANSWER, FakeProvider
from support.fakes.proxy import RecordingProxy
from support.runs import CANON, plan_response, run_cli

TOKEN = "cronjob-test-token"  # the small_hub_with_token fixture's
PROMPT = Prompt(system="You are the custodian.", user="Observe and plan.")


def _every_proxy_variable(monkeypatch: pytest.MonkeyPatch, url: str) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.setenv(name, url)
        monkeypatch.setenv(name.lower(), url)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)


def _summary_through(hub_url: str, env: dict[str, str], tmp_path: Path) -> str:
    settings = parse_hub(hub_url, TOKEN, "flag", env)
    with open_hub(settings, tmp_path, lambda: datetime.now(UTC)) as client:
        return client.domain_summary("website").domain


def test_the_hub_client_ignores_the_environment_proxy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub_with_token: ReferenceHub
) -> None:
    with RecordingProxy() as proxy:
        _every_proxy_variable(monkeypatch, proxy.url)
        assert _summary_through(small_hub_with_token.url, {}, tmp_path) == "website"
    assert proxy.seen == []  # neither the request nor the bearer token went to that proxy


def test_the_hub_client_goes_through_state_hub_proxy_when_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub_with_token: ReferenceHub
) -> None:
    with RecordingProxy() as named, RecordingProxy() as other:
        _every_proxy_variable(monkeypatch, other.url)
        env = {"STATE_HUB_PROXY": named.url}
        assert _summary_through(small_hub_with_token.url, env, tmp_path) == "website"
    assert other.seen == []
    (seen,) = named.seen
    assert seen.url == f"{small_hub_with_token.url}/domains/website/summary?events=50"
    assert seen.headers["authorization"] == f"Bearer {TOKEN}"


def test_a_run_reaches_the_hub_only_through_the_proxy_named_for_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub_with_token: ReferenceHub
) -> None:
    answer = tmp_path / "answer.md"
    answer.write_text(plan_response({"observations": ["quiet"]}), encoding="utf-8")
    argv = ["run", "--domain", "website", "--hub", small_hub_with_token.url]
    argv += ["--llm", f"file:{answer}", "--memory", str(tmp_path / "m"), "--canon", str(CANON)]
    with RecordingProxy() as named, RecordingProxy() as other:
        _every_proxy_variable(monkeypatch, other.url)
        env = {"STATE_HUB_TOKEN": TOKEN, "STATE_HUB_PROXY": named.url}
        result = run_cli(argv, tmp_path, monkeypatch, **env)
    assert result.code == 0, result.stderr
    assert other.seen == []
    assert named.seen and all(s.url.startswith(small_hub_with_token.url) for s in named.seen)


@pytest.mark.parametrize("value", ["127.0.0.1:3128", "socks5://127.0.0.1:1080", "http://p/x y"])
def test_a_state_hub_proxy_that_is_not_an_http_url_is_a_config_error(value: str) -> None:
    with pytest.raises(ConfigError, match="STATE_HUB_PROXY") as caught:
        parse_hub("http://127.0.0.1:8765", None, "flag", {"STATE_HUB_PROXY": value})
    assert caught.value.setting == "STATE_HUB_PROXY"


def _anthropic(fake: FakeProvider, **env: str) -> ModelConfig:
    return ModelConfig(
        spec="anthropic",
        base_url=fake.url,
        env={"ANTHROPIC_API_KEY": "key-123", **env},
        model="fake-model-1",
        timeout_s=5.0,
    )


def test_a_model_adapter_goes_through_the_environment_proxy() -> None:
    with FakeProvider("anthropic", key="key-123") as fake, RecordingProxy() as proxy:
        model = build_model(_anthropic(fake, HTTP_PROXY=proxy.url))
        try:
            completion = model.complete(PROMPT)
        finally:
            model.close()
    assert completion.text == FAKE_ANSWER
    (seen,) = proxy.seen
    assert (seen.method, seen.url) == ("POST", f"{fake.url}/v1/messages")
    assert len(fake.requests) == 1


def test_no_proxy_sends_a_model_call_direct() -> None:
    with FakeProvider("anthropic", key="key-123") as fake, RecordingProxy() as proxy:
        for no_proxy in ("127.0.0.1", "*"):
            env = {"http_proxy": proxy.url, "no_proxy": no_proxy}
            model = build_model(_anthropic(fake, **env))
            try:
                assert model.complete(PROMPT).text == FAKE_ANSWER
            finally:
                model.close()
    assert proxy.seen == []
    assert len(fake.requests) == 2


def test_https_proxy_is_mounted_for_https_model_endpoints() -> None:
    from custodian_runtime.llm._proxy import proxy_mounts

    mounts = proxy_mounts({"HTTPS_PROXY": "http://proxy.corp:3128", "NO_PROXY": "localhost,.corp"})
    transport = mounts["https://"]
    assert isinstance(transport, httpx.HTTPTransport)
    assert "http://" not in mounts
    assert mounts["all://localhost"] is None and mounts["all://*corp"] is None
    assert proxy_mounts({"NO_PROXY": "internal"}) == {}
