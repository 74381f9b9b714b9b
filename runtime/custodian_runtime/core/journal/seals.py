"""Seals: HMAC-SHA256 over journal records and approval items, with a key the memory volume lacks.

A record's seal is the HMAC of its hash (which already covers every other field and the hash of
the record before it); an item's seal is the HMAC of its canonical JSON without the seal. Each
kind has its own prefix, so a seal of one can never pass as a seal of the other. With a key,
every record and every item must carry a valid seal: there is no unsealed prefix to fall back on.
While a key is rotated, the previous key still verifies what it sealed; only the new one seals.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence
from typing import Literal

from custodian_runtime.core.approvals.items import ApprovalItem
from custodian_runtime.core.digest import canonical_json
from custodian_runtime.core.journal.records import Problem, Record

MIN_KEY_CHARS = 32
_RECORD_PREFIX = b"custodian journal record v1\n"
_ITEM_PREFIX = b"custodian approval item v1\n"

Sealer = Literal["current", "previous"]


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


def record_seal(key: SealKey, record: Record) -> str:
    """The seal of a record: HMAC of its hash."""
    return key.mac(_RECORD_PREFIX, record.hash)


def seal_record(key: SealKey, record: Record) -> Record:
    """The same record with its seal set."""
    return record.model_copy(update={"seal": record_seal(key, record)})


def record_sealer(key: SealKey, record: Record) -> Sealer | None:
    """Which key sealed the record (None: neither, or no seal)."""
    return key.sealer(_RECORD_PREFIX, record.hash, record.seal)


def record_seal_problem(key: SealKey, record: Record) -> str | None:
    """Why the record's seal does not hold (None when it does)."""
    if record.seal is None:
        return "no seal: written without the seal key, or added by someone who lacks it"
    if record_sealer(key, record) is None:
        return "seal does not match: the record was changed, or sealed with another key"
    return None


def verify_seals(records: Sequence[Record], key: SealKey) -> list[Problem]:
    """One problem for every record whose seal is missing or wrong."""
    problems = []
    for record in records:
        why = record_seal_problem(key, record)
        if why is not None:
            problems.append(Problem.of(record, why))
    return problems


def _item_message(item: ApprovalItem) -> str:
    data = item.model_dump(mode="json", exclude={"seal"})
    later = ("hub", "hub_at", "canon", "waits", "waits_code", "waiting_because", "facts")
    for unset in [k for k in later if data[k] is None]:
        del data[unset]  # an item from before items were bound (or said why) keeps its seal
    return canonical_json(data)


def item_seal(key: SealKey, item: ApprovalItem) -> str:
    """The seal of an approval item: HMAC of its canonical JSON without the seal."""
    return key.mac(_ITEM_PREFIX, _item_message(item))


def item_sealer(key: SealKey, item: ApprovalItem) -> Sealer | None:
    """Which key sealed the item (None: neither, or no seal)."""
    return key.sealer(_ITEM_PREFIX, _item_message(item), item.seal)


def seal_item(key: SealKey, item: ApprovalItem) -> ApprovalItem:
    """The same item with its seal set (over every other field, as they are now)."""
    return item.model_copy(update={"seal": item_seal(key, item)})


def item_seal_problem(key: SealKey, item: ApprovalItem) -> str | None:
    """Why an item's seal does not hold (None when it does)."""
    seal = item.seal
    if seal is None:
        return "carries no seal: written without the seal key, or by someone who lacks it"
    if item_sealer(key, item) is None:
        return "its seal does not match: the file was edited, or sealed with another key"
    return None


def _same(stored: str, expected: str) -> bool:
    # Bytes, not str: compare_digest refuses non-ASCII text, and a stored seal is untrusted.
    return hmac.compare_digest(stored.encode("utf-8"), expected.encode("utf-8"))


def seals_seen(records: Sequence[Record]) -> int:
    """How many records carry a seal (checked or not)."""
    return sum(1 for r in records if r.seal is not None)
