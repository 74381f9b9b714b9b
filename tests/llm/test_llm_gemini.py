"""Gemini adapter against respx, with payloads shaped as in the generateContent docs."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import httpx
import pytest
import respx

from custodian_runtime.errors import ConfigError, ModelError
from custodian_runtime.llm.base import ModelConfig, Prompt
from custodian_runtime.llm.gemini import GeminiModel
from support.fakes.clock import FakeSleep

URL = "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent"
PROMPT = Prompt(system="You are the custodian.", user="Observe and plan.")
ANSWER = '```json\n{"actions": []}\n```'
QUOTA_METRIC = "generativelanguage.googleapis.com/generate_content_free_tier_requests"
SAFETY = [{"category": "HARM_CATEGORY_HARASSMENT", "probability": "NEGLIGIBLE"}]


def generated(finish: str = "STOP") -> dict[str, Any]:
    """A GenerateContentResponse with a thought part before the answer."""
    return {
        "candidates": [
            {
                "content": {
                    "parts": [
                        {"text": "Considering the tasks...", "thought": True},
                        {"text": ANSWER},
                    ],
                    "role": "model",
                },
                "finishReason": finish,
                "index": 0,
                "safetyRatings": SAFETY,
            }
        ],
        "usageMetadata": {
            "promptTokenCount": 10,
            "candidatesTokenCount": 20,
            "totalTokenCount": 130,
            "thoughtsTokenCount": 100,
            "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 10}],
        },
        "modelVersion": "gemini-2.5-flash",
        "responseId": "mAitaLmkHPPlz7IPvtfUqQ4",
    }


def quota_error(quota_id: str, retry_delay: str) -> dict[str, Any]:
    return {
        "error": {
            "code": 429,
            "message": "You exceeded your current quota, please check your plan and billing.",
            "status": "RESOURCE_EXHAUSTED",
            "details": [
                {
                    "@type": "type.googleapis.com/google.rpc.QuotaFailure",
                    "violations": [
                        {
                            "quotaMetric": QUOTA_METRIC,
                            "quotaId": quota_id,
                            "quotaDimensions": {"location": "global", "model": "gemini-2.5-flash"},
                            "quotaValue": "10",
                        }
                    ],
                },
                {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": retry_delay},
            ],
        }
    }


def model(sleep: FakeSleep, **overrides: Any) -> GeminiModel:
    config = ModelConfig(spec="gemini", env={"GEMINI_API_KEY": "AIza-test"})
    return GeminiModel(replace(config, **overrides), sleep=sleep)


def test_success_sends_documented_request_and_skips_thoughts(respx_mock: respx.MockRouter) -> None:
    route = respx_mock.post(URL).mock(return_value=httpx.Response(200, json=generated()))
    completion = model(FakeSleep(), max_output_tokens=1234).complete(PROMPT)

    assert completion.text == ANSWER
    assert completion.model == "gemini-2.5-flash"
    assert completion.request_id == "mAitaLmkHPPlz7IPvtfUqQ4"
    assert (completion.usage.input_tokens, completion.usage.output_tokens) == (10, 120)
    request = route.calls.last.request
    assert request.headers["x-goog-api-key"] == "AIza-test"
    assert "key=" not in str(request.url)  # the key travels in the header, not the URL
    assert json.loads(request.content) == {
        "systemInstruction": {"parts": [{"text": "You are the custodian."}]},
        "contents": [{"role": "user", "parts": [{"text": "Observe and plan."}]}],
        "generationConfig": {"maxOutputTokens": 1234, "temperature": 0.0},
    }


def test_per_minute_quota_waits_for_retry_info_then_succeeds(respx_mock: respx.MockRouter) -> None:
    limited = httpx.Response(
        429, json=quota_error("GenerateRequestsPerMinutePerProjectPerModel-FreeTier", "37s")
    )
    route = respx_mock.post(URL).mock(side_effect=[limited, httpx.Response(200, json=generated())])
    sleep = FakeSleep()
    assert model(sleep).complete(PROMPT).text == ANSWER
    assert sleep.calls == [37.0]
    assert route.call_count == 2


def test_retry_after_header_wins_over_retry_info(respx_mock: respx.MockRouter) -> None:
    limited = httpx.Response(
        429,
        json=quota_error("GenerateRequestsPerMinutePerProjectPerModel", "37s"),
        headers={"retry-after": "5"},
    )
    respx_mock.post(URL).mock(side_effect=[limited, httpx.Response(200, json=generated())])
    sleep = FakeSleep()
    model(sleep).complete(PROMPT)
    assert sleep.calls == [5.0]


def test_daily_quota_is_not_retried(respx_mock: respx.MockRouter) -> None:
    limited = httpx.Response(
        429, json=quota_error("GenerateRequestsPerDayPerProjectPerModel-FreeTier", "20s")
    )
    route = respx_mock.post(URL).mock(return_value=limited)
    with pytest.raises(ModelError) as caught:
        model(FakeSleep()).complete(PROMPT)
    assert route.call_count == 1
    assert caught.value.code == "RESOURCE_EXHAUSTED"
    assert "daily quota" in caught.value.message
    assert not caught.value.retryable


def test_503_unavailable_until_give_up(respx_mock: respx.MockRouter) -> None:
    body = {
        "error": {
            "code": 503,
            "message": "The model is overloaded. Please try again later.",
            "status": "UNAVAILABLE",
        }
    }
    route = respx_mock.post(URL).mock(return_value=httpx.Response(503, json=body))
    with pytest.raises(ModelError) as caught:
        model(FakeSleep(), max_attempts=3).complete(PROMPT)
    assert route.call_count == 3
    assert (caught.value.attempts, caught.value.code) == (3, "UNAVAILABLE")


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (
            400,
            {
                "error": {
                    "code": 400,
                    "message": "API key not valid. Please pass a valid API key.",
                    "status": "INVALID_ARGUMENT",
                    "details": [
                        {
                            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                            "reason": "API_KEY_INVALID",
                            "domain": "googleapis.com",
                        }
                    ],
                }
            },
        ),
        (
            403,
            {
                "error": {
                    "code": 403,
                    "message": "Permission denied.",
                    "status": "PERMISSION_DENIED",
                }
            },
        ),
    ],
)
def test_auth_errors_are_not_retried(
    respx_mock: respx.MockRouter, status: int, body: dict[str, Any]
) -> None:
    route = respx_mock.post(URL).mock(return_value=httpx.Response(status, json=body))
    with pytest.raises(ModelError, match="GEMINI_API_KEY"):
        model(FakeSleep()).complete(PROMPT)
    assert route.call_count == 1


def test_blocked_prompt_names_the_block_reason(respx_mock: respx.MockRouter) -> None:
    blocked = {
        "promptFeedback": {"blockReason": "PROHIBITED_CONTENT", "safetyRatings": SAFETY},
        "usageMetadata": {"promptTokenCount": 8, "totalTokenCount": 8},
        "modelVersion": "gemini-2.5-flash",
        "responseId": "blocked-1",
    }
    route = respx_mock.post(URL).mock(return_value=httpx.Response(200, json=blocked))
    with pytest.raises(ModelError) as caught:
        model(FakeSleep()).complete(PROMPT)
    assert route.call_count == 1
    assert caught.value.code == "PROHIBITED_CONTENT"
    assert "blockReason PROHIBITED_CONTENT" in caught.value.message


@pytest.mark.parametrize("finish", ["MAX_TOKENS", "SAFETY", "RECITATION"])
def test_unfinished_candidates_are_errors(respx_mock: respx.MockRouter, finish: str) -> None:
    respx_mock.post(URL).mock(return_value=httpx.Response(200, json=generated(finish)))
    with pytest.raises(ModelError) as caught:
        model(FakeSleep(), max_output_tokens=64).complete(PROMPT)
    assert caught.value.code == finish
    if finish == "MAX_TOKENS":
        assert "maxOutputTokens=64" in caught.value.message


def test_model_and_base_url_override(respx_mock: respx.MockRouter) -> None:
    route = respx_mock.post("http://127.0.0.1:9/v1beta/models/gemini-2.5-pro:generateContent").mock(
        return_value=httpx.Response(200, json=generated())
    )
    model(FakeSleep(), model="models/gemini-2.5-pro", base_url="http://127.0.0.1:9").complete(
        PROMPT
    )
    assert route.call_count == 1


def test_missing_key_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="GEMINI_API_KEY"):
        GeminiModel(ModelConfig(spec="gemini", env={"GOOGLE_API_KEY": "x"}))
