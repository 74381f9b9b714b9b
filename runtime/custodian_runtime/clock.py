"""The wall clock, the run id and the authorization nonce: the shell's time and randomness."""

from __future__ import annotations

from datetime import UTC, datetime


def utc_now() -> datetime:
    """The wall clock, in UTC."""
    return datetime.now(UTC)


def new_run_id(now: datetime) -> str:
    """A sortable, unique run id: `r20261130T081500Z-3fa9c2`."""
    import secrets  # here, not at import: `custodian --help` draws nothing

    return f"r{now.strftime('%Y%m%dT%H%M%SZ')}-{secrets.token_hex(3)}"


def new_nonce() -> str:
    """A fresh nonce for one authorization (12 hex digits; core/authority/keys.py keys on it)."""
    import secrets

    return secrets.token_hex(6)
