"""A person's word: the one durable form of every decision a person makes.

An approve, a reject, a mode set, a grant issued or revoked is one `Word` with a unique id. It is
journaled at once when the domain is free, or kept in the domain's inbox
(journal/person/inbox.py) while a run holds it; the inbox gives it an arrival number, and the
journal absorbs the inbox in that order, exactly once (each journaled record carries the word's
id; core/fold/checkpoint.py keeps the ids absorbed). The recording host's clock (`at`) is for
people to read, never for order.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from custodian_runtime.core.digest import canonical_json
from custodian_runtime.core.journal.kinds import Entry, encode
from custodian_runtime.core.journal.seals import Sealer, SealKey

_PREFIX = b"custodian word v1\n"
# A word's id: `w-` and 16 hex for a new one; the ids of the old side stores carry over.
WORD_ID = r"^[a-z]+-[0-9a-f]{6,24}$"
STANDING_KINDS = ("policy_set", "grant_issued", "grant_revoked", "refusal_said")
WordKind = Literal[
    "approve", "reject", "policy_set", "grant_issued", "grant_revoked", "refusal_said"
]


class DecisionSaid(BaseModel):
    """What an approve or a reject says: the item, who, and why (a reason, or a note)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    approval_id: str = Field(pattern=r"^[A-Za-z0-9._-]{1,80}$")
    by: str = Field(min_length=1, max_length=200)
    text: str | None = Field(default=None, max_length=4000)
    # Where the name came from (core/approvals/decider.py); words kept before it lack it.
    by_source: Literal["proxy", "token", "config", "os", "typed"] | None = None


class Word(BaseModel):
    """One decision a person made, as it waits in the inbox (`fields`: what it journals)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=WORD_ID)
    domain: str
    kind: WordKind
    fields: dict[str, Any]
    at: datetime
    arrival: int | None = Field(default=None, ge=1)
    seal: str | None = None

    @property
    def standing(self) -> bool:
        """Whether it is a mode or a grant (journaled as it is), not a decision on an item."""
        return self.kind in STANDING_KINDS

    def decision(self) -> DecisionSaid:
        """What an approve or a reject says (ValueError for a standing word)."""
        if self.standing:
            raise ValueError(f"word {self.id} is a {self.kind}, not a decision on an item")
        return DecisionSaid.model_validate(self.fields)

    def journaled(self) -> dict[str, Any]:
        """The data a journaled record of this word carries besides its own: id and arrival."""
        tag: dict[str, Any] = {"word": self.id}
        return tag if self.arrival is None else {**tag, "arrival": self.arrival}


def standing_word(domain: str, entry: Entry, at: datetime, word_id: str) -> Word:
    """The word of one standing decision (`policy_set`, `grant_issued`, `grant_revoked`)."""
    kind, data = encode(entry)
    return Word.model_validate(
        {"id": word_id, "domain": domain, "kind": kind, "fields": data, "at": at}
    )


def decision_word(
    domain: str, approval_id: str, decision: str, by: str, text: str | None, at: datetime,
    word_id: str, by_source: str | None = None,
) -> Word:  # fmt: skip
    """The word of an approve or a reject of the item `approval_id`."""
    said = {"approval_id": approval_id, "by": by, "text": text}
    if by_source is not None:  # a word without a source reads as it did before sources
        said["by_source"] = by_source
    fields = DecisionSaid.model_validate(said).model_dump(mode="json", exclude_unset=True)
    kind = "approve" if decision == "approve" else "reject"
    return Word(id=word_id, domain=domain, kind=kind, fields=fields, at=at)


def _message(word: Word) -> str:
    return canonical_json(word.model_dump(mode="json", exclude={"seal"}))


def sealed(key: SealKey | None, word: Word) -> Word:
    """The word with its seal of the current key set (unchanged without a key)."""
    if key is None:
        return word
    return word.model_copy(update={"seal": key.mac(_PREFIX, _message(word))})


def sealer(key: SealKey, word: Word) -> Sealer | None:
    """Which key sealed the word: the current one, the previous one (rotating), or None."""
    return key.sealer(_PREFIX, _message(word), word.seal)


def put_back_message(word: Word, mark: int) -> str:
    """What a person reads of a kept word that came back from before the journal's mark."""
    return (
        f"the kept word inbox/{word.domain}/{word.arrival} ({word.kind}, {word.id}) is at or "
        f"below arrival {mark}, the last the journal absorbed, and the journal does not contain "
        "it: it was put back or renumbered, so it is not carried out. Remove the file; a person "
        "who still means it decides again"
    )
