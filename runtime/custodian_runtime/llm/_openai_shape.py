"""The chat-completions shape shared by OpenAI, OpenRouter, Ollama and OpenAI-compatible servers.

Request: `{"model", "messages": [system?, user], <token field>: N, "temperature"?,
"response_format"?}`; the answer's schema goes as `response_format` `{"type": "json_schema",
"json_schema": {"name", "strict": true, "schema"}}` (OpenAI's structured outputs; llama.cpp's
server, vLLM and Ollama's OpenAI-compatible endpoint read the same field). Response:
`{"id", "model", "choices": [{"message": {"content"}, "finish_reason"}], "usage": {...}}`.
Errors: `{"error": {"message", "type", "code"}}`. Subclasses set the differences as attributes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import httpx

from custodian_runtime.errors import ModelError
from custodian_runtime.llm._http import (
    TOKENS_SETTING,
    ErrorInfo,
    JsonHttp,
    api_url,
    header_request_id,
)
from custodian_runtime.llm._json import as_dict, as_int, as_str
from custodian_runtime.llm.base import SCHEMA_NAME, Completion, Model, ModelConfig, Prompt, Usage

# OpenAI error codes that mean money or quota is gone: sending again cannot help.
FATAL_CODES = frozenset({"insufficient_quota", "billing_hard_limit_reached", "billing_not_active"})


def output_limit(config: ModelConfig, prompt: Prompt) -> int:
    """The token limit to send: the smaller of the configured and the prompt's limit."""
    return max(1, min(config.max_output_tokens, prompt.max_output_tokens))


def response_format(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The answer's JSON schema as chat completions take it: strict structured output."""
    return {
        "type": "json_schema",
        "json_schema": {"name": SCHEMA_NAME, "strict": True, "schema": dict(schema)},
    }


def without_key(node: Any, key: str) -> Any:
    """A JSON schema without `key` wherever it is a keyword (a property of that name stays)."""
    if isinstance(node, list):
        return [without_key(v, key) for v in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for k, v in node.items():
        if k == "properties" and isinstance(v, dict):
            out[k] = {name: without_key(p, key) for name, p in v.items()}
        elif k != key:
            out[k] = without_key(v, key)
    return out


def describe_openai_error(status: int, payload: Any, text: str) -> ErrorInfo:
    """Read `{"error": {"message", "type", "code"}}`; quota exhaustion is fatal."""
    error = payload.get("error") if isinstance(payload, dict) else None
    if not isinstance(error, dict):
        return ErrorInfo(message=text[:300] or f"HTTP {status} with an empty body")
    raw_code = error.get("code") or error.get("type")
    code = str(raw_code) if raw_code is not None else None
    return ErrorInfo(
        message=str(error.get("message") or text[:300]),
        code=code,
        fatal=code in FATAL_CODES or error.get("type") in FATAL_CODES,
    )


def _message_text(content: object) -> str:
    """Content is a string; some servers send a list of `{"type": "text", "text"}` parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text"
        ]
        return "".join(str(p) for p in parts)
    return ""


class ChatCompletionsModel(Model):
    """An adapter for one `/chat/completions` endpoint; subclasses set the vendor's differences."""

    default_model: ClassVar[str] = ""
    default_base_url: ClassVar[str] = ""
    token_field: ClassVar[str] = "max_tokens"
    schema_output: ClassVar[bool] = True
    # A server whose grammar takes a string's maxLength; the others are sent the schema without.
    text_lengths: ClassVar[bool] = False

    def __init__(
        self,
        config: ModelConfig,
        *,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] | None = None,
    ) -> None:
        self._config = config
        self._model = config.model or self.resolve_default_model(config)
        headers, key_var = self.auth_headers(config)
        self._url = api_url(self.resolve_base_url(config), "v1", "chat/completions")
        self._http = JsonHttp(
            config,
            provider=self.provider,
            headers={**headers, **self.extra_headers(config)},
            describe_error=self.describe_error,
            key_var=key_var,
            transport=transport,
            sleep=sleep,
        )

    # ---- hooks for subclasses -------------------------------------------------------------

    def resolve_default_model(self, config: ModelConfig) -> str:
        """The model used when none is configured."""
        return self.default_model

    def resolve_base_url(self, config: ModelConfig) -> str:
        """The base URL: the configured one, else the vendor's."""
        return config.base_url or self.default_base_url

    def auth_headers(self, config: ModelConfig) -> tuple[dict[str, str], str | None]:
        """Authorization headers and the name of the key variable (for error hints)."""
        return {}, None

    def extra_headers(self, config: ModelConfig) -> dict[str, str]:
        """Vendor headers beyond authorization."""
        return {}

    def describe_error(self, status: int, payload: Any, text: str) -> ErrorInfo:
        """Read the vendor's error body."""
        return describe_openai_error(status, payload, text)

    def check_payload(self, payload: Mapping[str, Any], response: httpx.Response) -> None:
        """Raise when a 2xx body still reports an error (OpenRouter does this)."""

    def cost_usd(self, usage: Mapping[str, Any]) -> float | None:
        """The cost of the call, if the vendor reports it."""
        return None

    # ---- the call -------------------------------------------------------------------------

    @property
    def model_name(self) -> str:
        """The configured or default model id."""
        return self._model

    def complete(self, prompt: Prompt) -> Completion:
        """Send one chat completion and return its text."""
        messages = [{"role": "user", "content": prompt.user}]
        if prompt.system:
            messages.insert(0, {"role": "system", "content": prompt.system})
        limit = output_limit(self._config, prompt)
        body: dict[str, Any] = {"model": self._model, "messages": messages, self.token_field: limit}
        if self._config.temperature is not None:
            body["temperature"] = self._config.temperature
        schema = prompt.answer_schema
        if schema is not None and not self.text_lengths:
            schema = without_key(schema, "maxLength")
        if schema is not None:
            body["response_format"] = response_format(schema)
        structured = schema is not None
        return self._http.post(self._url, body, lambda p, r: self._parse(p, r, limit, structured))

    def _parse(
        self, payload: Any, response: httpx.Response, limit: int, structured: bool = False
    ) -> Completion:
        self.check_payload(payload, response)
        request_id = header_request_id(response) or as_str(payload.get("id"))
        choices = payload.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise self._fail("the answer has no choices", request_id)
        choice = choices[0]
        message = as_dict(choice.get("message"))
        finish = choice.get("finish_reason")
        text = _message_text(message.get("content"))
        if finish == "length":
            raise self._fail(
                f"the answer was cut off at the token limit ({self.token_field}={limit}); "
                f"raise {TOKENS_SETTING}",
                request_id,
                code="max_tokens",
                answer=text,
            )
        if not text.strip():
            refusal = message.get("refusal")
            why = refusal or (f"finish_reason {finish}" if finish else "no content")
            answer = refusal if isinstance(refusal, str) else None
            raise self._fail(f"the answer is empty ({why})", request_id, code="empty",
                             answer=answer)  # fmt: skip
        usage = as_dict(payload.get("usage"))
        return Completion(
            text=text,
            model=as_str(payload.get("model")) or self._model,
            provider=self.provider,
            usage=Usage(
                input_tokens=as_int(usage.get("prompt_tokens")),
                output_tokens=as_int(usage.get("completion_tokens")),
                cost_usd=self.cost_usd(usage),
            ),
            request_id=request_id,
            structured=structured,
        )

    def _fail(
        self,
        detail: str,
        request_id: str | None,
        *,
        code: str | None = None,
        answer: str | None = None,
    ) -> ModelError:
        return self._http.error(detail, code=code, request_id=request_id, answer=answer)

    def close(self) -> None:
        """Close the HTTP client."""
        self._http.close()
