"""Grants: a person's approval of a bounded class of proposals, given in advance.

A grant names one approvable operation of one domain on one hub, narrows it by equality on the
item's params (`where`), and is bounded in uses and time. `covering(...)` is the pure question
the run asks before queueing an item: which live grant covers it, or why none does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

import custodian_runtime.core.operations as operations

MAX_EXPIRY = timedelta(days=30)
GRANT_ID = r"^grant-[0-9a-f]{12}$"


def never_grantable() -> Mapping[str, str]:
    """The operations a person's judgement decides by nature, each with why: never granted."""
    return {s.name: why for s in operations.all_specs() if (why := s.never_granted)}


class Grant(BaseModel):
    """One grant as issued: what it covers, its bounds, who issued it and why."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=GRANT_ID)
    domain: str
    operation: str
    where: dict[str, str] = Field(default_factory=dict)
    max_uses: int = Field(ge=1, le=1000)
    expires_at: datetime
    by: str = Field(min_length=1, max_length=200)
    reason: str = Field(min_length=1, max_length=2000)
    hub_id: str
    issued_at: datetime
    revoked: bool = False


def grant_problem(operation: str, max_uses: int, expires_in: timedelta) -> str | None:
    """Why a person may not issue such a grant (None: they may)."""
    never = never_grantable()
    if operation in never:
        return f"{operation} is never grantable: {never[operation]}"
    approvable = operations.names("approvable")
    if operation not in approvable:
        known = ", ".join(sorted(approvable - set(never)))
        return (
            f"{operation} cannot be granted: only operations that need a person's approval are "
            f"({known}); the three sanctioned writes already run on their own"
        )
    if not 1 <= max_uses <= 1000:
        return f"--max {max_uses}: give a number of uses from 1 to 1000"
    if not timedelta(0) < expires_in <= MAX_EXPIRY:
        return "--expires: a grant lasts at most 30 days (e.g. 7d or 36h)"
    return None


def where_problem(operation: str, where: Mapping[str, str]) -> str | None:
    """Why `--where` cannot narrow `operation`: a key that is none of its params (None: ok)."""
    spec = operations.find(operation)
    if spec is None:
        return None
    params = sorted(spec.params.model_fields)
    unknown = sorted(set(where) - set(params))
    if not unknown:
        return None
    return (
        f"--where {unknown[0]}=...: {operation} has no param {unknown[0]!r}; narrow by one of "
        f"{', '.join(params)}"
    )


@dataclass(frozen=True)
class Cover:
    """The grant that covers a proposal, or why none does (one reason per grant looked at)."""

    grant: Grant | None
    why_not: tuple[str, ...] = ()


def state_of(grant: Grant, uses: int, now: datetime) -> str:
    """`live`, `revoked`, `expired` or `used up`."""
    if grant.revoked:
        return "revoked"
    if now >= grant.expires_at:
        return "expired"
    if uses >= grant.max_uses:
        return "used up"
    return "live"


def where_text(value: object) -> str:
    """A param's value as a grant's `--where` compares it (by its text)."""
    return str(value)


def miss(grant: Grant, operation: str, params: Mapping[str, Any], hub_id: str | None) -> str | None:
    """Why `grant` does not cover the proposal, apart from its state (None: it matches)."""
    if grant.operation != operation:
        return f"{grant.id} is for {grant.operation}"
    if hub_id is None or grant.hub_id != hub_id:
        return f"{grant.id} is bound to hub {grant.hub_id}, not {hub_id}"
    for key, want in sorted(grant.where.items()):
        if where_text(params.get(key)) != want:
            return f"{grant.id} covers only {key}={want}, the item has {params.get(key)!r}"
    return None


def covering(
    operation: str,
    params: Mapping[str, Any],
    grants: Sequence[Grant],
    uses: Mapping[str, int],
    now: datetime,
    hub_id: str | None,
) -> Cover:
    """The first live grant (oldest first) that covers (operation, params), or why none does."""
    reasons: list[str] = []
    for grant in sorted(grants, key=lambda g: (g.issued_at, g.id)):
        if grant.operation != operation or operation in never_grantable():
            continue
        problem = miss(grant, operation, params, hub_id)
        state = state_of(grant, uses.get(grant.id, 0), now)
        if problem is None and state != "live":
            problem = f"{grant.id} is {state}"
        if problem is None:
            return Cover(grant, tuple(reasons))
        reasons.append(problem)
    return Cover(None, tuple(reasons))
