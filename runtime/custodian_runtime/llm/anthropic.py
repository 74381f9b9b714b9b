"""Anthropic Messages API (`POST https://api.anthropic.com/v1/messages`, `x-api-key`).

Structured output is tool use: the answer's schema is one tool's `input_schema`, and
`tool_choice` `{"type": "tool", "name"}` makes the model call it; the tool_use block's `input`
is the answer, as JSON text.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, ClassVar

import httpx

from custodian_runtime.errors import ModelError
from custodian_runtime.llm._http import (
    TOKENS_SETTING,
    ErrorInfo,
    JsonHttp,
    api_url,
    header_request_id,
    require_key,
)
from custodian_runtime.llm._json import as_dict, as_int, as_list, as_str
from custodian_runtime.llm._openai_shape import output_limit
from custodian_runtime.llm.base import SCHEMA_NAME, Completion, Model, ModelConfig, Prompt, Usage

DEFAULT_MODEL = "claude-sonnet-4-5"
DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"
KEY_VAR = "ANTHROPIC_API_KEY"
# Stop reasons that leave no usable answer, with what to do about each.
_BAD_STOPS = {
    "max_tokens": "the answer was cut off at the token limit (max_tokens={limit}); "
    f"raise {TOKENS_SETTING}",
    "refusal": "the model refused to answer",
    "model_context_window_exceeded": "the prompt filled the model's context window; shorten it",
    "tool_use": "the model asked for a tool, but none are offered",
    "pause_turn": "the model paused its turn instead of answering",
}


def describe_error(status: int, payload: Any, text: str) -> ErrorInfo:
    """Read `{"type": "error", "error": {"type", "message"}, "request_id"}`; billing is fatal."""
    body = as_dict(payload)
    error = as_dict(body.get("error"))
    if not error:
        return ErrorInfo(message=text[:300] or f"HTTP {status} with an empty body")
    details = as_dict(error.get("details"))
    kind = error.get("type")
    spend_limit = details.get("error_code") == "enforced_spend_limit_reached"
    return ErrorInfo(
        message=str(error.get("message") or text[:300]),
        code=str(details.get("error_code") or kind) if (kind or spend_limit) else None,
        fatal=kind == "billing_error" or spend_limit,
        request_id=as_str(body.get("request_id")),
    )


def _tool_input(blocks: list[Any]) -> str | None:
    """The plan tool's input, as JSON text; None when the model wrote no such call."""
    for block in blocks:
        called = isinstance(block, dict) and block.get("type") == "tool_use"
        if called and block.get("name") == SCHEMA_NAME and isinstance(block.get("input"), dict):
            return json.dumps(block["input"], ensure_ascii=False)
    return None


class AnthropicModel(Model):
    """Claude through the Messages API: text blocks joined, thinking and tool blocks skipped."""

    provider: ClassVar[str] = "anthropic"
    schema_output: ClassVar[bool] = True

    def __init__(
        self,
        config: ModelConfig,
        *,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] | None = None,
    ) -> None:
        self._config = config
        self._model = config.model or DEFAULT_MODEL
        headers = {
            "x-api-key": require_key(config, KEY_VAR, self.provider),
            "anthropic-version": API_VERSION,
        }
        self._url = api_url(config.base_url or DEFAULT_BASE_URL, "v1", "messages")
        self._http = JsonHttp(
            config,
            provider=self.provider,
            headers=headers,
            describe_error=describe_error,
            key_var=KEY_VAR,
            transport=transport,
            sleep=sleep,
        )

    @property
    def model_name(self) -> str:
        """The configured or default model id."""
        return self._model

    def complete(self, prompt: Prompt) -> Completion:
        """Send one Messages request and return the joined text blocks."""
        limit = output_limit(self._config, prompt)
        body: dict[str, Any] = {
            "model": self._model,
            "max_tokens": limit,
            "messages": [{"role": "user", "content": prompt.user}],
        }
        if prompt.system:
            body["system"] = prompt.system
        if self._config.temperature is not None:
            body["temperature"] = self._config.temperature
        schema = prompt.answer_schema
        if schema is not None:
            body["tools"] = [
                {
                    "name": SCHEMA_NAME,
                    "description": "Record this run's action plan.",
                    "input_schema": dict(schema),
                }
            ]
            body["tool_choice"] = {"type": "tool", "name": SCHEMA_NAME}
        tool = schema is not None
        return self._http.post(self._url, body, lambda p, r: self._parse(p, r, limit, tool))

    def _parse(
        self, payload: Any, response: httpx.Response, limit: int, tool: bool = False
    ) -> Completion:
        request_id = header_request_id(response) or as_str(payload.get("id"))
        stop = payload.get("stop_reason")
        blocks = as_list(payload.get("content"))
        text = _tool_input(blocks) if tool else None
        if text is None:
            text = "".join(
                str(block.get("text", ""))
                for block in blocks
                if isinstance(block, dict) and block.get("type") == "text"
            )
        if stop in _BAD_STOPS and not (tool and stop == "tool_use"):
            detail = _BAD_STOPS[stop].format(limit=limit)
            raise self._fail(detail, request_id, str(stop), answer=text)
        if not text.strip():
            raise self._fail(f"the answer has no text (stop_reason {stop})", request_id, "empty")
        usage = as_dict(payload.get("usage"))
        return Completion(
            text=text,
            model=str(payload.get("model") or self._model),
            provider=self.provider,
            usage=Usage(
                input_tokens=as_int(usage.get("input_tokens")),
                output_tokens=as_int(usage.get("output_tokens")),
            ),
            request_id=request_id,
            structured=tool,
        )

    def _fail(
        self, detail: str, request_id: str | None, code: str, answer: str | None = None
    ) -> ModelError:
        return self._http.error(detail, code=code, request_id=request_id, answer=answer)

    def close(self) -> None:
        """Close the HTTP client."""
        self._http.close()
