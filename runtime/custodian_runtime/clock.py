"""The wall clock, the run id and the authorization nonce: the shell's time and randomness."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

# Set only inside `simulated_clock` (a bench that lives a month in minutes); never from outside
# the process: no environment variable or file moves the clock.
_simulated: list[Callable[[], datetime]] = []


def utc_now() -> datetime:
    """The wall clock, in UTC (inside `simulated_clock`, that clock)."""
    if _simulated:
        return _simulated[-1]()
    return datetime.now(UTC)


@contextmanager
def simulated_clock(clock: Callable[[], datetime]) -> Iterator[None]:
    """Within, every `utc_now()` of this process reads `clock()`: a simulated month, say."""
    _simulated.append(clock)
    try:
        yield
    finally:
        _simulated.remove(clock)


def new_run_id(now: datetime) -> str:
    """A sortable, unique run id: `r20261130T081500Z-3fa9c2`."""
    import secrets  # here, not at import: `custodian --help` draws nothing

    return f"r{now.strftime('%Y%m%dT%H%M%SZ')}-{secrets.token_hex(3)}"


def new_nonce() -> str:
    """A fresh nonce for one authorization (12 hex digits; core/journal/keys.py keys on it)."""
    import secrets

    return secrets.token_hex(6)
