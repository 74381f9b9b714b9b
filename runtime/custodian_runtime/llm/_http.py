"""Shared HTTP edge of the vendor adapters: keys, URLs, one JSON POST with retries, errors."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlsplit

import httpx

from custodian_runtime.errors import ConfigError, ModelError
from custodian_runtime.llm._attempts import Retryable, call_model, model_policy
from custodian_runtime.llm._proxy import proxy_mounts
from custodian_runtime.llm.base import ModelConfig
from custodian_runtime.net.bounded_http import DeadlinePassed, TooLarge, describe_size, exchange
from custodian_runtime.net.retry import Sleep, retry_after_seconds, retryable_status

T = TypeVar("T")

BASE_URL_SETTING = "CUSTODIAN_LLM_BASE_URL"
MODEL_SETTING = "CUSTODIAN_MODEL"
TOKENS_SETTING = "CUSTODIAN_MAX_OUTPUT_TOKENS"
MAX_BYTES_SETTING = "CUSTODIAN_LLM_MAX_BYTES"
TIMEOUT_SETTING = "CUSTODIAN_LLM_TIMEOUT_S"


@dataclass(frozen=True)
class ErrorInfo:
    """What a vendor's error body says; `fatal` marks billing or quota exhaustion (no retry)."""

    message: str
    code: str | None = None
    fatal: bool = False
    retry_after_s: float | None = None
    request_id: str | None = None


# (status, parsed JSON body or None, raw text) -> ErrorInfo; one per vendor.
DescribeError = Callable[[int, Any, str], ErrorInfo]


def require_key(config: ModelConfig, variable: str, provider: str) -> str:
    """The API key from the environment snapshot, or a ConfigError naming the variable."""
    key = config.env.get(variable, "").strip()
    if not key:
        raise ConfigError(
            f"the {provider} model needs an API key: set {variable} in the environment",
            setting=variable,
        )
    return key


def api_url(base: str, version: str, endpoint: str) -> str:
    """Join a base URL and an endpoint, adding the API version segment unless the base has it."""
    base = base.strip().rstrip("/")
    parts = urlsplit(base)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigError(
            f"base URL {base!r} is not an http(s) URL; set {BASE_URL_SETTING} like "
            "https://host:port/v1",
            setting=BASE_URL_SETTING,
        )
    if version and not parts.path.endswith("/" + version):
        base = f"{base}/{version}"
    return f"{base}/{endpoint}"


def header_request_id(response: httpx.Response) -> str | None:
    """The vendor's request id from the usual headers."""
    for name in ("x-request-id", "request-id", "x-goog-request-id"):
        value: str | None = response.headers.get(name)
        if value:
            return value
    return None


def _hint(status: int, info: ErrorInfo, key_var: str | None) -> str:
    if info.fatal:
        return "add credit or raise the quota; retrying will not help"
    if status in (401, 403):
        return f"check {key_var}" if key_var else "check the API key and its permissions"
    if status == 404:
        return f"check the model name ({MODEL_SETTING}) and {BASE_URL_SETTING}"
    if status in (400, 422):
        return f"the request was refused as invalid; check {MODEL_SETTING} and {TOKENS_SETTING}"
    if status == 429:
        return "rate limited; run less often or raise the limit"
    return "the provider had a problem; try again later"


def _payload(response: httpx.Response) -> Any:
    try:
        return response.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None


class JsonHttp:
    """One vendor endpoint family: POST JSON, retry what may pass, map the rest to ModelError."""

    def __init__(
        self,
        config: ModelConfig,
        *,
        provider: str,
        headers: Mapping[str, str],
        describe_error: DescribeError,
        key_var: str | None = None,
        transport: httpx.BaseTransport | None = None,
        sleep: Sleep | None = None,
    ) -> None:
        self.provider = provider
        self.key_var = key_var
        self.describe_error = describe_error
        self.policy = model_policy(config, sleep=sleep)
        self.timeout_s = config.attempt_s
        self.max_bytes = config.max_response_bytes
        self.stop = config.stop
        # Proxies follow the standard variables, from the settings' snapshot: trust_env=False so
        # nothing else (netrc, the live environment) is taken; a test's transport is used as is.
        self.client = httpx.Client(
            headers=dict(headers),
            transport=transport,
            trust_env=False,
            mounts=proxy_mounts(config.env) if transport is None else None,
        )

    def post(
        self, url: str, body: Mapping[str, Any], parse: Callable[[Any, httpx.Response], T]
    ) -> T:
        """POST `body` to `url` and hand the 2xx JSON to `parse` (which may raise Retryable)."""
        deadline = self.policy.deadline()
        return call_model(self.policy, lambda: self._attempt(url, body, parse, deadline))

    def _attempt(
        self,
        url: str,
        body: Mapping[str, Any],
        parse: Callable[[Any, httpx.Response], T],
        deadline: float,
    ) -> T:
        # No single request may outlive the total budget, whatever the per-request timeout;
        # the limit covers the whole request, body included, not each read.
        remaining = deadline - self.policy.clock()
        if remaining <= 0:
            raise self.error("the time budget for the model call is spent", code="budget")
        limit = min(self.timeout_s, remaining)
        timeout = httpx.Timeout(limit, connect=min(10.0, remaining))
        request = self.client.build_request("POST", url, json=body, timeout=timeout)
        response = self._exchange(request, limit)
        if response.status_code >= 400:
            self._raise_for_status(response)
        payload = _payload(response)
        if not isinstance(payload, dict):
            raise self.error(
                f"HTTP {response.status_code} from {url} is not a JSON object: "
                f"{response.text[:200]!r}",
                status=response.status_code,
                request_id=header_request_id(response),
            )
        return parse(payload, response)

    def _exchange(self, request: httpx.Request, limit_s: float) -> httpx.Response:
        url = request.url
        try:
            return exchange(
                self.client,
                request,
                deadline=self.policy.clock() + limit_s,
                max_bytes=self.max_bytes,
                stop=self.stop,
                clock=self.policy.clock,
            )
        except httpx.TransportError as exc:
            error = self.error(f"cannot reach {url}: {type(exc).__name__}: {exc}", retryable=True)
            raise Retryable(error) from exc
        except DeadlinePassed as exc:
            error = self.error(
                f"no complete answer from {url} within {round(exc.budget_s, 1):g} s"
                f" (raise {TIMEOUT_SETTING} if the model is slow)",
                code="timeout",
                retryable=True,
            )
            raise Retryable(error) from None
        except TooLarge as exc:
            raise self.error(
                f"the answer from {url} is larger than {describe_size(exc.limit)}; reading"
                f" stopped there. Raise {MAX_BYTES_SETTING} if such answers are expected",
                code="too_large",
            ) from None

    def _raise_for_status(self, response: httpx.Response) -> None:
        status = response.status_code
        info = self.describe_error(status, _payload(response), response.text)
        retryable = not info.fatal and retryable_status(status)
        if response.headers.get("x-should-retry", "").lower() == "false":
            retryable = False
        code = f" ({info.code})" if info.code else ""
        error = self.error(
            f"HTTP {status}{code}: {info.message}; {_hint(status, info, self.key_var)}",
            status=status,
            code=info.code,
            request_id=header_request_id(response) or info.request_id,
            retryable=retryable,
        )
        if retryable:
            hint = retry_after_seconds(response.headers, now=self.policy.wall_clock())
            raise Retryable(error, hint if hint is not None else info.retry_after_s)
        raise error

    def error(
        self,
        detail: str,
        *,
        status: int | None = None,
        code: str | None = None,
        request_id: str | None = None,
        retryable: bool = False,
        answer: str | None = None,
    ) -> ModelError:
        """A ModelError from this provider, its message prefixed with the provider's name;
        `answer` is what came back of an answer that cannot be used (cut off, refused)."""
        return ModelError(
            f"{self.provider}: {detail}",
            provider=self.provider,
            status=status,
            code=code,
            request_id=request_id,
            retryable=retryable,
            answer=answer or None,
        )

    def close(self) -> None:
        """Close the HTTP client."""
        self.client.close()
