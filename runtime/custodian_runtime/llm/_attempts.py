"""Model calls under the one retry policy: what an adapter raises to retry, what giving up says."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from custodian_runtime.errors import ModelError
from custodian_runtime.llm.base import ModelConfig
from custodian_runtime.net.retry import Retry, RetryPolicy, Sleep, call_with_retries

T = TypeVar("T")

# Full-jitter backoff when the server gives no hint: uniform(0, min(cap, base * 2**n)).
BACKOFF_BASE_S = 1.0
BACKOFF_CAP_S = 30.0
REASON_CHARS = 200  # a retry progress line quotes at most this much of the error


class Retryable(Exception):
    """Raised inside an attempt: this failure may pass if the same request is sent again."""

    def __init__(self, error: ModelError, retry_after_s: float | None = None) -> None:
        super().__init__(error.message)
        self.error = error
        self.retry_after_s = retry_after_s


def model_policy(
    config: ModelConfig, *, sleep: Sleep | None = None, max_attempts: int | None = None
) -> RetryPolicy:
    """The policy a `ModelConfig` asks for, optionally with fewer attempts and a fake sleep.

    Without a fake sleep, the run's stop flag (if any) sleeps, so a signal ends the wait.
    """
    attempts = config.max_attempts if max_attempts is None else max_attempts
    default_sleep = config.stop.sleep if config.stop is not None else time.sleep
    return RetryPolicy(
        max_attempts=max(1, attempts),
        max_wait_s=max(0.0, config.max_retry_wait_s),
        max_total_s=max(0.0, config.total_s),
        backoff_base_s=BACKOFF_BASE_S,
        backoff_cap_s=BACKOFF_CAP_S,
        sleep=sleep or default_sleep,
        stop=config.stop,
        on_retry=config.on_retry,
    )


def call_model(policy: RetryPolicy, attempt: Callable[[], T]) -> T:
    """Run `attempt` until it succeeds, raises a plain ModelError, or the policy says stop."""
    calls = [0]

    def once() -> T | Retryable:
        calls[0] += 1
        try:
            return attempt()
        except Retryable as exc:
            return exc

    try:
        result = call_with_retries(policy, once, _judge)
    except ModelError as exc:
        raise with_attempts(exc, calls[0]) from exc.__cause__
    if isinstance(result.outcome, Retryable):
        error = result.outcome.error
        raise with_attempts(error, result.attempts, gave_up=True) from error.__cause__
    return result.outcome


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
        answer=error.answer,
    )


def _judge(outcome: object) -> Retry | None:
    if isinstance(outcome, Retryable):
        return Retry(outcome.error.message[:REASON_CHARS], outcome.retry_after_s)
    return None
