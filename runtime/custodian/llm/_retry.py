"""Bounded retries for model calls: tenacity at the edge, with injectable sleep and clock."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from tenacity import RetryCallState, Retrying, retry_if_exception_type

from custodian.errors import ModelError
from custodian.llm.base import ModelConfig

if TYPE_CHECKING:
    from custodian.stopping import OnRetry

T = TypeVar("T")

# Full-jitter backoff when the server gives no hint: uniform(0, min(cap, base * 2**n)).
BACKOFF_BASE_S = 1.0
BACKOFF_CAP_S = 30.0
REASON_CHARS = 200  # a retry progress line quotes at most this much of the error


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to retry; `sleep`, `clock` and `rng` are hooks for tests."""

    max_attempts: int = 4
    max_wait_s: float = 60.0
    max_total_s: float = 600.0
    sleep: Callable[[float], None] = field(default=time.sleep)
    clock: Callable[[], float] = field(default=time.monotonic)
    rng: Callable[[], float] = field(default=random.random)
    on_retry: OnRetry | None = None  # told of each failed attempt before the wait

    @classmethod
    def from_config(
        cls,
        config: ModelConfig,
        *,
        sleep: Callable[[float], None] | None = None,
        max_attempts: int | None = None,
    ) -> RetryPolicy:
        """The policy a `ModelConfig` asks for, optionally with fewer attempts and a fake sleep.

        Without a fake sleep, the run's stop flag (if any) sleeps, so a signal ends the wait.
        """
        attempts = config.max_attempts if max_attempts is None else max_attempts
        default_sleep = config.stop.sleep if config.stop is not None else time.sleep
        return cls(
            max_attempts=max(1, attempts),
            max_wait_s=max(0.0, config.max_retry_wait_s),
            max_total_s=max(0.0, config.max_total_s),
            sleep=sleep or default_sleep,
            on_retry=config.on_retry,
        )


class Retryable(Exception):
    """Raised inside an attempt: this failure may pass if the same request is sent again."""

    def __init__(self, error: ModelError, retry_after_s: float | None = None) -> None:
        super().__init__(error.message)
        self.error = error
        self.retry_after_s = retry_after_s


def with_attempts(error: ModelError, attempts: int, *, gave_up: bool = False) -> ModelError:
    """A copy of `error` that records how many attempts were made."""
    message = error.message
    if gave_up and attempts > 1:
        message = f"{message} (gave up after {attempts} attempts)"
    return ModelError(
        message,
        provider=error.provider,
        status=error.status,
        code=error.code,
        request_id=error.request_id,
        retryable=error.retryable,
        stderr_tail=error.stderr_tail,
        attempts=attempts,
    )


class _Wait:
    """Honour the server's hint (capped), else full-jitter exponential backoff."""

    def __init__(self, policy: RetryPolicy) -> None:
        self.policy = policy

    def __call__(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        hint = exc.retry_after_s if isinstance(exc, Retryable) else None
        if hint is not None:
            return min(max(0.0, hint), self.policy.max_wait_s)
        ceiling = min(BACKOFF_CAP_S, BACKOFF_BASE_S * 2 ** (state.attempt_number - 1))
        return float(self.policy.rng() * min(ceiling, self.policy.max_wait_s))


class _Stop:
    """Stop at the attempt limit, or when the next sleep would overrun the total budget."""

    def __init__(self, policy: RetryPolicy, started: float) -> None:
        self.policy = policy
        self.started = started

    def __call__(self, state: RetryCallState) -> bool:
        if state.attempt_number >= self.policy.max_attempts:
            return True
        elapsed = self.policy.clock() - self.started
        return elapsed + state.upcoming_sleep > self.policy.max_total_s


def call_with_retries(attempt: Callable[[], T], policy: RetryPolicy) -> T:
    """Run `attempt` until it succeeds, raises a plain ModelError, or the budget is spent."""
    count = 0

    def counted() -> T:
        nonlocal count
        count += 1
        return attempt()

    def before_sleep(state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome is not None else None
        if policy.on_retry is not None and isinstance(exc, Retryable):
            wait_s = state.next_action.sleep if state.next_action is not None else 0.0
            reason = exc.error.message[:REASON_CHARS]
            policy.on_retry(state.attempt_number, policy.max_attempts, reason, float(wait_s))

    retrying = Retrying(
        retry=retry_if_exception_type(Retryable),
        wait=_Wait(policy),
        stop=_Stop(policy, policy.clock()),
        sleep=policy.sleep,
        before_sleep=before_sleep,
        reraise=True,
    )
    try:
        return retrying(counted)
    except Retryable as exc:
        raise with_attempts(exc.error, count, gave_up=True) from exc.error.__cause__
    except ModelError as exc:
        raise with_attempts(exc, count) from exc.__cause__
