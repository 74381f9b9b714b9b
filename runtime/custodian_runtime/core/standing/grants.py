"""Grants: a person's approval of a bounded class of proposals, given in advance.

A grant names one approvable operation of one domain on one hub, narrows it by equality on the
item's params (`where`), and is bounded in uses and time. `covering(...)` is the pure question
the run asks before queueing an item: which live grant covers it, or why none does. The bounds
hold in the ruling too: a grant recorded with a longer life, or issued ahead of the ruling's
clock, is void (`void_reason`), whatever wrote it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

import custodian_runtime.core.operations as operations
from custodian_runtime.core._timestamps import SKEW
from custodian_runtime.core.authority.scope import scope_miss

MAX_EXPIRY = timedelta(days=30)
# How far a host's clock may stand from the hub's when it issues a grant, and how far ahead of
# the ruling's clock a grant's issue may lie: the one allowance for clocks that disagree (5
# minutes, as for a hub's times from the future). Hosts kept by NTP agree within seconds, and
# it is far below a grant's shortest life (an hour), so no grant lives longer by it.
MAX_SKEW = SKEW
VOID_LONG = "void: expires more than 30 days after issue"
VOID_AHEAD = "void: issued in the future"
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
    expires_at: AwareDatetime
    by: str = Field(min_length=1, max_length=200)
    reason: str = Field(min_length=1, max_length=2000)
    hub_id: str
    issued_at: AwareDatetime
    revoked: bool = False
    # `newer`: it covers a status write only when the write cites a person's event, on the task,
    # newer than the task's last change and speaking for the move (core/authority/evidence.py
    # `newer_word`), as the sanctioned writes do. None (every grant issued before it): no such
    # requirement.
    evidence: Literal["newer"] | None = None
    # Facts of the target it covers, beyond the params (core/authority/scope.py): its
    # workstream, that workstream's owner, the task's status, at least so many idle days.
    # Empty (every grant issued before it): none.
    on: dict[str, str] = Field(default_factory=dict)


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


def evidence_problem(operation: str, evidence: str | None) -> str | None:
    """Why `--evidence` cannot bind grants of `operation`: only a status write cites events."""
    spec = operations.find(operation)
    if evidence is None or spec is None or spec.status_write:
        return None
    return (
        f"--evidence {evidence}: {operation} cites no events; only a status write "
        "(set_task_status) can be granted on evidence"
    )


def skew_problem(host_now: datetime, hub_now: datetime) -> str | None:
    """Why a grant may not be issued from a host whose clock reads `host_now` while the hub's
    reads `hub_now` (None: they agree within MAX_SKEW)."""
    apart = abs(host_now - hub_now)
    if apart <= MAX_SKEW:
        return None
    return (
        f"this host's clock reads {host_now:%Y-%m-%d %H:%M:%S}Z and the hub's "
        f"{hub_now:%Y-%m-%d %H:%M:%S}Z: they differ by {span(apart)}, more than "
        f"{span(MAX_SKEW)}, so the grant's issue and expiry would not be what they say. Set "
        "this host's clock right (e.g. with NTP), or the hub's, and issue it again"
    )


def span(delta: timedelta) -> str:
    """A length of time as a person says it: `20 days`, `3 hours`, `5 minutes`."""
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        count = int(delta.total_seconds() // size)
        if count >= 1:
            return f"{count} {unit}{'s' if count > 1 else ''}"
    return f"{int(delta.total_seconds())} seconds"


def void_reason(grant: Grant, now: datetime) -> str | None:
    """Why a recorded grant covers nothing, whoever recorded it (None: its bounds hold).

    The 30 days are counted from its issue, and an issue ahead of the ruling's clock by more
    than MAX_SKEW is no issue yet: the bounds `grants issue` checks, checked where they bind.
    """
    if grant.expires_at - grant.issued_at > MAX_EXPIRY:
        return VOID_LONG
    if grant.issued_at - now > MAX_SKEW:
        return VOID_AHEAD
    return None


@dataclass(frozen=True)
class Cover:
    """The grant that covers a proposal, or why none does (one reason per grant looked at)."""

    grant: Grant | None
    why_not: tuple[str, ...] = ()
    # The void grants that would have covered it otherwise: `<id> did not cover it: void: ...`.
    void: tuple[str, ...] = ()


def state_of(grant: Grant, uses: int, now: datetime) -> str:
    """`live`, `revoked`, `void: <why>`, `expired` or `used up`."""
    if grant.revoked:
        return "revoked"
    void = void_reason(grant, now)
    if void is not None:
        return void
    if now >= grant.expires_at:
        return "expired"
    if uses >= grant.max_uses:
        return "used up"
    return "live"


def where_text(value: object) -> str:
    """A param's value as a grant's `--where` compares it (by its text)."""
    return str(value)


EVIDENCE_REQUIRED = (
    "covers only a move that cites a person's event on the task, newer than the task's last "
    "change and speaking for it"
)


def held_params(operation: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """The params as the hub will hold them: its defaults (the operation's spec) for what a
    create leaves out."""
    spec = operations.find(operation)
    defaults = spec.hub_defaults if spec is not None else {}
    return {**defaults, **{k: v for k, v in params.items() if v is not None or k not in defaults}}


def miss(
    grant: Grant, operation: str, params: Mapping[str, Any], hub_id: str | None,
    newer: bool = False, facts: Mapping[str, str] | None = None,
) -> str | None:  # fmt: skip
    """Why `grant` does not cover the proposal, apart from its state (None: it matches);
    `newer`: the proposal cites a person's newer word (core/authority/evidence.py); `facts`:
    its target as observed, which a grant's `on` may name (core/authority/scope.py)."""
    if grant.operation != operation:
        return f"{grant.id} is for {grant.operation}"
    if hub_id is None or grant.hub_id != hub_id:
        return f"{grant.id} is bound to hub {grant.hub_id}, not {hub_id}"
    held = held_params(operation, params)
    for key, want in sorted(grant.where.items()):
        if where_text(held.get(key)) != want:
            return f"{grant.id} covers only {key}={want}, the item has {held.get(key)!r}"
    if grant.evidence == "newer" and not newer:
        return f"{grant.id} {EVIDENCE_REQUIRED}, and the item cites none"
    off = scope_miss(grant.on, facts) if grant.on else None
    return None if off is None else f"{grant.id} {off}"


def covering(
    operation: str,
    params: Mapping[str, Any],
    grants: Sequence[Grant],
    uses: Mapping[str, int],
    now: datetime,
    hub_id: str | None,
    newer: bool = False,
    suspended: Mapping[str, str] | None = None,
    facts: Mapping[str, str] | None = None,
) -> Cover:
    """The first live grant (oldest first) that covers (operation, params), or why none does;
    `newer`: the proposal cites a person's newer word, which a grant may require; `suspended`:
    the grants a person's reversal suspended, with why (core/standing/narrowed.py); `facts`:
    the target as observed, which a grant's `on` may name (core/authority/scope.py)."""
    reasons: list[str] = []
    void: list[str] = []
    for grant in sorted(grants, key=lambda g: (g.issued_at, g.id)):
        if grant.operation != operation or operation in never_grantable():
            continue
        problem = miss(grant, operation, params, hub_id, newer, facts)
        state = state_of(grant, uses.get(grant.id, 0), now)
        if problem is None and state.startswith("void"):
            void.append(f"{grant.id} did not cover it: {state}")
        if problem is None and state != "live":
            problem = f"{grant.id} is {state}"
        if problem is None and grant.id in (suspended or {}):
            problem = f"{grant.id} is suspended: {(suspended or {})[grant.id]}"
        if problem is None:
            return Cover(grant, tuple(reasons), tuple(void))
        reasons.append(problem)
    return Cover(None, tuple(reasons), tuple(void))
