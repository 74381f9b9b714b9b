"""State-hub call policy: which failures are retried, how long to wait, when to stop, what to raise.

tenacity does the looping. Waits are full jitter (`wait_random_exponential`), raised to the hub's
`Retry-After` when it sends one, and the loop never sleeps past the total time budget: it gives up
instead, so a run that must finish before its deadline learns early that the hub is not there.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import TypeVar

import httpx
from pydantic import ValidationError
from tenacity import RetryCallState, Retrying, retry_if_result, wait_random_exponential

from custodian.bounded_http import DeadlinePassed, TooLarge, describe_size
from custodian.core.contract import ErrorBody, Response
from custodian.errors import ConfigError, HubError, HubRequestError, HubUnavailable
from custodian.stopping import OnRetry

# 500 and 501 are left out on purpose: they say the hub is broken, not busy.
RETRY_STATUSES = frozenset({429, 502, 503, 504})

# Timeouts, refused or reset connections, and a hub that hung up mid-answer are worth another try;
# a malformed URL or header (UnsupportedProtocol, LocalProtocolError) is not.
RETRY_EXCEPTIONS: tuple[type[Exception], ...] = (
    httpx.TimeoutException,
    httpx.NetworkError,
    httpx.RemoteProtocolError,
)

# The first jitter window is [0, 0.5 s]; each retry doubles it, up to max_retry_wait_s.
JITTER_MULTIPLIER_S = 0.5

Outcome = httpx.Response | httpx.TransportError
T = TypeVar("T", bound=Response)


@dataclass(frozen=True)
class RetryPolicy:
    """How many times and for how long one hub call may be tried."""

    max_attempts: int = 5
    max_total_s: float = 60.0
    max_retry_wait_s: float = 30.0
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic  # measures the total time budget
    wall_clock: Callable[[], datetime] = lambda: datetime.now(UTC)  # for HTTP-date Retry-After
    on_retry: OnRetry | None = None  # told of each failed attempt before the wait

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ConfigError(f"state-hub max_attempts must be at least 1, not {self.max_attempts}")
        if self.max_total_s <= 0 or self.max_retry_wait_s < 0:
            raise ConfigError(
                "state-hub retry limits must be positive: got"
                f" max_total_s={self.max_total_s}, max_retry_wait_s={self.max_retry_wait_s}"
            )


@dataclass(frozen=True)
class Attempted:
    """The last outcome of a retried call and how many attempts it took."""

    outcome: Outcome
    attempts: int
    budget_spent: bool  # gave up because the next wait would pass max_total_s


def is_retryable(outcome: Outcome) -> bool:
    """True for a response or transport error that another attempt may cure."""
    if isinstance(outcome, httpx.Response):
        return outcome.status_code in RETRY_STATUSES
    return isinstance(outcome, RETRY_EXCEPTIONS)


def parse_retry_after(value: str | None, *, now: datetime) -> float | None:
    """Seconds to wait per `Retry-After` (delay-seconds or HTTP-date); None if absent or bad."""
    if value is None:
        return None
    text = value.strip()
    if text.isascii() and text.isdigit():  # "²".isdigit() is true too
        return float(text)
    when = _parse_http_date(text)
    return None if when is None else max(0.0, (when - now).total_seconds())


def retry_after_seconds(response: httpx.Response, *, wall_now: datetime) -> float | None:
    """`Retry-After` of a response in seconds; an HTTP-date is measured from the hub's `Date`."""
    now = wall_now
    server_date = response.headers.get("Date")
    if server_date is not None:
        # The hub's clock, not ours: the two may disagree, and the hub chose the date by its clock.
        now = _parse_http_date(server_date) or wall_now
    return parse_retry_after(response.headers.get("Retry-After"), now=now)


def call_with_retries(policy: RetryPolicy, attempt: Callable[[], Outcome]) -> Attempted:
    """Run `attempt` until it gives a final outcome or the policy's attempts or time run out."""
    start = policy.clock()
    jitter = wait_random_exponential(multiplier=JITTER_MULTIPLIER_S, max=policy.max_retry_wait_s)
    spent: list[bool] = [False]

    def wait(state: RetryCallState) -> float:
        backoff = float(jitter(state))
        hint = _hint(state, policy.wall_clock)
        return backoff if hint is None else max(backoff, min(hint, policy.max_retry_wait_s))

    def stop(state: RetryCallState) -> bool:
        if state.attempt_number >= policy.max_attempts:
            return True
        spent[0] = policy.clock() - start + state.upcoming_sleep > policy.max_total_s
        return spent[0]

    def before_sleep(state: RetryCallState) -> None:
        if policy.on_retry is not None and state.outcome is not None:
            wait_s = state.next_action.sleep if state.next_action is not None else 0.0
            reason = describe_outcome(state.outcome.result())
            policy.on_retry(state.attempt_number, policy.max_attempts, reason, float(wait_s))

    retrying = Retrying(
        retry=retry_if_result(is_retryable),
        wait=wait,
        stop=stop,
        sleep=lambda seconds: policy.sleep(float(seconds)),
        before_sleep=before_sleep,
        retry_error_callback=_last_result,
    )
    counted = _Counted(attempt)
    outcome: Outcome = retrying(counted)
    return Attempted(outcome=outcome, attempts=counted.calls, budget_spent=spent[0])


_TRANSPORT_REASONS: tuple[tuple[type[Exception], str], ...] = (
    (httpx.ReadTimeout, "read timeout"),
    (httpx.ConnectTimeout, "connect timeout"),
    (httpx.WriteTimeout, "write timeout"),
    (httpx.PoolTimeout, "pool timeout"),
    (httpx.ConnectError, "cannot connect"),
    (httpx.RemoteProtocolError, "the hub hung up mid-answer"),
    (httpx.NetworkError, "network error"),
)


def describe_outcome(outcome: Outcome) -> str:
    """A few words on a failed attempt, for the retry progress line."""
    if isinstance(outcome, httpx.Response):
        return f"HTTP {outcome.status_code} {outcome.reason_phrase}".rstrip()
    for kind, words in _TRANSPORT_REASONS:
        if isinstance(outcome, kind):
            return words
    return type(outcome).__name__


class _Counted:
    """Wraps the attempt so the caller learns how many times it ran."""

    def __init__(self, attempt: Callable[[], Outcome]) -> None:
        self._attempt = attempt
        self.calls = 0

    def __call__(self) -> Outcome:
        self.calls += 1
        return self._attempt()


def _hint(state: RetryCallState, wall_clock: Callable[[], datetime]) -> float | None:
    outcome = state.outcome
    if outcome is None or outcome.failed:
        return None
    result = outcome.result()
    if not isinstance(result, httpx.Response):
        return None
    return retry_after_seconds(result, wall_now=wall_clock())


def _last_result(state: RetryCallState) -> Outcome:
    assert state.outcome is not None  # tenacity only gives up after an attempt
    result: Outcome = state.outcome.result()
    return result


def _parse_http_date(value: str) -> datetime | None:
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    # RFC 9110 dates are GMT; email.utils leaves a "-0000" zone naive.
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


# --- what giving up looks like ----------------------------------------------------------------

# Hints for refusals whose fix is on the caller's side; the message says what to change.
_HINTS = {
    "unauthorized": "check the state-hub token the runtime was given",
    "idempotency_mismatch": (
        "this idempotency key was used before with another body; a changed request needs a new key"
    ),
}
_DETAIL_LIMIT = 300  # an error page from a proxy can be long; the message only needs its start


@dataclass(frozen=True)
class Call:
    """One hub call, as named in error messages."""

    method: str
    url: str
    base_url: str
    attempts: int
    policy: RetryPolicy


def failure_for(call: Call, outcome: Outcome, *, budget_spent: bool) -> HubError:
    """The error to raise for a call whose last outcome was not a success."""
    if isinstance(outcome, httpx.TransportError):
        return _transport_failure(call, outcome, budget_spent=budget_spent)
    status = outcome.status_code
    code, detail = error_body(outcome)
    said = f"{status} {code or outcome.reason_phrase}" + (f": {detail}" if detail else "")
    if status >= 500 or status in RETRY_STATUSES:
        message = f"{_prefix(call)} failed after {_count(call)}{_spent(call, budget_spent)}: {said}"
        return _error(HubUnavailable, message, call, status, code, detail)
    if status >= 400:
        hint = _HINTS.get(code or "")
        message = f"{_prefix(call)} refused the request: {said}" + (f"; {hint}" if hint else "")
        return _error(HubRequestError, message, call, status, code, detail)
    message = f"{_prefix(call)} answered with an unexpected {said}; the hub URL may point elsewhere"
    return _error(HubError, message, call, status, code, detail)


def parse_body(model: type[T], response: httpx.Response, attempts: int) -> T:
    """The response body as `model`, or a HubError that says the hub answered something else."""
    try:
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


def overrun_failure(call: Call, exc: DeadlinePassed | TooLarge) -> HubError:
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


def _transport_failure(call: Call, exc: httpx.TransportError, *, budget_spent: bool) -> HubError:
    detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    if not isinstance(exc, RETRY_EXCEPTIONS):
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
    call: Call,
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


def _prefix(call: Call) -> str:
    return f"state-hub {call.method} {call.url}"


def _count(call: Call) -> str:
    return f"{call.attempts} attempt" + ("" if call.attempts == 1 else "s")


def _spent(call: Call, budget_spent: bool) -> str:
    if not budget_spent:
        return ""
    return f" (stopped early: the next wait would pass the {call.policy.max_total_s:g} s budget)"
