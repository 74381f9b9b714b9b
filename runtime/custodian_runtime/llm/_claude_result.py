"""Reading the one-line JSON result of `claude -p --output-format json`."""

from __future__ import annotations

import json
from typing import Any

from custodian_runtime.errors import ModelError
from custodian_runtime.llm._attempts import Retryable
from custodian_runtime.llm._json import as_dict, as_float, as_int, as_list, as_str
from custodian_runtime.llm.base import Completion, Usage
from custodian_runtime.net.retry import retryable_status

TAIL_CHARS = 2000
LOGIN_HINT = (
    "set ANTHROPIC_API_KEY or CLAUDE_CODE_OAUTH_TOKEN, or CUSTODIAN_CLAUDE_HOME to a home "
    "directory where `claude` is logged in"
)


def _fail(
    detail: str, stderr: str, *, provider: str, status: int | None = None, code: str | None = None
) -> ModelError:
    stderr_tail = stderr[-TAIL_CHARS:].strip()
    suffix = f"; stderr: {stderr_tail[-500:]}" if stderr_tail else ""
    return ModelError(
        f"{provider}: {detail}{suffix}",
        provider=provider,
        status=status,
        code=code,
        retryable=status is not None and retryable_status(status),
        stderr_tail=stderr_tail or None,
    )


def _load(stdout: str) -> dict[str, Any] | None:
    """The result object: the whole output, else its last line that is a JSON object."""
    candidates = [stdout, *reversed(stdout.splitlines())]
    for text in candidates:
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
    return None


def _api_error(result: dict[str, Any], stderr: str, provider: str) -> ModelError | Retryable:
    status = as_int(result.get("api_error_status"))
    message = as_str(result.get("result")) or "no message"
    if "login" in message.lower() or status in (401, 403):
        message = f"{message} ({LOGIN_HINT})"
    error = _fail(
        f"API error: {message}", stderr, provider=provider, status=status, code="api_error"
    )
    return Retryable(error) if error.retryable else error


def _model_used(result: dict[str, Any], fallback: str) -> str:
    """The model that did the most output, from `modelUsage`."""
    usage = as_dict(result.get("modelUsage"))
    if not usage:
        return fallback
    return max(usage, key=lambda name: as_int(as_dict(usage[name]).get("outputTokens")) or 0)


def parse_result(code: int, stdout: str, stderr: str, *, model: str, provider: str) -> Completion:
    """Turn the CLI's exit code and output into a Completion, or raise ModelError / Retryable."""
    result = _load(stdout.strip()) if stdout.strip() else None
    if result is None:
        what = "no output" if not stdout.strip() else f"output that is not JSON: {stdout[:200]!r}"
        raise _fail(f"claude exited with code {code} and {what}", stderr, provider=provider)
    if result.get("is_error") is True:
        raise _api_error(result, stderr, provider)
    subtype = result.get("subtype")
    if subtype != "success":
        errors = "; ".join(str(e) for e in as_list(result.get("errors"))) or "no detail"
        raise _fail(f"the CLI stopped with {subtype}: {errors}", stderr, provider=provider)
    if code != 0:
        raise _fail(f"claude exited with code {code}", stderr, provider=provider)
    if result.get("stop_reason") == "max_tokens":
        raise _fail(
            "the answer was cut off at the token limit",
            stderr,
            provider=provider,
            code="max_tokens",
        )
    text = as_str(result.get("result"))
    if text is None or not text.strip():
        raise _fail("the answer is empty", stderr, provider=provider, code="empty")
    usage = as_dict(result.get("usage"))
    return Completion(
        text=text,
        model=_model_used(result, model),
        provider=provider,
        usage=Usage(
            input_tokens=as_int(usage.get("input_tokens")),
            output_tokens=as_int(usage.get("output_tokens")),
            cost_usd=as_float(result.get("total_cost_usd")),
        ),
        request_id=as_str(result.get("session_id")),
    )
