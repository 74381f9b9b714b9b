"""What the client checks before anything is sent: URL, token, limits, keys, ids and versions.

A bad value is refused here with what to fix; nothing reaches the hub that the contract forbids.
"""

from __future__ import annotations

import re

import httpx

from custodian_runtime.core.names import DOMAIN_PATTERN, ID_PATTERN
from custodian_runtime.core.redact import redact
from custodian_runtime.errors import ConfigError

# The contract's "1–255 printable ASCII"; no space at either end, since HTTP strips it there.
_KEY = re.compile(r"^[\x21-\x7e](?:[\x20-\x7e]{0,253}[\x21-\x7e])?$")
_ID = re.compile(ID_PATTERN)
_DOMAIN = re.compile(DOMAIN_PATTERN)


def check_limits(max_attempts: int, max_total_s: float, max_retry_wait_s: float) -> None:
    """Retry limits that can work: at least one attempt, a positive budget."""
    if max_attempts < 1:
        raise ConfigError(f"state-hub max_attempts must be at least 1, not {max_attempts}")
    if max_total_s <= 0 or max_retry_wait_s < 0:
        raise ConfigError(
            "state-hub retry limits must be positive: got"
            f" max_total_s={max_total_s}, max_retry_wait_s={max_retry_wait_s}"
        )


def checked_version(version: int) -> int:
    """A task version for `If-Match`: a whole number >= 1."""
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise ValueError(f"if_match must be a task version (a whole number >= 1), not {version!r}")
    return version


def checked_base_url(base_url: str) -> tuple[str, httpx.BasicAuth | None]:
    """The hub URL without credentials, and Basic auth for the credentials it carried."""
    url = httpx.URL(base_url.strip()) if base_url.strip() else None
    if url is None or url.scheme not in ("http", "https") or not url.host:
        raise ConfigError(
            f"the state-hub URL must look like http://host:port, not {redact(base_url)!r}",
            setting="hub_url",
        )
    if url.query or url.fragment:
        raise ConfigError(
            f"the state-hub URL must not carry a query or fragment: {redact(base_url)!r}",
            setting="hub_url",
        )
    basic = httpx.BasicAuth(url.username, url.password) if url.userinfo else None
    return str(url.copy_with(userinfo=b"")).rstrip("/"), basic


def checked_token(token: str) -> str:
    """A bearer token that fits in a header as it is."""
    if not token or not all(0x21 <= ord(char) <= 0x7E for char in token):
        raise ConfigError(
            "the state-hub token must be non-empty printable ASCII without spaces;"
            " unset it to talk to a hub without auth",
            setting="hub_token",
        )
    return token


def checked_key(key: str) -> str:
    """An idempotency key as the contract allows it."""
    if not isinstance(key, str) or not _KEY.fullmatch(key):
        raise ValueError(
            "idempotency_key must be 1-255 printable ASCII characters with no space at either end,"
            f" not {key!r}"
        )
    return key


def checked_id(value: str, name: str) -> str:
    """An id that is safe in a URL path."""
    # "." and ".." match the id pattern but would walk the URL path.
    if value in (".", ".."):
        raise ValueError(f"{name} must be an id like 'task-12', not {value!r}")
    return _checked(value, _ID, name)


def _checked(value: str, pattern: re.Pattern[str], name: str) -> str:
    if not isinstance(value, str) or not pattern.fullmatch(value):
        raise ValueError(f"{name} must match {pattern.pattern}, not {value!r}")
    return value


def checked_domain(domain: str) -> str:
    """A domain name as the contract spells it."""
    return _checked(domain, _DOMAIN, "domain")
