"""A person's decision recorded while a run holds the domain, to be carried out when it ends.

Deciding never waits for a run: when the domain is busy, the decision is kept as one sealed file
per item (`memory/decisions/`, see memory/decision_inbox.py), and the next step that holds the
domain carries it out through the same path as a decision made at once.
"""

from __future__ import annotations

import hmac
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from custodian_runtime.core.digest import canonical_json
from custodian_runtime.core.journal.seals import SealKey

_PREFIX = b"custodian recorded decision v1\n"


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


def decision_seal(key: SealKey, decision: RecordedDecision) -> str:
    """HMAC of the decision's canonical JSON without its seal."""
    return key.mac(_PREFIX, canonical_json(decision.model_dump(mode="json", exclude={"seal"})))


def sealed(key: SealKey | None, decision: RecordedDecision) -> RecordedDecision:
    """The decision with its seal set (unchanged without a key)."""
    if key is None:
        return decision
    return decision.model_copy(update={"seal": decision_seal(key, decision)})


def seal_problem(key: SealKey | None, decision: RecordedDecision) -> str | None:
    """Why a recorded decision may not be carried out (None: its seal holds, or no key)."""
    if key is None:
        return None
    if decision.seal is None:
        return "carries no seal: written without the seal key, or by someone who lacks it"
    expected = decision_seal(key, decision).encode("utf-8")
    if not hmac.compare_digest(decision.seal.encode("utf-8"), expected):
        return "its seal does not match: the file was edited, or sealed with another key"
    return None


def waiting_message(decision: RecordedDecision, holder: str) -> str:
    """What the person reads when their decision is recorded for later."""
    what = "rejection" if decision.decision == "reject" else "approval"
    then = (
        "journaled"
        if decision.decision == "reject"
        else "ruled on against the hub as it is then and, if it still holds, carried out"
    )
    return (
        f"{decision.approval_id}: {what} by {decision.by} recorded. The domain {decision.domain} "
        f"is busy (held by {holder}); the {what} is {then} as soon as that ends, by the next "
        "custodian run or approvals command for the domain."
    )
