"""OpenRouter (`POST https://openrouter.ai/api/v1/chat/completions`): OpenAI shape, own errors."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import httpx

from custodian_runtime.llm._attempts import Retryable
from custodian_runtime.llm._http import ErrorInfo, header_request_id, require_key
from custodian_runtime.llm._json import as_float, as_str
from custodian_runtime.llm._openai_shape import ChatCompletionsModel
from custodian_runtime.llm.base import ModelConfig
from custodian_runtime.net.retry import retryable_status

DEFAULT_MODEL = "anthropic/claude-sonnet-4.5"
DEFAULT_BASE_URL = "https://openrouter.ai/api/v1"
KEY_VAR = "OPENROUTER_API_KEY"
# Attribution (optional for OpenRouter); override with OPENROUTER_APP_URL / OPENROUTER_APP_TITLE.
DEFAULT_APP_URL = "https://custodian.invalid"
DEFAULT_APP_TITLE = "Custodian"


def _error_code(error: Mapping[str, Any]) -> int | None:
    code = error.get("code")
    return code if isinstance(code, int) and not isinstance(code, bool) else None


def _describe(error: Mapping[str, Any], fallback: str) -> str:
    message = str(error.get("message") or fallback)
    metadata = error.get("metadata")
    if isinstance(metadata, dict) and metadata.get("provider_name"):
        message = f"{message} (upstream provider {metadata['provider_name']})"
    return message


class OpenRouterModel(ChatCompletionsModel):
    """OpenRouter: 402 (no credits) is fatal, errors may arrive inside a 200, usage carries cost."""

    provider: ClassVar[str] = "openrouter"
    default_model: ClassVar[str] = DEFAULT_MODEL
    default_base_url: ClassVar[str] = DEFAULT_BASE_URL
    token_field: ClassVar[str] = "max_tokens"

    def auth_headers(self, config: ModelConfig) -> tuple[dict[str, str], str | None]:
        """`Authorization: Bearer $OPENROUTER_API_KEY`."""
        return {"Authorization": f"Bearer {require_key(config, KEY_VAR, self.provider)}"}, KEY_VAR

    def extra_headers(self, config: ModelConfig) -> dict[str, str]:
        """Attribution: `HTTP-Referer`, and the title under its current and legacy names."""
        title = config.env.get("OPENROUTER_APP_TITLE") or DEFAULT_APP_TITLE
        return {
            "HTTP-Referer": config.env.get("OPENROUTER_APP_URL") or DEFAULT_APP_URL,
            "X-OpenRouter-Title": title,
            "X-Title": title,
        }

    def describe_error(self, status: int, payload: Any, text: str) -> ErrorInfo:
        """Read `{"error": {"code": int, "message", "metadata"}}`; 402 means no credits left."""
        error = payload.get("error") if isinstance(payload, dict) else None
        if not isinstance(error, dict):
            return ErrorInfo(message=text[:300] or f"HTTP {status} with an empty body")
        code = _error_code(error)
        return ErrorInfo(
            message=_describe(error, text[:300]),
            code=str(code) if code is not None else None,
            fatal=status == 402 or code == 402,
        )

    def check_payload(self, payload: Mapping[str, Any], response: httpx.Response) -> None:
        """An error reported inside a 200 body (top level or in the choice) is a ModelError."""
        error = payload.get("error")
        choices = payload.get("choices")
        if not isinstance(error, dict) and isinstance(choices, list) and choices:
            first = choices[0] if isinstance(choices[0], dict) else {}
            error = first.get("error")
        if not isinstance(error, dict):
            return
        code = _error_code(error)
        retryable = code is not None and code != 402 and retryable_status(code)
        failure = self._http.error(
            f"error inside a {response.status_code} answer"
            + (f" (code {code})" if code is not None else "")
            + f": {_describe(error, 'no message')}",
            code=str(code) if code is not None else None,
            request_id=header_request_id(response) or as_str(payload.get("id")),
            retryable=retryable,
        )
        if retryable:
            raise Retryable(failure)
        raise failure

    def cost_usd(self, usage: Mapping[str, Any]) -> float | None:
        """OpenRouter reports the call's cost in credits (USD) as `usage.cost`."""
        return as_float(usage.get("cost"))
