"""One HTTP exchange under a deadline and a size cap; the one retry policy of hub and model."""

from __future__ import annotations

from typing import TYPE_CHECKING

from custodian_runtime._lazy import lazy_attributes

if TYPE_CHECKING:
    from custodian_runtime.net.bounded_http import (
        DeadlinePassed,
        Stoppable,
        TooLarge,
        describe_size,
        exchange,
    )
    from custodian_runtime.net.retry import (
        RETRY_TRANSPORT_ERRORS,
        Attempted,
        MonotonicClock,
        Random,
        Retry,
        RetryPolicy,
        Sleep,
        StopReason,
        T,
        WallClock,
        call_with_retries,
        next_wait,
        parse_retry_after,
        retry_after_seconds,
        retryable_status,
        retryable_transport,
        stop_reason,
    )

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_attributes(globals())
