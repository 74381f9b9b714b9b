"""Anthropic adapter against respx, with payloads shaped as in the Messages API docs."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import httpx
import pytest
import respx

from custodian_runtime.errors import ConfigError, ModelError
from custodian_runtime.llm.anthropic import AnthropicModel
from custodian_runtime.llm.base import ModelConfig, Prompt
from support.fakes.clock import FakeSleep

URL = "https://api.anthropic.com/v1/messages"
PROMPT = Prompt(system="You are the custodian.", user="Observe and plan.")

OK = {
    "id": "msg_013Zva2CMHLNnXjNJJKqJ2EF",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-5-20250929",
    "content": [
        {"type": "thinking", "thinking": "Let me look at the tasks.", "signature": "EqQBCgIYAh..."},
        {"type": "text", "text": "## Plan\n"},
        {"type": "tool_use", "id": "toolu_01", "name": "noop", "input": {}},
        {"type": "text", "text": '```json\n{"actions": []}\n```'},
    ],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {
        "input_tokens": 2095,
        "output_tokens": 503,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    },
}


def error(kind: str, message: str, **extra: object) -> dict[str, object]:
    """An error body as the API documents it."""
    return {
        "type": "error",
        "error": {"type": kind, "message": message, **extra},
        "request_id": "req_011",
    }


def model(sleep: FakeSleep, **overrides: Any) -> AnthropicModel:
    config = ModelConfig(spec="anthropic", env={"ANTHROPIC_API_KEY": "sk-ant-test"})
    return AnthropicModel(replace(config, **overrides), sleep=sleep)


def test_success_sends_the_documented_request_and_joins_text_blocks(
    respx_mock: respx.MockRouter,
) -> None:
    route = respx_mock.post(URL).mock(
        return_value=httpx.Response(200, json=OK, headers={"request-id": "req_abc"})
    )
    completion = model(FakeSleep(), max_output_tokens=4000).complete(PROMPT)

    assert completion.text == '## Plan\n```json\n{"actions": []}\n```'
    assert completion.model == "claude-sonnet-4-5-20250929"
    assert completion.provider == "anthropic"
    assert (completion.usage.input_tokens, completion.usage.output_tokens) == (2095, 503)
    assert completion.request_id == "req_abc"
    request = route.calls.last.request
    assert request.headers["x-api-key"] == "sk-ant-test"
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert request.headers["content-type"] == "application/json"
    assert "authorization" not in request.headers
    assert json.loads(request.content) == {
        "model": "claude-sonnet-4-5",
        "max_tokens": 4000,
        "temperature": 0.0,
        "system": "You are the custodian.",
        "messages": [{"role": "user", "content": "Observe and plan."}],
    }


def test_429_with_retry_after_waits_that_long_then_succeeds(respx_mock: respx.MockRouter) -> None:
    limited = httpx.Response(
        429,
        json=error("rate_limit_error", "Number of requests has exceeded your rate limit"),
        headers={"retry-after": "7"},
    )
    route = respx_mock.post(URL).mock(side_effect=[limited, httpx.Response(200, json=OK)])
    sleep = FakeSleep()

    assert model(sleep).complete(PROMPT).text.startswith("## Plan")
    assert sleep.calls == [7.0]
    assert route.call_count == 2


def test_529_overloaded_is_retried(respx_mock: respx.MockRouter) -> None:
    overloaded = httpx.Response(529, json=error("overloaded_error", "Overloaded"))
    route = respx_mock.post(URL).mock(
        side_effect=[overloaded, overloaded, httpx.Response(200, json=OK)]
    )
    sleep = FakeSleep()

    assert model(sleep).complete(PROMPT).model == "claude-sonnet-4-5-20250929"
    assert route.call_count == 3
    assert len(sleep.calls) == 2
    assert all(0.0 <= wait <= 2.0 for wait in sleep.calls)  # full jitter under 1 s, then 2 s


def test_5xx_until_give_up_counts_attempts(respx_mock: respx.MockRouter) -> None:
    route = respx_mock.post(URL).mock(
        return_value=httpx.Response(
            500, json=error("api_error", "Internal server error"), headers={"request-id": "req_500"}
        )
    )
    with pytest.raises(ModelError) as caught:
        model(FakeSleep(), max_attempts=3).complete(PROMPT)

    assert route.call_count == 3
    err = caught.value
    assert (err.attempts, err.status, err.code, err.retryable) == (3, 500, "api_error", True)
    assert err.request_id == "req_500"
    assert "gave up after 3 attempts" in err.message


def test_authentication_error_is_not_retried(respx_mock: respx.MockRouter) -> None:
    route = respx_mock.post(URL).mock(
        return_value=httpx.Response(401, json=error("authentication_error", "invalid x-api-key"))
    )
    sleep = FakeSleep()
    with pytest.raises(ModelError) as caught:
        model(sleep).complete(PROMPT)

    assert route.call_count == 1
    assert sleep.calls == []
    assert caught.value.status == 401
    assert caught.value.request_id == "req_011"
    assert "ANTHROPIC_API_KEY" in caught.value.message
    assert not caught.value.retryable


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (402, error("billing_error", "Your credit balance is too low")),
        (
            429,
            error(
                "rate_limit_error",
                "spend limit",
                details={"error_code": "enforced_spend_limit_reached"},
            ),
        ),
        (400, error("invalid_request_error", "max_tokens: must be at most 64000")),
        (404, error("not_found_error", "model: claude-nope")),
    ],
)
def test_billing_spend_limit_and_invalid_requests_are_not_retried(
    respx_mock: respx.MockRouter, status: int, body: dict[str, object]
) -> None:
    route = respx_mock.post(URL).mock(
        return_value=httpx.Response(status, json=body, headers={"retry-after": "1"})
    )
    with pytest.raises(ModelError) as caught:
        model(FakeSleep()).complete(PROMPT)
    assert route.call_count == 1
    assert caught.value.status == status
    assert not caught.value.retryable


def test_cut_off_by_max_tokens_is_an_error(respx_mock: respx.MockRouter) -> None:
    respx_mock.post(URL).mock(
        return_value=httpx.Response(200, json={**OK, "stop_reason": "max_tokens"})
    )
    with pytest.raises(ModelError) as caught:
        model(FakeSleep(), max_output_tokens=100).complete(PROMPT)
    assert caught.value.code == "max_tokens"
    assert "max_tokens=100" in caught.value.message


def test_answer_with_only_thinking_is_an_error(respx_mock: respx.MockRouter) -> None:
    body = {**OK, "content": [{"type": "thinking", "thinking": "hmm", "signature": "x"}]}
    respx_mock.post(URL).mock(return_value=httpx.Response(200, json=body))
    with pytest.raises(ModelError, match="no text"):
        model(FakeSleep()).complete(PROMPT)


def test_transport_errors_are_retried(respx_mock: respx.MockRouter) -> None:
    route = respx_mock.post(URL).mock(
        side_effect=[httpx.ConnectError("refused"), httpx.Response(200, json=OK)]
    )
    assert model(FakeSleep()).complete(PROMPT).text
    assert route.call_count == 2


def test_missing_key_is_a_config_error_naming_the_variable() -> None:
    with pytest.raises(ConfigError) as caught:
        AnthropicModel(ModelConfig(spec="anthropic", env={}))
    assert caught.value.setting == "ANTHROPIC_API_KEY"


def test_base_url_and_model_override(respx_mock: respx.MockRouter) -> None:
    route = respx_mock.post("http://127.0.0.1:9/v1/messages").mock(
        return_value=httpx.Response(200, json=OK)
    )
    adapter = model(FakeSleep(), base_url="http://127.0.0.1:9", model="claude-opus-4-1")
    adapter.complete(PROMPT)
    assert adapter.model_name == "claude-opus-4-1"
    assert json.loads(route.calls.last.request.content)["model"] == "claude-opus-4-1"
