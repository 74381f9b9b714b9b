"""Each HTTP adapter over real loopback HTTP against the fake provider servers."""

from __future__ import annotations

import pytest

from custodian_runtime.errors import ModelError
from custodian_runtime.llm.base import ModelConfig, Prompt
from custodian_runtime.llm.openai import OpenAIModel
from custodian_runtime.llm.registry import build_model
from support.fakes.clock import FakeSleep
from support.fakes.providers import FAKE_ANSWER, FakeProvider, Reply

PROMPT = Prompt(system="You are the custodian.", user="Observe and plan.")
KEYS = {
    "anthropic": "ANTHROPIC_API_KEY",
    "openai": "OPENAI_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
    "gemini": "GEMINI_API_KEY",
    "ollama": "OLLAMA_API_KEY",
    "openai-compatible": "OPENAI_COMPATIBLE_API_KEY",
}

PATHS = {
    "anthropic": "/v1/messages",
    "openai": "/v1/chat/completions",
    "openrouter": "/api/v1/chat/completions",
    "gemini": "/v1beta/models/fake-model-1:generateContent",
    "ollama": "/v1/chat/completions",
    "openai-compatible": "/v1/chat/completions",
}


def config(kind: str, fake: FakeProvider, **fields: object) -> ModelConfig:
    return ModelConfig(
        spec=kind,
        base_url=fake.url,
        env={KEYS[kind]: "key-123"},
        model="fake-model-1",
        timeout_s=5.0,
        **fields,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize("kind", sorted(KEYS))
def test_adapter_answers_over_real_http(kind: str) -> None:
    with FakeProvider(kind, key="key-123") as fake:
        model = build_model(config(kind, fake))
        try:
            completion = model.complete(PROMPT)
        finally:
            model.close()

    assert completion.text == FAKE_ANSWER
    assert completion.provider == kind
    assert completion.model == "fake-model-1"
    assert (completion.usage.input_tokens, completion.usage.output_tokens) == (321, 54)
    [request] = fake.requests
    assert request.path == PATHS[kind]
    assert "Observe and plan." in str(request.body)
    assert "You are the custodian." in str(request.body)


@pytest.mark.parametrize("kind", ["anthropic", "openai", "gemini"])
def test_wrong_key_is_an_auth_error_over_real_http(kind: str) -> None:
    with FakeProvider(kind, key="the-right-key") as fake:
        model = build_model(config(kind, fake))
        with pytest.raises(ModelError) as caught:
            model.complete(PROMPT)
        model.close()
    assert caught.value.status == 401
    assert len(fake.requests) == 1


def test_scripted_429_is_retried_over_real_http() -> None:
    limited = Reply(
        429,
        {"error": {"message": "slow down", "type": "requests", "code": "rate_limit_exceeded"}},
        {"retry-after-ms": "250"},
    )
    sleep = FakeSleep()
    with FakeProvider("openai", replies=(limited,)) as fake:
        model = OpenAIModel(config("openai", fake), sleep=sleep)
        completion = model.complete(PROMPT)
        model.close()
    assert completion.text == FAKE_ANSWER
    assert sleep.calls == [0.25]
    assert len(fake.requests) == 2


def test_answer_can_depend_on_the_request() -> None:
    with FakeProvider("ollama", answer=lambda body: f"model was {body['model']}") as fake:
        model = build_model(config("ollama", fake))
        assert model.complete(PROMPT).text == "model was fake-model-1"
        model.close()
