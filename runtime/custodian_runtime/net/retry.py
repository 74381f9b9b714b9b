"""The one retry policy for calls that leave the process: state-hub requests and model calls.

It owns which failures are worth another try, how long to wait (the server's `Retry-After`,
capped, else full-jitter backoff), and one stop rule: the attempt count, the whole-call time
budget, and the run's stop flag. tenacity does the looping, here at the edge and nowhere else.
A caller hands in one attempt and a judge that says whether its outcome may pass if sent again;
a write is only ever sent again as the same request, so with the same idempotency key and body.
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Generic, Literal, TypeVar

import httpx
from tenacity import RetryCallState, Retrying

from custodian_runtime.clock import utc_now
from custodian_runtime.net.bounded_http import Stoppable
from custodian_runtime.process.stopping import OnRetry, interrupted

T = TypeVar("T")
Sleep = Callable[[float], None]
MonotonicClock = Callable[[], float]  # monotonic seconds: measures the time budget
WallClock = Callable[[], datetime]  # UTC: an HTTP-date `Retry-After` is a wall-clock time
Random = Callable[[], float]  # uniform in [0, 1): the jitter; `lambda: 1.0` makes it deterministic
StopReason = Literal["attempts", "budget", "signal"]

# Timeouts, refused or reset connections, and a server that hung up mid-answer are worth another
# try; a malformed URL or header (UnsupportedProtocol, LocalProtocolError) is not.
RETRY_TRANSPORT_ERRORS: tuple[type[Exception], ...] = (
    httpx.TimeoutException,
    httpx.NetworkError,
    httpx.RemoteProtocolError,
)

# RFC 9110 delay-seconds is 1*DIGIT: no sign, fraction, exponent or "nan" ("²".isdigit() is true).
_DIGITS = re.compile(r"[0-9]+", re.ASCII)


# A request that timed out (408) or was rate limited (429) may pass later; any other 4xx will not.
_RETRYABLE_4XX = frozenset({408, 429})


def retryable_status(status: int, *, final: frozenset[int] = frozenset()) -> bool:
    """408, 429 and 5xx may pass if sent again; no other 4xx, nor a status the caller names."""
    return status not in final and (status in _RETRYABLE_4XX or 500 <= status <= 599)


def retryable_transport(exc: BaseException) -> bool:
    """True for a transport failure that another attempt may cure."""
    return isinstance(exc, RETRY_TRANSPORT_ERRORS)


def parse_retry_after(value: str | None, *, now: datetime) -> float | None:
    """Seconds to wait per `Retry-After` (delay-seconds or HTTP-date); None if absent or bad."""
    if value is None:
        return None
    text = value.strip()
    if _DIGITS.fullmatch(text):
        return float(text)
    when = _parse_http_date(text)
    return None if when is None else max(0.0, (when - now).total_seconds())


def retry_after_seconds(headers: Mapping[str, str], *, now: datetime) -> float | None:
    """The server's wait hint: `retry-after-ms`, else `Retry-After` from the server's `Date`.

    An HTTP-date is measured against the server's own `Date` when it sent one (it chose the date
    by its clock, and ours may disagree), else against `now`.
    """
    millis = headers.get("retry-after-ms", "").strip()
    if _DIGITS.fullmatch(millis):
        return float(millis) / 1000.0
    server_date = headers.get("date")
    said = _parse_http_date(server_date) if server_date is not None else None
    return parse_retry_after(headers.get("retry-after"), now=said or now)


@dataclass(frozen=True)
class RetryPolicy:
    """How many times, how long, and how patiently one call may be tried; hooks for tests."""

    max_attempts: int = 5
    max_total_s: float = 60.0  # the whole call: attempts, body reads and waits
    max_wait_s: float = 30.0  # no single wait is longer, whatever the server asks
    backoff_base_s: float = 0.5  # the first jitter window; each retry doubles it
    backoff_cap_s: float = 30.0  # the widest jitter window
    sleep: Sleep = time.sleep
    clock: MonotonicClock = time.monotonic
    wall_clock: WallClock = utc_now
    rng: Random = random.random
    stop: Stoppable | None = None  # a signal ends the retrying before the next wait
    on_retry: OnRetry | None = None  # told of each failed attempt before the wait

    def deadline(self) -> float:
        """The `clock` time by which a call starting now must be done, retries included."""
        return self.clock() + self.max_total_s


@dataclass(frozen=True)
class Retry:
    """A judge's word that an outcome may pass if sent again: why it failed, the server's hint."""

    reason: str  # a few words for the progress line
    retry_after_s: float | None = None


@dataclass(frozen=True)
class Attempted(Generic[T]):
    """The last outcome of a retried call, how many attempts it took, and why it stopped."""

    outcome: T
    attempts: int
    stopped: StopReason | None  # None: the last outcome needs no retry (a success, or final)

    @property
    def budget_spent(self) -> bool:
        """True when it gave up because the next wait would pass the time budget."""
        return self.stopped == "budget"


def next_wait(policy: RetryPolicy, attempt: int, retry_after_s: float | None) -> float:
    """The wait after failed `attempt`: the server's hint capped at max_wait_s, else full jitter."""
    if retry_after_s is not None:
        return min(max(0.0, retry_after_s), policy.max_wait_s)
    window = policy.backoff_base_s * 2.0 ** (attempt - 1)
    return policy.rng() * min(window, policy.backoff_cap_s, policy.max_wait_s)


def stop_reason(
    policy: RetryPolicy, *, attempt: int, elapsed_s: float, wait_s: float
) -> StopReason | None:
    """Why no attempt may follow `attempt` after a wait of `wait_s`, or None to go on."""
    if attempt >= policy.max_attempts:
        return "attempts"
    if elapsed_s + wait_s > policy.max_total_s:
        return "budget"
    if policy.stop is not None and policy.stop.signal is not None:
        return "signal"
    return None


def call_with_retries(
    policy: RetryPolicy, attempt: Callable[[], T], judge: Callable[[T], Retry | None]
) -> Attempted[T]:
    """Run `attempt` until `judge` finds nothing to retry or the stop rule says enough.

    Exceptions from `attempt` pass through untouched. A signal on the stop flag raises
    Interrupted instead of waiting.
    """
    start = policy.clock()
    last = _Last(attempt, judge)
    stopped: list[StopReason | None] = [None]

    def wait(state: RetryCallState) -> float:
        hint = last.verdict.retry_after_s if last.verdict is not None else None
        return next_wait(policy, state.attempt_number, hint)

    def stop(state: RetryCallState) -> bool:
        elapsed = policy.clock() - start
        reason = stop_reason(
            policy, attempt=state.attempt_number, elapsed_s=elapsed, wait_s=state.upcoming_sleep
        )
        if reason == "signal" and policy.stop is not None and policy.stop.signal is not None:
            raise interrupted(policy.stop.signal, "a retry wait")
        stopped[0] = reason
        return reason is not None

    def before_sleep(state: RetryCallState) -> None:
        if policy.on_retry is not None and last.verdict is not None:
            wait_s = state.next_action.sleep if state.next_action is not None else 0.0
            policy.on_retry(state.attempt_number, policy.max_attempts, last.verdict.reason, wait_s)

    retrying = Retrying(
        retry=lambda _state: last.verdict is not None,
        wait=wait,
        stop=stop,
        sleep=policy.sleep,
        before_sleep=before_sleep,
        retry_error_callback=lambda _state: last.outcome,
    )
    outcome: T = retrying(last)
    return Attempted(outcome=outcome, attempts=last.calls, stopped=stopped[0])


class _Last(Generic[T]):
    """Runs the attempt, counts it, and keeps its outcome and the judge's verdict on it."""

    outcome: T  # set by the first call, before tenacity can ask for it

    def __init__(self, attempt: Callable[[], T], judge: Callable[[T], Retry | None]) -> None:
        self._attempt = attempt
        self._judge = judge
        self.calls = 0
        self.verdict: Retry | None = None

    def __call__(self) -> T:
        self.calls += 1
        self.verdict = None
        self.outcome = self._attempt()
        self.verdict = self._judge(self.outcome)
        return self.outcome


def _parse_http_date(value: str) -> datetime | None:
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    # RFC 9110 dates are GMT; email.utils leaves a "-0000" zone naive.
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)
