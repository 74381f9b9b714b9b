"""Journal records and their hash chain: building a record and checking seq, prev and hash links."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
)

from custodian_runtime.core.digest import canonical_json

# Their home is core/journal/chain.py: a record's fields and hash, without pydantic.
from custodian_runtime.core.journal.chain import GENESIS as GENESIS
from custodian_runtime.core.journal.chain import SCHEMA_VERSION as SCHEMA_VERSION
from custodian_runtime.core.journal.chain import chain_fields, fields_hash
from custodian_runtime.core.journal.chain import format_at as format_at
from custodian_runtime.core.journal.chain import parse_at as parse_at

KINDS = frozenset(
    {
        "run_started",
        "observed",
        "prompt",
        "model_response",
        "model_failed",
        "plan",
        "ruling",
        "authorized",
        "dispatched",
        "receipt",
        "failed",
        "stale",
        "queued",
        "reconciled",
        "note_written",
        "finished",
        "approval_decided",
        "unknown",
        "settled_by_hand",
        "policy_set",
        "grant_issued",
        "grant_revoked",
        "grant_used",
        "grant_suspended",
        "class_held",
        "refusal_said",
        "shadowed",
        "shadow_matched",
        "landing_probe",
        "same_value",
        "notice",
        "notice_receipt",
    }
)
# A person's runs have no run_started/finished pair: each is one record of these kinds (an
# approval, a write settled by hand, a mode set, a grant issued or revoked, a standing no).
PERSON_RUN_FIRST = frozenset(
    {"approval_decided", "settled_by_hand", "policy_set", "grant_issued", "grant_revoked",
     "refusal_said"}
)  # fmt: skip
# The first record of any run: where a segment or a verification window may begin.
RUN_FIRST_KINDS = frozenset({"run_started", *PERSON_RUN_FIRST})


class Record(BaseModel):
    """One journal line. `hash` is the SHA-256 of the canonical JSON of every other field.

    `seal` (present only when a seal key is configured) is an HMAC of `hash`, outside the hash.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    v: Literal[1]
    seq: int = Field(ge=1)
    run_id: str = Field(min_length=1)
    domain: str = Field(min_length=1)
    kind: str = Field(min_length=1)
    at: str
    data: dict[str, Any]
    prev: str
    hash: str
    seal: str | None = Field(default=None, pattern="^[0-9a-f]{64}$")

    @model_serializer(mode="wrap")
    def _drop_missing_seal(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # An unsealed record has no `seal` key at all, so it reads as it did before seals.
        fields: dict[str, Any] = handler(self)
        if fields.get("seal") is None:
            fields.pop("seal", None)
        return fields

    def line(self) -> str:
        """The record as it is written to disk: canonical JSON, no trailing newline."""
        return canonical_json(self.model_dump())

    @property
    def ref(self) -> str:
        """Short reference, `<domain>:<seq>`, as the court record prints it."""
        return f"{self.domain}:{self.seq}"


@dataclass(frozen=True)
class Problem:
    """One broken rule, tied to the record that breaks it (seq 0 when no record can be named)."""

    seq: int
    kind: str
    run_id: str
    message: str

    def __str__(self) -> str:
        if self.seq == 0:
            return self.message
        return f"record {self.seq} ({self.kind}, run {self.run_id}): {self.message}"

    @classmethod
    def of(cls, record: Record, message: str) -> Problem:
        """A problem with `record`."""
        return cls(record.seq, record.kind, record.run_id, message)


def record_hash(record: Record | Mapping[str, Any]) -> str:
    """SHA-256 hex of the canonical JSON of the record without its `hash` and `seal` fields."""
    return fields_hash(record.model_dump() if isinstance(record, Record) else record)


def make_record(
    prev: Record | None, run_id: str, domain: str, kind: str, at: datetime, data: Mapping[str, Any]
) -> Record:
    """The record that follows `prev` (None for the first record); seq and prev come from it."""
    if kind not in KINDS:
        raise ValueError(f"unknown journal record kind {kind!r}; known kinds: {sorted(KINDS)}")
    if prev is not None and prev.domain != domain:
        raise ValueError(f"record for domain {domain!r} cannot follow a {prev.domain!r} record")
    after = None if prev is None else (prev.seq, prev.hash)
    fields = chain_fields(after, run_id, domain, kind, at, data)
    return Record(**fields, hash=fields_hash(fields))


def verify_chain(records: Sequence[Record]) -> list[Problem]:
    """Seq continuity, prev links and each record's hash; every break names the record."""
    problems: list[Problem] = []
    before: Record | None = None
    for record in records:
        problems.extend(_link_problems(before, record))
        if record_hash(record) != record.hash:
            problems.append(
                Problem.of(record, "hash mismatch (the record was changed after it was written)")
            )
        before = record
    return problems


def _link_problems(before: Record | None, record: Record) -> list[Problem]:
    problems: list[Problem] = []
    want_seq = 1 if before is None else before.seq + 1
    want_prev = GENESIS if before is None else before.hash
    if record.seq != want_seq:
        after = "the start of the journal" if before is None else f"record {before.seq}"
        problems.append(
            Problem.of(record, f"seq {record.seq} follows {after}, expected {want_seq}")
        )
    if record.prev != want_prev:
        what = "the genesis value" if before is None else f"the hash of record {before.seq}"
        problems.append(Problem.of(record, f"prev does not match {what}"))
    if before is not None and record.domain != before.domain:
        problems.append(
            Problem.of(record, f"domain {record.domain!r} in a {before.domain!r} journal")
        )
    return problems
