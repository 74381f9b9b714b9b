"""Ollama and OpenAI-compatible servers against respx: local URLs, optional keys, missing usage."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import httpx
import pytest
import respx

from custodian_runtime.errors import ConfigError, ModelError
from custodian_runtime.llm.base import ModelConfig, Prompt
from custodian_runtime.llm.ollama import OllamaModel, host_url
from custodian_runtime.llm.openai_compatible import OpenAICompatibleModel
from support.fakes.clock import FakeSleep

OLLAMA_URL = "http://localhost:11434/v1/chat/completions"
VLLM_URL = "http://127.0.0.1:8000/v1/chat/completions"
PROMPT = Prompt(system="You are the custodian.", user="Observe and plan.")
ANSWER = '```json\n{"actions": []}\n```'


def chat(content: Any, *, usage: bool = True, **message: Any) -> dict[str, Any]:
    """A chat completion as Ollama's OpenAI-compatible endpoint returns it."""
    body: dict[str, Any] = {
        "id": "chatcmpl-719",
        "object": "chat.completion",
        "created": 1747000000,
        "model": "llama3.1",
        "system_fingerprint": "fp_ollama",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, **message},
                "finish_reason": "stop",
            }
        ],
    }
    if usage:
        body["usage"] = {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150}
    return body


def ollama(sleep: FakeSleep, **overrides: Any) -> OllamaModel:
    return OllamaModel(replace(ModelConfig(spec="ollama"), **overrides), sleep=sleep)


def compatible(sleep: FakeSleep, **overrides: Any) -> OpenAICompatibleModel:
    config = ModelConfig(spec="openai-compatible", base_url="http://127.0.0.1:8000/v1")
    return OpenAICompatibleModel(replace(config, **overrides), sleep=sleep)


def test_ollama_default_request(respx_mock: respx.MockRouter) -> None:
    route = respx_mock.post(OLLAMA_URL).mock(return_value=httpx.Response(200, json=chat(ANSWER)))
    completion = ollama(FakeSleep(), max_output_tokens=900).complete(PROMPT)

    assert completion.text == ANSWER
    assert (completion.provider, completion.model) == ("ollama", "llama3.1")
    assert (completion.usage.input_tokens, completion.usage.output_tokens) == (120, 30)
    request = route.calls.last.request
    assert "authorization" not in request.headers
    sent = json.loads(request.content)
    assert sent["max_tokens"] == 900
    assert "max_completion_tokens" not in sent  # Ollama silently drops it
    assert sent["messages"][0] == {"role": "system", "content": "You are the custodian."}


@pytest.mark.parametrize(
    ("host", "url"),
    [
        ("127.0.0.1:11500", "http://127.0.0.1:11500"),
        ("gpu-box", "http://gpu-box:11434"),
        ("https://ollama.internal:443", "https://ollama.internal:443"),
        ("http://[::1]", "http://[::1]:11434"),
    ],
)
def test_ollama_host_forms(host: str, url: str) -> None:
    assert host_url(host) == url


def test_ollama_reads_ollama_host_and_base_url_wins(respx_mock: respx.MockRouter) -> None:
    from_host = respx_mock.post("http://127.0.0.1:11500/v1/chat/completions").mock(
        return_value=httpx.Response(200, json=chat(ANSWER))
    )
    from_base = respx_mock.post("http://127.0.0.1:9999/v1/chat/completions").mock(
        return_value=httpx.Response(200, json=chat(ANSWER))
    )
    ollama(FakeSleep(), env={"OLLAMA_HOST": "127.0.0.1:11500"}).complete(PROMPT)
    ollama(
        FakeSleep(), env={"OLLAMA_HOST": "127.0.0.1:11500"}, base_url="http://127.0.0.1:9999/v1"
    ).complete(PROMPT)
    assert (from_host.call_count, from_base.call_count) == (1, 1)


def test_ollama_429_with_http_date_retry_after_then_success(respx_mock: respx.MockRouter) -> None:
    # A date in the past means "now": wait zero, not a negative or a huge number.
    busy = httpx.Response(
        429,
        json={
            "error": {"message": "server busy", "type": "api_error", "param": None, "code": None}
        },
        headers={"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"},
    )
    route = respx_mock.post(OLLAMA_URL).mock(
        side_effect=[busy, httpx.Response(200, json=chat(ANSWER))]
    )
    sleep = FakeSleep()
    assert ollama(sleep).complete(PROMPT).text == ANSWER
    assert sleep.calls == [0.0]
    assert route.call_count == 2


def test_ollama_model_not_found_is_not_retried(respx_mock: respx.MockRouter) -> None:
    body = {
        "error": {
            "message": 'model "llama3.1" not found, try pulling it first',
            "type": "not_found_error",
            "param": None,
            "code": None,
        }
    }
    route = respx_mock.post(OLLAMA_URL).mock(return_value=httpx.Response(404, json=body))
    with pytest.raises(ModelError) as caught:
        ollama(FakeSleep()).complete(PROMPT)
    assert route.call_count == 1
    assert caught.value.code == "not_found_error"
    assert "try pulling it" in caught.value.message


def test_ollama_500_until_give_up(respx_mock: respx.MockRouter) -> None:
    body = {
        "error": {
            "message": "llama runner process has terminated",
            "type": "api_error",
            "param": None,
            "code": None,
        }
    }
    route = respx_mock.post(OLLAMA_URL).mock(return_value=httpx.Response(500, json=body))
    with pytest.raises(ModelError) as caught:
        ollama(FakeSleep(), max_attempts=2).complete(PROMPT)
    assert (route.call_count, caught.value.attempts) == (2, 2)


def test_ollama_key_behind_a_proxy_and_401_not_retried(respx_mock: respx.MockRouter) -> None:
    route = respx_mock.post(OLLAMA_URL).mock(return_value=httpx.Response(401, text="Unauthorized"))
    with pytest.raises(ModelError, match="OLLAMA_API_KEY") as caught:
        ollama(FakeSleep(), env={"OLLAMA_API_KEY": "proxy-key"}).complete(PROMPT)
    assert route.calls.last.request.headers["authorization"] == "Bearer proxy-key"
    assert route.call_count == 1
    assert caught.value.message.count("Unauthorized") == 1


def test_reasoning_without_content_is_an_error(respx_mock: respx.MockRouter) -> None:
    respx_mock.post(OLLAMA_URL).mock(
        return_value=httpx.Response(200, json=chat("", reasoning="thinking..."))
    )
    with pytest.raises(ModelError) as caught:
        ollama(FakeSleep()).complete(PROMPT)
    assert caught.value.code == "empty"


def test_compatible_requires_a_base_url() -> None:
    with pytest.raises(ConfigError) as caught:
        OpenAICompatibleModel(ModelConfig(spec="openai-compatible"))
    assert caught.value.setting == "CUSTODIAN_LLM_BASE_URL"


def test_compatible_without_usage_and_with_optional_key(respx_mock: respx.MockRouter) -> None:
    route = respx_mock.post(VLLM_URL).mock(
        return_value=httpx.Response(200, json=chat(ANSWER, usage=False))
    )
    adapter = compatible(
        FakeSleep(), env={"OPENAI_COMPATIBLE_API_KEY": "local-key"}, model="Qwen/Qwen2.5-7B"
    )
    completion = adapter.complete(PROMPT)

    assert completion.usage.input_tokens is None
    assert completion.usage.output_tokens is None
    assert completion.provider == "openai-compatible"
    request = route.calls.last.request
    assert request.headers["authorization"] == "Bearer local-key"
    sent = json.loads(request.content)
    assert (sent["model"], sent["max_tokens"]) == ("Qwen/Qwen2.5-7B", 8192)


def test_compatible_adds_v1_to_a_bare_base_url_and_reads_text_parts(
    respx_mock: respx.MockRouter,
) -> None:
    parts = [
        {"type": "text", "text": "```json\n"},
        {"type": "text", "text": '{"actions": []}\n```'},
    ]
    route = respx_mock.post(VLLM_URL).mock(return_value=httpx.Response(200, json=chat(parts)))
    completion = compatible(FakeSleep(), base_url="http://127.0.0.1:8000/").complete(PROMPT)
    assert completion.text == ANSWER
    assert "authorization" not in route.calls.last.request.headers


def test_compatible_non_json_200_is_an_error(respx_mock: respx.MockRouter) -> None:
    respx_mock.post(VLLM_URL).mock(
        return_value=httpx.Response(200, text="<html>proxy login</html>")
    )
    with pytest.raises(ModelError, match="not a JSON object"):
        compatible(FakeSleep()).complete(PROMPT)
