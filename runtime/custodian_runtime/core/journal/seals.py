"""Seals: HMAC-SHA256 over journal records and approval items, with a key the memory volume lacks.

A record's seal is here; an approval item's is core/approvals/seals.py, with the same key.

A record's seal is the HMAC of its hash (which already covers every other field and the hash of
the record before it); an item's seal is the HMAC of its canonical JSON without the seal. Each
kind has its own prefix, so a seal of one can never pass as a seal of the other. With a key,
every record and every item must carry a valid seal: there is no unsealed prefix to fall back on.
While a key is rotated, the previous key still verifies what it sealed; only the new one seals.
"""

from __future__ import annotations

from collections.abc import Sequence

from custodian_runtime.core.journal.records import Problem, Record
from custodian_runtime.core.journal.seal_key import MIN_KEY_CHARS as MIN_KEY_CHARS

# Their home is core/journal/seal_key.py: the key and a record's seal, without pydantic.
from custodian_runtime.core.journal.seal_key import RECORD_PREFIX
from custodian_runtime.core.journal.seal_key import Sealer as Sealer
from custodian_runtime.core.journal.seal_key import SealKey as SealKey


def record_seal(key: SealKey, record: Record) -> str:
    """The seal of a record: HMAC of its hash."""
    return key.mac(RECORD_PREFIX, record.hash)


def seal_record(key: SealKey, record: Record) -> Record:
    """The same record with its seal set."""
    return record.model_copy(update={"seal": record_seal(key, record)})


def record_sealer(key: SealKey, record: Record) -> Sealer | None:
    """Which key sealed the record (None: neither, or no seal)."""
    return key.sealer(RECORD_PREFIX, record.hash, record.seal)


def record_seal_problem(key: SealKey, record: Record) -> str | None:
    """Why the record's seal does not verify (None when it does)."""
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


def seals_seen(records: Sequence[Record]) -> int:
    """How many records carry a seal (checked or not)."""
    return sum(1 for r in records if r.seal is not None)
