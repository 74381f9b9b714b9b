"""Google Gemini API (`POST .../v1beta/models/{model}:generateContent`, `x-goog-api-key`).

Structured output: `generationConfig.responseMimeType` `application/json` and
`generationConfig.responseSchema`, the answer's schema in the API's OpenAPI subset
(`gemini_schema`): upper-case types, `nullable` for a null option, `propertyOrdering`, and
no `additionalProperties`.
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
    require_key,
)
from custodian_runtime.llm._json import as_dict, as_int, as_list, as_str
from custodian_runtime.llm._openai_shape import output_limit
from custodian_runtime.llm.base import Completion, Model, ModelConfig, Prompt, Usage

DEFAULT_MODEL = "gemini-2.5-flash"
DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com"
API_VERSION = "v1beta"
KEY_VAR = "GEMINI_API_KEY"
_RETRY_INFO = "type.googleapis.com/google.rpc.RetryInfo"
_QUOTA_FAILURE = "type.googleapis.com/google.rpc.QuotaFailure"


def _seconds(duration: object) -> float | None:
    """A protobuf Duration as JSON (`"37s"`, `"1.5s"`) -> seconds."""
    if not isinstance(duration, str) or not duration.endswith("s"):
        return None
    try:
        return float(duration[:-1])
    except ValueError:
        return None


def _daily_quota(details: list[Any]) -> bool:
    for detail in details:
        if isinstance(detail, dict) and detail.get("@type") == _QUOTA_FAILURE:
            for violation in as_list(detail.get("violations")):
                if isinstance(violation, dict) and "PerDay" in str(violation.get("quotaId", "")):
                    return True
    return False


def describe_error(status: int, payload: Any, text: str) -> ErrorInfo:
    """Read `{"error": {"code", "message", "status", "details"}}`; a daily quota is fatal."""
    error = as_dict(as_dict(payload).get("error"))
    if not error:
        return ErrorInfo(message=text[:300] or f"HTTP {status} with an empty body")
    details = as_list(error.get("details"))
    retry_after = next(
        (
            _seconds(d.get("retryDelay"))
            for d in details
            if isinstance(d, dict) and d.get("@type") == _RETRY_INFO
        ),
        None,
    )
    daily = _daily_quota(details)
    message = str(error.get("message") or text[:300])
    if daily:
        message = f"{message} (daily quota exhausted)"
    if any(as_dict(d).get("reason") == "API_KEY_INVALID" for d in details):
        message = f"{message} (check {KEY_VAR})"
    return ErrorInfo(
        message=message,
        code=str(error["status"]) if error.get("status") else None,
        fatal=daily,
        retry_after_s=retry_after,
    )


class GeminiModel(Model):
    """Gemini's generateContent: thought parts skipped, blocked prompts and cut-offs are errors."""

    provider: ClassVar[str] = "gemini"
    schema_output: ClassVar[bool] = True

    def __init__(
        self,
        config: ModelConfig,
        *,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] | None = None,
    ) -> None:
        self._config = config
        self._model = (config.model or DEFAULT_MODEL).removeprefix("models/")
        key = require_key(config, KEY_VAR, self.provider)
        base = config.base_url or DEFAULT_BASE_URL
        self._url = api_url(base, API_VERSION, f"models/{self._model}:generateContent")
        self._http = JsonHttp(
            config,
            provider=self.provider,
            headers={"x-goog-api-key": key},
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
        """Send one generateContent request and return the non-thought text."""
        limit = output_limit(self._config, prompt)
        generation: dict[str, Any] = {"maxOutputTokens": limit}
        if self._config.temperature is not None:
            generation["temperature"] = self._config.temperature
        schema = prompt.answer_schema
        if schema is not None:
            generation["responseMimeType"] = "application/json"
            generation["responseSchema"] = gemini_schema(schema)
        body: dict[str, Any] = {
            "contents": [{"role": "user", "parts": [{"text": prompt.user}]}],
            "generationConfig": generation,
        }
        if prompt.system:
            body["systemInstruction"] = {"parts": [{"text": prompt.system}]}
        structured = schema is not None
        return self._http.post(self._url, body, lambda p, r: self._parse(p, r, limit, structured))

    def _parse(
        self, payload: Any, response: httpx.Response, limit: int, structured: bool = False
    ) -> Completion:
        request_id = header_request_id(response) or as_str(payload.get("responseId"))
        candidate = self._candidate(payload, request_id)
        finish = candidate.get("finishReason")
        parts = as_list(as_dict(candidate.get("content")).get("parts"))
        text = "".join(
            str(part.get("text", ""))
            for part in parts
            if isinstance(part, dict) and not part.get("thought")
        )
        if finish == "MAX_TOKENS":
            raise self._fail(
                f"the answer was cut off at the token limit (maxOutputTokens={limit}); "
                f"raise {TOKENS_SETTING}",
                request_id,
                "MAX_TOKENS",
                answer=text,
            )
        if finish not in (None, "STOP") or not text.strip():
            detail = f"no usable answer (finishReason {finish})"
            raise self._fail(detail, request_id, finish, answer=text)
        return Completion(
            text=text,
            model=str(payload.get("modelVersion") or self._model),
            provider=self.provider,
            usage=_usage(payload.get("usageMetadata")),
            request_id=request_id,
            structured=structured,
        )

    def _candidate(self, payload: Mapping[str, Any], request_id: str | None) -> Mapping[str, Any]:
        candidates = payload.get("candidates")
        if isinstance(candidates, list) and candidates and isinstance(candidates[0], dict):
            return candidates[0]
        feedback = payload.get("promptFeedback")
        reason = feedback.get("blockReason") if isinstance(feedback, dict) else None
        if reason:
            raise self._fail(f"the prompt was blocked (blockReason {reason})", request_id, reason)
        raise self._fail("the answer has no candidates", request_id, "empty")

    def _fail(
        self, detail: str, request_id: str | None, code: object, answer: str | None = None
    ) -> ModelError:
        code_text = str(code) if code else None
        return self._http.error(detail, code=code_text, request_id=request_id, answer=answer)

    def close(self) -> None:
        """Close the HTTP client."""
        self._http.close()


def gemini_schema(node: Any) -> Any:
    """A JSON schema in the Schema object generateContent takes (an OpenAPI 3.0 subset)."""
    if isinstance(node, list):
        return [gemini_schema(v) for v in node]
    if not isinstance(node, Mapping):
        return node
    options = node.get("anyOf")
    if isinstance(options, list):
        real = [o for o in options if not (isinstance(o, Mapping) and o.get("type") == "null")]
        nullable = len(real) < len(options)
        if len(real) == 1:
            return {**gemini_schema(real[0]), **({"nullable": True} if nullable else {})}
        found: dict[str, Any] = {"anyOf": gemini_schema(real)}
        return {**found, "nullable": True} if nullable else found
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "type" and isinstance(value, str):
            out["type"] = value.upper()
        elif key == "properties" and isinstance(value, Mapping):
            out["properties"] = {k: gemini_schema(v) for k, v in value.items()}
            out["propertyOrdering"] = list(value)
        elif key in _GEMINI_KEYS:
            out[key] = gemini_schema(value)
    if "enum" in out:
        out["format"] = "enum"
    return out


# What the Schema object holds besides type and properties (no additionalProperties, no $ref).
_GEMINI_KEYS = frozenset({"items", "required", "enum", "description", "minItems", "maxItems"})


def _usage(metadata: object) -> Usage:
    """Prompt tokens in; candidate plus thinking tokens out (both are billed as output)."""
    if not isinstance(metadata, dict):
        return Usage()
    out = as_int(metadata.get("candidatesTokenCount"))
    thoughts = as_int(metadata.get("thoughtsTokenCount"))
    if out is not None and thoughts is not None:
        out += thoughts
    return Usage(input_tokens=as_int(metadata.get("promptTokenCount")), output_tokens=out)
