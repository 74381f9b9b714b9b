"""The shared retry and HTTP helpers: wait hints, budgets, jitter, URL joining."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime

import httpx
import pytest
import respx

from custodian_runtime.errors import ConfigError, ModelError
from custodian_runtime.llm._attempts import Retryable, call_model, model_policy
from custodian_runtime.llm._http import api_url
from custodian_runtime.llm.base import ModelConfig, Prompt
from custodian_runtime.llm.openai import OpenAIModel
from custodian_runtime.net.retry import RetryPolicy, retry_after_seconds
from support.fakes.clock import FakeSleep


def failing(times: int, hint: float | None = None) -> tuple[list[int], Callable[[], str]]:
    calls: list[int] = []

    def attempt() -> str:
        calls.append(1)
        if len(calls) <= times:
            raise Retryable(ModelError("busy", provider="p", status=503, retryable=True), hint)
        return "ok"

    return calls, attempt


def test_retry_after_forms() -> None:
    now = datetime.fromtimestamp(1445412480.0, UTC)
    assert retry_after_seconds({"retry-after-ms": "250"}, now=now) == 0.25
    assert retry_after_seconds({"retry-after": "12"}, now=now) == 12.0
    assert retry_after_seconds({"retry-after": "Wed, 21 Oct 2015 07:28:30 GMT"}, now=now) == 30.0
    assert retry_after_seconds({"retry-after": "soon"}, now=now) is None
    assert retry_after_seconds({}, now=now) is None


def test_total_budget_stops_before_a_sleep_that_would_overrun_it() -> None:
    sleep = FakeSleep()
    policy = RetryPolicy(
        max_attempts=10, max_wait_s=60.0, max_total_s=25.0, sleep=sleep, clock=sleep.clock
    )
    calls, attempt = failing(times=100, hint=10.0)
    with pytest.raises(ModelError) as caught:
        call_model(policy, attempt)
    assert sleep.calls == [10.0, 10.0]  # a third 10 s wait would end at 30 s > 25 s
    assert len(calls) == 3
    assert caught.value.attempts == 3


def test_full_jitter_stays_under_the_exponential_ceiling() -> None:
    sleep = FakeSleep()
    config = ModelConfig(spec="openai", max_attempts=6, max_retry_wait_s=3.0)
    policy = replace(model_policy(config, sleep=sleep), clock=sleep.clock, rng=lambda: 0.999)
    _, attempt = failing(times=5)
    assert call_model(policy, attempt) == "ok"
    assert sleep.calls == pytest.approx([0.999, 1.998, 2.997, 2.997, 2.997])


def test_x_should_retry_false_is_honoured(respx_mock: respx.MockRouter) -> None:
    route = respx_mock.post("https://api.openai.com/v1/chat/completions").mock(
        return_value=httpx.Response(
            503, json={"error": {"message": "no"}}, headers={"x-should-retry": "false"}
        )
    )
    adapter = OpenAIModel(
        ModelConfig(spec="openai", env={"OPENAI_API_KEY": "k"}), sleep=FakeSleep()
    )
    with pytest.raises(ModelError):
        adapter.complete(Prompt(system="s", user="u"))
    assert route.call_count == 1


@pytest.mark.parametrize(
    ("base", "url"),
    [
        ("https://api.openai.com/v1", "https://api.openai.com/v1/chat/completions"),
        ("https://api.openai.com/v1/", "https://api.openai.com/v1/chat/completions"),
        ("http://127.0.0.1:8000", "http://127.0.0.1:8000/v1/chat/completions"),
        ("https://gateway.example/openai/v1", "https://gateway.example/openai/v1/chat/completions"),
    ],
)
def test_api_url_adds_the_version_only_when_missing(base: str, url: str) -> None:
    assert api_url(base, "v1", "chat/completions") == url


def test_api_url_rejects_a_base_without_scheme() -> None:
    with pytest.raises(ConfigError, match="CUSTODIAN_LLM_BASE_URL"):
        api_url("localhost:8000", "v1", "chat/completions")


def test_each_request_timeout_is_cut_to_the_remaining_budget(respx_mock: respx.MockRouter) -> None:
    route = respx_mock.post("https://api.openai.com/v1/chat/completions").mock(
        return_value=httpx.Response(200, json={"choices": [{"message": {"content": "hi"}}]})
    )
    env = {"OPENAI_API_KEY": "k"}
    config = ModelConfig(spec="openai", env=env, timeout_s=300.0, max_total_s=42.0)
    OpenAIModel(config, sleep=FakeSleep()).complete(Prompt(system="s", user="u"))
    timeouts = route.calls.last.request.extensions["timeout"]
    assert timeouts["read"] == pytest.approx(42.0, abs=1.0)
    assert timeouts["connect"] == 10.0
