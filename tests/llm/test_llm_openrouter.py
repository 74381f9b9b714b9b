"""OpenRouter adapter against respx: attribution headers, cost, 402, errors inside a 200."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import httpx
import pytest
import respx

from custodian_runtime.errors import ConfigError, ModelError
from custodian_runtime.llm.base import ModelConfig, Prompt
from custodian_runtime.llm.openrouter import OpenRouterModel
from support.fakes.clock import FakeSleep

URL = "https://openrouter.ai/api/v1/chat/completions"
PROMPT = Prompt(system="You are the custodian.", user="Observe and plan.")
ANSWER = 'Nothing to do.\n```json\n{"actions": []}\n```'

OK: dict[str, Any] = {
    "id": "gen-1747000000-abcdef",
    "provider": "Anthropic",
    "model": "anthropic/claude-sonnet-4.5",
    "object": "chat.completion",
    "created": 1747000000,
    "choices": [
        {
            "logprobs": None,
            "finish_reason": "stop",
            "native_finish_reason": "end_turn",
            "index": 0,
            "message": {"role": "assistant", "content": ANSWER, "refusal": None, "reasoning": None},
        }
    ],
    "usage": {
        "prompt_tokens": 1200,
        "completion_tokens": 40,
        "total_tokens": 1240,
        "cost": 0.00420,
        "is_byok": False,
        "prompt_tokens_details": {"cached_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0},
    },
}


def in_body_error(code: int, message: str) -> dict[str, Any]:
    """A 200 whose body reports an error that happened after processing began."""
    return {
        "id": "gen-1747000001-xyz",
        "object": "chat.completion",
        "created": 1747000001,
        "model": "anthropic/claude-sonnet-4.5",
        "provider": "Anthropic",
        "error": {"code": code, "message": message, "metadata": {"provider_name": "Anthropic"}},
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": ""},
                "finish_reason": "error",
                "native_finish_reason": "error",
            }
        ],
    }


def model(sleep: FakeSleep, **overrides: Any) -> OpenRouterModel:
    config = ModelConfig(spec="openrouter", env={"OPENROUTER_API_KEY": "sk-or-v1-test"})
    return OpenRouterModel(replace(config, **overrides), sleep=sleep)


def test_success_sends_attribution_headers_and_reads_cost(respx_mock: respx.MockRouter) -> None:
    route = respx_mock.post(URL).mock(return_value=httpx.Response(200, json=OK))
    completion = model(FakeSleep(), max_output_tokens=3000).complete(PROMPT)

    assert completion.text == ANSWER
    assert completion.model == "anthropic/claude-sonnet-4.5"
    assert completion.usage.cost_usd == pytest.approx(0.0042)
    assert (completion.usage.input_tokens, completion.usage.output_tokens) == (1200, 40)
    assert completion.request_id == "gen-1747000000-abcdef"
    request = route.calls.last.request
    assert request.headers["authorization"] == "Bearer sk-or-v1-test"
    assert request.headers["http-referer"] == "https://custodian.invalid"
    assert request.headers["x-openrouter-title"] == "Custodian"
    assert request.headers["x-title"] == "Custodian"
    assert json.loads(request.content) == {
        "model": "anthropic/claude-sonnet-4.5",
        "messages": [
            {"role": "system", "content": "You are the custodian."},
            {"role": "user", "content": "Observe and plan."},
        ],
        "max_tokens": 3000,
        "temperature": 0.0,
    }


def test_attribution_can_be_set_from_the_environment(respx_mock: respx.MockRouter) -> None:
    route = respx_mock.post(URL).mock(return_value=httpx.Response(200, json=OK))
    env = {
        "OPENROUTER_API_KEY": "k",
        "OPENROUTER_APP_URL": "https://ops.example.org",
        "OPENROUTER_APP_TITLE": "Ops",
    }
    model(FakeSleep(), env=env).complete(PROMPT)
    headers = route.calls.last.request.headers
    assert (headers["http-referer"], headers["x-openrouter-title"], headers["x-title"]) == (
        "https://ops.example.org",
        "Ops",
        "Ops",
    )


def test_429_with_retry_after_then_success(respx_mock: respx.MockRouter) -> None:
    limited = httpx.Response(
        429,
        json={"error": {"code": 429, "message": "Rate limit exceeded"}},
        headers={"Retry-After": "4"},
    )
    route = respx_mock.post(URL).mock(side_effect=[limited, httpx.Response(200, json=OK)])
    sleep = FakeSleep()
    assert model(sleep).complete(PROMPT).text == ANSWER
    assert sleep.calls == [4.0]
    assert route.call_count == 2


def test_502_until_give_up(respx_mock: respx.MockRouter) -> None:
    body = {
        "error": {
            "code": 502,
            "message": "Provider returned error",
            "metadata": {"provider_name": "Anthropic"},
        }
    }
    route = respx_mock.post(URL).mock(return_value=httpx.Response(502, json=body))
    with pytest.raises(ModelError) as caught:
        model(FakeSleep(), max_attempts=2).complete(PROMPT)
    assert route.call_count == 2
    assert caught.value.attempts == 2
    assert "upstream provider Anthropic" in caught.value.message


def test_402_insufficient_credits_is_not_retried(respx_mock: respx.MockRouter) -> None:
    body = {
        "error": {
            "code": 402,
            "message": "This request requires more credits, or fewer max_tokens.",
        }
    }
    route = respx_mock.post(URL).mock(return_value=httpx.Response(402, json=body))
    with pytest.raises(ModelError) as caught:
        model(FakeSleep()).complete(PROMPT)
    assert route.call_count == 1
    assert (caught.value.status, caught.value.code, caught.value.retryable) == (402, "402", False)


def test_auth_error_is_not_retried(respx_mock: respx.MockRouter) -> None:
    route = respx_mock.post(URL).mock(
        return_value=httpx.Response(
            401, json={"error": {"code": 401, "message": "No auth credentials found"}}
        )
    )
    with pytest.raises(ModelError, match="OPENROUTER_API_KEY"):
        model(FakeSleep()).complete(PROMPT)
    assert route.call_count == 1


def test_transient_error_inside_a_200_is_retried(respx_mock: respx.MockRouter) -> None:
    route = respx_mock.post(URL).mock(
        side_effect=[
            httpx.Response(200, json=in_body_error(502, "Provider returned error")),
            httpx.Response(200, json=OK),
        ]
    )
    sleep = FakeSleep()
    assert model(sleep).complete(PROMPT).text == ANSWER
    assert route.call_count == 2
    assert len(sleep.calls) == 1


def test_permanent_error_inside_a_200_is_a_model_error(respx_mock: respx.MockRouter) -> None:
    route = respx_mock.post(URL).mock(
        return_value=httpx.Response(200, json=in_body_error(400, "Invalid prompt"))
    )
    with pytest.raises(ModelError) as caught:
        model(FakeSleep()).complete(PROMPT)
    assert route.call_count == 1
    assert caught.value.code == "400"
    assert "Invalid prompt" in caught.value.message
    assert caught.value.request_id == "gen-1747000001-xyz"


def test_truncated_answer_is_an_error(respx_mock: respx.MockRouter) -> None:
    body = json.loads(json.dumps(OK))
    body["choices"][0]["finish_reason"] = "length"
    respx_mock.post(URL).mock(return_value=httpx.Response(200, json=body))
    with pytest.raises(ModelError, match="cut off"):
        model(FakeSleep()).complete(PROMPT)


def test_missing_key_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="OPENROUTER_API_KEY"):
        OpenRouterModel(ModelConfig(spec="openrouter"))
