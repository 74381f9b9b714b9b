"""What a state-hub call that did not succeed becomes: the retry verdict and the HubError to raise.

The retry policy itself is `custodian_runtime.net.retry`; this module says which hub answers are
worth another try, how a failed attempt reads in the progress line, and what giving up says.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

import httpx
from pydantic import ValidationError

from custodian_runtime.core.contract import ErrorBody, PreconditionFailedBody, Response, Task
from custodian_runtime.errors import (
    HubError,
    HubRequestError,
    HubUnavailable,
)
from custodian_runtime.net.bounded_http import DeadlinePassed, TooLarge, describe_size
from custodian_runtime.net.retry import (
    Attempted,
    Retry,
    RetryPolicy,
    retry_after_seconds,
    retryable_status,
    retryable_transport,
)

# Of the 5xx only 502, 503 and 504 say the hub is busy or restarting; 500, 501 and the rest say
# it is broken, and sending the same request again will not mend it.
FINAL_STATUSES = frozenset({408, *range(500, 600)}) - {502, 503, 504}

AttemptResult = httpx.Response | httpx.TransportError
T = TypeVar("T", bound=Response)


class HubPreconditionFailed(HubRequestError):
    """412: the task changed since it was read (`If-Match`); `current` is the hub's task now.

    `current` is None when the hub's body did not carry a readable task.
    """

    def __init__(self, message: str, *, current: Task | None = None, **fields: Any) -> None:
        super().__init__(message, **fields)
        self.current = current


def retry_verdict(outcome: AttemptResult, *, now: datetime) -> Retry | None:
    """A Retry for a response or transport error that another attempt may cure, else None."""
    if isinstance(outcome, httpx.Response):
        if not retryable_status(outcome.status_code, final=FINAL_STATUSES):
            return None
        return Retry(describe_outcome(outcome), retry_after_seconds(outcome.headers, now=now))
    return Retry(describe_outcome(outcome)) if retryable_transport(outcome) else None


_TRANSPORT_REASONS: tuple[tuple[type[Exception], str], ...] = (
    (httpx.ReadTimeout, "read timeout"),
    (httpx.ConnectTimeout, "connect timeout"),
    (httpx.WriteTimeout, "write timeout"),
    (httpx.PoolTimeout, "pool timeout"),
    (httpx.ConnectError, "cannot connect"),
    (httpx.RemoteProtocolError, "the hub hung up mid-answer"),
    (httpx.NetworkError, "network error"),
)


def describe_outcome(outcome: AttemptResult) -> str:
    """A few words on a failed attempt, for the retry progress line."""
    if isinstance(outcome, httpx.Response):
        return f"HTTP {outcome.status_code} {outcome.reason_phrase}".rstrip()
    for kind, words in _TRANSPORT_REASONS:
        if isinstance(outcome, kind):
            return words
    return type(outcome).__name__


# Hints for refusals whose fix is on the caller's side; the message says what to change.
_HINTS = {
    "unauthorized": "check the state-hub token the runtime was given",
    "idempotency_mismatch": (
        "this idempotency key was used before with another body; a changed request needs a new key"
    ),
}
_DETAIL_LIMIT = 300  # an error page from a proxy can be long; the message only needs its start


@dataclass(frozen=True)
class NamedCall:
    """One hub call, as named in error messages."""

    method: str
    url: str
    base_url: str
    attempts: int
    policy: RetryPolicy


def failure_for(call: NamedCall, outcome: AttemptResult, *, budget_spent: bool) -> HubError:
    """The error to raise for a call whose last outcome was not a success."""
    if isinstance(outcome, httpx.TransportError):
        return _transport_failure(call, outcome, budget_spent=budget_spent)
    status = outcome.status_code
    code, detail = error_body(outcome)
    said = f"{status} {code or outcome.reason_phrase}" + (f": {detail}" if detail else "")
    if status >= 500 or retryable_status(status):
        message = f"{_prefix(call)} failed after {_count(call)}{_spent(call, budget_spent)}: {said}"
        return _error(HubUnavailable, message, call, status, code, detail)
    if status >= 400:
        hint = _HINTS.get(code or "")
        message = f"{_prefix(call)} refused the request: {said}" + (f"; {hint}" if hint else "")
        return _error(HubRequestError, message, call, status, code, detail)
    message = f"{_prefix(call)} answered with an unexpected {said}; the hub URL may point elsewhere"
    return _error(HubError, message, call, status, code, detail)


def parse_body(model: type[T], response: httpx.Response, attempts: int, data: object = None) -> T:
    """The response body as `model`, or a HubError that says the hub answered something else.

    `data`: the body already decoded (and partly validated) by the caller, validated from that.
    """
    try:
        if data is not None:
            return model.model_validate(data)
        return model.model_validate_json(response.content)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in error['loc']) or '(body)'}: {error['msg']}"
            for error in exc.errors(include_input=False)[:3]
        )
        request = response.request
        raise HubError(
            f"state-hub {request.method} {request.url} answered {response.status_code} with a body"
            f" that is not a valid {model.__name__} ({exc.error_count()} problem(s): {problems});"
            " check that the hub URL points at a state-hub speaking contract v1",
            status=response.status_code,
            code="bad_response",
            detail=problems,
            method=request.method,
            url=str(request.url),
            attempts=attempts,
        ) from None


def error_body(response: httpx.Response) -> tuple[str | None, str | None]:
    """(code, detail) from a contract error body; (None, start of the text) when it is not one."""
    try:
        body = ErrorBody.model_validate_json(response.content)
    except ValidationError:
        text = response.text.strip()
        return None, (text[:_DETAIL_LIMIT] or None)
    return body.code, body.detail[:_DETAIL_LIMIT]


def overrun_failure(call: NamedCall, exc: DeadlinePassed | TooLarge) -> HubError:
    """The error for an answer that outran the call's time budget or its size cap."""
    if isinstance(exc, TooLarge):
        message = (
            f"{_prefix(call)} answered more than {describe_size(exc.limit)}; reading stopped"
            " there and nothing was used. Raise STATE_HUB_MAX_BYTES if the domain really is that"
            " large, or check that the hub URL points at a state-hub"
        )
        detail = f"stopped reading after {exc.received} bytes"
        return _error(HubError, message, call, None, "too_large", detail)
    message = (
        f"{_prefix(call)} did not answer in full within its {call.policy.max_total_s:g} s budget"
        f" ({_count(call)}); the hub is stalled or too slow: check it at {call.base_url},"
        " or raise STATE_HUB_MAX_TOTAL_S"
    )
    return _error(HubUnavailable, message, call, None, "timeout", str(exc))


def _transport_failure(
    call: NamedCall, exc: httpx.TransportError, *, budget_spent: bool
) -> HubError:
    detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    if not retryable_transport(exc):
        return _error(
            HubError, f"{_prefix(call)} could not be sent: {detail}", call, None, None, detail
        )
    code = "timeout" if isinstance(exc, httpx.TimeoutException) else "connection_error"
    message = (
        f"{_prefix(call)} failed after {_count(call)}{_spent(call, budget_spent)}: {detail};"
        f" check that the hub is running at {call.base_url}"
    )
    return _error(HubUnavailable, message, call, None, code, detail)


def _error(
    kind: type[HubError],
    message: str,
    call: NamedCall,
    status: int | None,
    code: str | None,
    detail: str | None,
) -> HubError:
    return kind(
        message,
        status=status,
        code=code,
        detail=detail,
        method=call.method,
        url=call.url,
        attempts=call.attempts,
    )


def _prefix(call: NamedCall) -> str:
    return f"state-hub {call.method} {call.url}"


def _count(call: NamedCall) -> str:
    return f"{call.attempts} attempt" + ("" if call.attempts == 1 else "s")


def _spent(call: NamedCall, budget_spent: bool) -> str:
    if not budget_spent:
        return ""
    return f" (stopped early: the next wait would pass the {call.policy.max_total_s:g} s budget)"


def succeeded(
    call: NamedCall, result: Attempted[AttemptResult], also_ok: frozenset[int] = frozenset()
) -> tuple[httpx.Response, int]:
    """The response of a call that succeeded (a 2xx, or a status in `also_ok`, such as a 304
    asked for), else the HubError its last outcome calls for."""
    outcome = result.outcome
    if isinstance(outcome, httpx.Response) and (
        outcome.is_success or outcome.status_code in also_ok
    ):
        return outcome, result.attempts
    failure = failure_for(call, result.outcome, budget_spent=result.budget_spent)
    if isinstance(result.outcome, httpx.Response) and result.outcome.status_code == 412:
        raise _precondition_failed(failure, result.outcome)
    raise failure


def _precondition_failed(failure: HubError, response: httpx.Response) -> HubPreconditionFailed:
    try:
        current = PreconditionFailedBody.model_validate_json(response.content).current
    except ValidationError:
        current = None  # the refusal stands; only the hub's view of the task is unknown
    return HubPreconditionFailed(
        f"{failure.message}; the task changed since it was read",
        current=current,
        status=failure.status,
        code=failure.code,
        detail=failure.detail,
        method=failure.method,
        url=failure.url,
        attempts=failure.attempts,
    )
