"""The seal key and its HMAC: what seals a record, an item or a file (core/journal/seals.py).

Light on purpose: a skip seals its records without loading the typed ones (run/_quick.py).
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Literal

MIN_KEY_CHARS = 32
RECORD_PREFIX = b"custodian journal record v1\n"
ITEM_PREFIX = b"custodian approval item v1\n"

Sealer = Literal["current", "previous"]
# What a run, `inspect` and a skip say when no key is set.
UNSEALED = (
    "CUSTODIAN_SEAL_KEY is not set; an edited journal, checkpoint or approval file goes "
    "undetected (docs/operator.md, Seals)"
)


def _secret(secret: str) -> bytes:
    if len(secret) < MIN_KEY_CHARS:
        raise ValueError(
            f"a seal key needs at least {MIN_KEY_CHARS} characters "
            f"(this one has {len(secret)}); make one with `openssl rand -hex 32`"
        )
    return secret.encode("utf-8")


class SealKey:
    """The seal key (and, during a rotation, the previous one); never shown in a repr or error."""

    __slots__ = ("_previous", "_secret")

    def __init__(self, secret: str, previous: str | None = None) -> None:
        self._secret = _secret(secret)
        self._previous = None if previous is None else _secret(previous)

    def __repr__(self) -> str:
        return "SealKey(<hidden>)"

    __str__ = __repr__

    @property
    def rotating(self) -> bool:
        """True when a previous key is still accepted."""
        return self._previous is not None

    def current_only(self) -> SealKey:
        """The same key without the previous one."""
        only = SealKey.__new__(SealKey)
        only._secret, only._previous = self._secret, None
        return only

    def mac(self, prefix: bytes, message: str) -> str:
        """HMAC-SHA256 of `prefix + message` with the current key, as lowercase hex."""
        return _mac(self._secret, prefix, message)

    def sealer(self, prefix: bytes, message: str, seal: str | None) -> Sealer | None:
        """Which key made `seal` over `prefix + message`: current, previous, or None."""
        if seal is None:
            return None
        if _same(seal, self.mac(prefix, message)):
            return "current"
        if self._previous is not None and _same(seal, _mac(self._previous, prefix, message)):
            return "previous"
        return None


def _mac(secret: bytes, prefix: bytes, message: str) -> str:
    return hmac.new(secret, prefix + message.encode("utf-8"), hashlib.sha256).hexdigest()


def _same(stored: str, expected: str) -> bool:
    # Bytes, not str: compare_digest refuses non-ASCII text, and a stored seal is untrusted.
    return hmac.compare_digest(stored.encode("utf-8"), expected.encode("utf-8"))
