"""OpenAI adapter against respx, with payloads shaped as in the chat completions reference."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import httpx
import pytest
import respx

from custodian_runtime.errors import ConfigError, ModelError
from custodian_runtime.llm.base import ModelConfig, Prompt
from custodian_runtime.llm.openai import OpenAIModel
from support.fakes.clock import FakeSleep

URL = "https://api.openai.com/v1/chat/completions"
PROMPT = Prompt(system="You are the custodian.", user="Observe and plan.")


def chat(content: str | None, finish: str = "stop") -> dict[str, Any]:
    """A chat.completion object as the API reference shows it."""
    return {
        "id": "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT",
        "object": "chat.completion",
        "created": 1741569952,
        "model": "gpt-4.1-2025-04-14",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": content,
                    "refusal": None,
                    "annotations": [],
                },
                "logprobs": None,
                "finish_reason": finish,
            }
        ],
        "usage": {
            "prompt_tokens": 19,
            "completion_tokens": 10,
            "total_tokens": 29,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
        },
        "service_tier": "default",
    }


def error(message: str, kind: str, code: str | None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


ANSWER = '```json\n{"actions": []}\n```'


def model(sleep: FakeSleep, **overrides: Any) -> OpenAIModel:
    config = ModelConfig(spec="openai", env={"OPENAI_API_KEY": "sk-test"})
    return OpenAIModel(replace(config, **overrides), sleep=sleep)


def test_success_sends_bearer_system_message_and_max_completion_tokens(
    respx_mock: respx.MockRouter,
) -> None:
    route = respx_mock.post(URL).mock(
        return_value=httpx.Response(200, json=chat(ANSWER), headers={"x-request-id": "req_123"})
    )
    completion = model(FakeSleep(), max_output_tokens=2048).complete(PROMPT)

    assert completion.text == ANSWER
    assert completion.model == "gpt-4.1-2025-04-14"
    assert completion.usage.input_tokens == 19
    assert completion.usage.output_tokens == 10
    assert completion.usage.cost_usd is None
    assert completion.request_id == "req_123"
    request = route.calls.last.request
    assert request.headers["authorization"] == "Bearer sk-test"
    assert json.loads(request.content) == {
        "model": "gpt-4.1",
        "messages": [
            {"role": "system", "content": "You are the custodian."},
            {"role": "user", "content": "Observe and plan."},
        ],
        "max_completion_tokens": 2048,
        "temperature": 0.0,
    }


def test_429_with_retry_after_ms_then_success(respx_mock: respx.MockRouter) -> None:
    limited = httpx.Response(
        429,
        json=error(
            "Rate limit reached for gpt-4.1 on tokens per min (TPM). Please try again in 1.5s.",
            "tokens",
            "rate_limit_exceeded",
        ),
        headers={"retry-after-ms": "1500", "retry-after": "2", "x-ratelimit-reset-tokens": "1.5s"},
    )
    route = respx_mock.post(URL).mock(side_effect=[limited, httpx.Response(200, json=chat(ANSWER))])
    sleep = FakeSleep()

    assert model(sleep).complete(PROMPT).text == ANSWER
    assert sleep.calls == [1.5]  # retry-after-ms wins over retry-after
    assert route.call_count == 2


def test_retry_after_is_capped_at_max_retry_wait(respx_mock: respx.MockRouter) -> None:
    limited = httpx.Response(
        429,
        json=error("slow down", "requests", "rate_limit_exceeded"),
        headers={"retry-after": "3600"},
    )
    respx_mock.post(URL).mock(side_effect=[limited, httpx.Response(200, json=chat(ANSWER))])
    sleep = FakeSleep()
    model(sleep, max_retry_wait_s=20.0).complete(PROMPT)
    assert sleep.calls == [20.0]


def test_5xx_until_give_up(respx_mock: respx.MockRouter) -> None:
    route = respx_mock.post(URL).mock(
        return_value=httpx.Response(
            503, json=error("The server is overloaded", "server_error", None)
        )
    )
    sleep = FakeSleep()
    with pytest.raises(ModelError) as caught:
        model(sleep, max_attempts=4).complete(PROMPT)
    assert route.call_count == 4
    assert len(sleep.calls) == 3
    assert caught.value.attempts == 4
    assert caught.value.status == 503


def test_insufficient_quota_is_not_retried(respx_mock: respx.MockRouter) -> None:
    body = error(
        "You exceeded your current quota, please check your plan and billing details.",
        "insufficient_quota",
        "insufficient_quota",
    )
    route = respx_mock.post(URL).mock(
        return_value=httpx.Response(429, json=body, headers={"retry-after": "1"})
    )
    with pytest.raises(ModelError) as caught:
        model(FakeSleep()).complete(PROMPT)
    assert route.call_count == 1
    assert caught.value.code == "insufficient_quota"
    assert not caught.value.retryable
    assert "retrying will not help" in caught.value.message


def test_invalid_key_is_not_retried(respx_mock: respx.MockRouter) -> None:
    body = error("Incorrect API key provided: sk-test.", "invalid_request_error", "invalid_api_key")
    route = respx_mock.post(URL).mock(
        return_value=httpx.Response(401, json=body, headers={"x-request-id": "req_401"})
    )
    with pytest.raises(ModelError) as caught:
        model(FakeSleep()).complete(PROMPT)
    assert route.call_count == 1
    assert (caught.value.status, caught.value.code, caught.value.request_id) == (
        401,
        "invalid_api_key",
        "req_401",
    )
    assert "OPENAI_API_KEY" in caught.value.message


def test_finish_reason_length_is_an_error(respx_mock: respx.MockRouter) -> None:
    respx_mock.post(URL).mock(
        return_value=httpx.Response(200, json=chat('```json\n{"act', "length"))
    )
    with pytest.raises(ModelError) as caught:
        model(FakeSleep(), max_output_tokens=50).complete(PROMPT)
    assert caught.value.code == "max_tokens"
    assert "max_completion_tokens=50" in caught.value.message


def test_null_content_with_refusal_is_an_error(respx_mock: respx.MockRouter) -> None:
    body = chat(None)
    body["choices"][0]["message"]["refusal"] = "I can't help with that."
    respx_mock.post(URL).mock(return_value=httpx.Response(200, json=body))
    with pytest.raises(ModelError, match="can't help"):
        model(FakeSleep()).complete(PROMPT)


def test_prompt_limit_below_config_limit_wins(respx_mock: respx.MockRouter) -> None:
    route = respx_mock.post(URL).mock(return_value=httpx.Response(200, json=chat(ANSWER)))
    model(FakeSleep(), max_output_tokens=8000).complete(
        Prompt(system="", user="u", max_output_tokens=1000)
    )
    sent = json.loads(route.calls.last.request.content)
    assert sent["max_completion_tokens"] == 1000
    assert sent["messages"] == [{"role": "user", "content": "u"}]  # no empty system message


def test_missing_key_is_a_config_error() -> None:
    with pytest.raises(ConfigError) as caught:
        OpenAIModel(ModelConfig(spec="openai", env={"ANTHROPIC_API_KEY": "x"}))
    assert caught.value.setting == "OPENAI_API_KEY"
    assert "OPENAI_API_KEY" in caught.value.message
