"""A person's decision recorded while a run has the domain's lock, to be carried out when it ends.

Deciding never waits for a run: when the domain is busy, the decision is kept as a word in the
domain's inbox (core/journal/words.py, journal/person/inbox.py), and the next step that has the
domain's lock carries it out through the same path as a decision made at once.
`RecordedDecision` is how a person reads it, and the form an earlier release kept it in
(`memory/decisions/`, carried once).
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from custodian_runtime.core.journal.words import Word


class RecordedDecision(BaseModel):
    """approve or reject, by whom, why (a reject's reason, an approval's note), and when."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    approval_id: str = Field(pattern=r"^[A-Za-z0-9._-]{1,80}$")
    domain: str
    decision: Literal["approve", "reject"]
    by: str = Field(min_length=1, max_length=200)
    text: str | None = Field(default=None, max_length=4000)
    at: datetime
    seal: str | None = None


def as_recorded(word: Word) -> RecordedDecision:
    """A kept approve or reject as a person reads it (the review page, the messages)."""
    said = word.decision()
    decision = "approve" if word.kind == "approve" else "reject"
    return RecordedDecision(
        approval_id=said.approval_id, domain=word.domain, decision=decision, by=said.by,
        text=said.text, at=word.at,
    )  # fmt: skip


def waiting_message(decision: RecordedDecision, holder: str) -> str:
    """What the person reads when their decision is kept for later."""
    what = "rejection" if decision.decision == "reject" else "approval"
    then = (
        "journaled"
        if decision.decision == "reject"
        else "ruled on against the hub as it is then and, if its state is unchanged, carried out"
    )
    return (
        f"{decision.approval_id}: {what} by {decision.by} kept. The domain {decision.domain} "
        f"is busy (locked by {holder}); the {what} is {then} as soon as that ends, by the next "
        "custodian run or approvals command for the domain."
    )
