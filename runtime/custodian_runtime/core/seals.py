"""Seals: HMAC-SHA256 over journal records and approval items, with a key the memory volume lacks.

A record's seal is the HMAC of its hash (which already covers every other field and the hash of
the record before it); an item's seal is the HMAC of its canonical JSON without the seal. Each
kind has its own prefix, so a seal of one can never pass as a seal of the other. With a key,
every record and every item must carry a valid seal: there is no unsealed prefix to fall back on.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence

from custodian_runtime.core.approvals import ApprovalItem
from custodian_runtime.core.digest import canonical_json
from custodian_runtime.core.journal_records import Problem, Record

MIN_KEY_CHARS = 32
_RECORD_PREFIX = b"custodian journal record v1\n"
_ITEM_PREFIX = b"custodian approval item v1\n"


class SealKey:
    """The seal key; it never shows itself in a repr, a str or an error."""

    __slots__ = ("_secret",)

    def __init__(self, secret: str) -> None:
        if len(secret) < MIN_KEY_CHARS:
            raise ValueError(
                f"a seal key needs at least {MIN_KEY_CHARS} characters "
                f"(this one has {len(secret)}); make one with `openssl rand -hex 32`"
            )
        self._secret = secret.encode("utf-8")

    def __repr__(self) -> str:
        return "SealKey(<hidden>)"

    __str__ = __repr__

    def mac(self, prefix: bytes, message: str) -> str:
        """HMAC-SHA256 of `prefix + message`, as lowercase hex."""
        return hmac.new(self._secret, prefix + message.encode("utf-8"), hashlib.sha256).hexdigest()


def record_seal(key: SealKey, record: Record) -> str:
    """The seal of a record: HMAC of its hash."""
    return key.mac(_RECORD_PREFIX, record.hash)


def seal_record(key: SealKey, record: Record) -> Record:
    """The same record with its seal set."""
    return record.model_copy(update={"seal": record_seal(key, record)})


def record_seal_problem(key: SealKey, record: Record) -> str | None:
    """Why the record's seal does not hold (None when it does)."""
    if record.seal is None:
        return "no seal: written without the seal key, or added by someone who lacks it"
    if not _same(record.seal, record_seal(key, record)):
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


def item_seal(key: SealKey, item: ApprovalItem) -> str:
    """The seal of an approval item: HMAC of its canonical JSON without the seal."""
    data = item.model_dump(mode="json", exclude={"seal"})
    for unset in [k for k in ("hub", "hub_at", "canon") if data[k] is None]:
        del data[unset]  # an item from before items were bound keeps its seal
    return key.mac(_ITEM_PREFIX, canonical_json(data))


def seal_item(key: SealKey, item: ApprovalItem) -> ApprovalItem:
    """The same item with its seal set (over every other field, as they are now)."""
    return item.model_copy(update={"seal": item_seal(key, item)})


def item_seal_problem(key: SealKey, item: ApprovalItem) -> str | None:
    """Why an item's seal does not hold (None when it does)."""
    seal = item.seal
    if seal is None:
        return "carries no seal: written without the seal key, or by someone who lacks it"
    if not _same(seal, item_seal(key, item)):
        return "its seal does not match: the file was edited, or sealed with another key"
    return None


def _same(stored: str, expected: str) -> bool:
    # Bytes, not str: compare_digest refuses non-ASCII text, and a stored seal is untrusted.
    return hmac.compare_digest(stored.encode("utf-8"), expected.encode("utf-8"))


def seals_seen(records: Sequence[Record]) -> int:
    """How many records carry a seal (checked or not)."""
    return sum(1 for r in records if r.seal is not None)
