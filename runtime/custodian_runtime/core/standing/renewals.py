"""A live grant running low, or one used up lately, suggested for renewal with its record.

Under 20 % of its uses left, or under 2 days, a grant runs low; a renewal of a grant no person
reversed is sized to its record (twice its life, uses at the pace it used them). A grant over
some workstreams (a first grant reaches only those its approvals were in) is renewed over each
workstream where a person has since approved proposals of its class (SET_LEAST of them) and
rejected none.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from datetime import timedelta

from custodian_runtime.core.authority.scope import ONE_OF, values_of
from custodian_runtime.core.standing.classes import DecidedTally
from custodian_runtime.core.standing.commands import Asking, Suggestion, grant_command
from custodian_runtime.core.standing.grants import Grant, span, state_of
from custodian_runtime.core.standing.live import Live
from custodian_runtime.core.standing.scopes import SET_LEAST, Scope, fits

RENEW_SHARE = 0.2  # a live grant with fewer uses left than this share of its max runs low
RENEW_TIME = timedelta(days=2)  # ... or with less time than this left
# A renewal sized to its record: a grant no person reversed is renewed for twice its life, at
# most RENEW_LIFE, with uses at the pace it used them, at most RENEW_USES (never fewer than it had).
RENEW_LIFE = timedelta(days=30)
RENEW_USES = 50
GRANT_LIFE = timedelta(days=7)  # how long ago a grant used up is still renewed as it earned


def renewals_of(
    op: str, live: Live, asking: Asking, tally: DecidedTally | None = None
) -> list[Suggestion]:
    """A live grant running low, or one used up in the last GRANT_LIFE with none of its writes
    reversed, unless another live grant of the same class is not running low; over the
    workstreams `tally` shows a person approved its class in since (`widened`)."""
    grants = live.of(op)
    low = [g for g in grants if _runs_low(g, live)] + _used_up(op, live)
    found = []
    for grant in low:
        if any(g.where == grant.where and g.on == grant.on and not _runs_low(g, live)
               for g in grants):  # fmt: skip
            continue
        uses = live.uses.get(grant.id, 0)
        left = grant.expires_at - (live.now or grant.issued_at)
        undone = live.reversed.get(grant.id)
        most, life = _renewed(grant, uses, undone)
        why = (
            f"{grant.id} runs low: {uses} of {grant.max_uses} used, "
            f"{grant.max_uses - uses} left, expires in {span(max(left, timedelta(0)))}"
            + ("" if undone is None else f", {undone} reversed by a person")
            + _sized(grant, most, life)
        )
        bounds = (most, _length(life))
        on = grant.on if undone else widened(grant, tally)
        added = sorted(
            values_of(on.get("workstream", "")) - values_of(grant.on.get("workstream", ""))
        )
        if added:
            why += f"; now also on workstream {', '.join(added)}, approved there and never rejected"
        found.append(
            grant_command(asking, op, grant.where, why, "renew", bounds, grant.evidence, on)
        )
    return found


def widened(grant: Grant, tally: DecidedTally | None) -> Mapping[str, str]:
    """A renewal's facts: a grant over some workstreams also reaches each workstream where a
    person approved SET_LEAST proposals it would cover but for the workstream, and rejected
    none such (a value joins a scope's set so, core/standing/scopes.py).
    As it was when it names no workstream, when a rejection falls in one it names, or when a
    rejection's workstream is unknown."""
    named = grant.on.get("workstream")
    if tally is None or named is None:
        return grant.on
    rest = Scope(grant.where, {k: v for k, v in grant.on.items() if k != "workstream"},
                 grant.evidence)  # fmt: skip
    approved: Counter[str] = Counter()
    rejected: set[str | None] = set()  # None: a rejection whose workstream is not known
    for ok, params, facts in tally.said():
        if not fits(rest, params, facts):
            continue
        where = (facts or {}).get("workstream")
        if not ok:
            rejected.add(where)
        elif where is not None and ONE_OF not in where:  # such a value joins no set
            approved[where] += 1
    had = values_of(named)
    if None in rejected or had & rejected:
        return grant.on
    wider = had | {w for w, n in approved.items() if n >= SET_LEAST and w not in rejected}
    return {**grant.on, "workstream": ONE_OF.join(sorted(wider))}


def _used_up(op: str, live: Live) -> list[Grant]:
    """Grants of `op` used up within the last GRANT_LIFE (not revoked, suspended or void),
    none of whose writes a person reversed, the newest of each class: renewed as they earned."""
    if live.now is None:
        return []
    now = live.now
    found: dict[tuple[str, str, str], Grant] = {}
    for g in sorted(live.grants, key=lambda g: g.issued_at):
        used = live.uses.get(g.id, 0) >= g.max_uses
        recent = now - GRANT_LIFE <= g.expires_at and g.issued_at <= now
        state = state_of(g, live.uses.get(g.id, 0), now)
        if (g.operation == op and used and recent and state == "used up"
                and g.id not in live.suspended and not live.reversed.get(g.id)):  # fmt: skip
            found[(str(sorted(g.where.items())), str(sorted(g.on.items())), str(g.evidence))] = g
    return list(found.values())


def _renewed(grant: Grant, uses: int, undone: int | None) -> tuple[int, timedelta]:
    """A renewal's uses and life: as the grant had them after a person reversed one of its
    writes; else twice its life (at most RENEW_LIFE) with uses at the pace it used them."""
    life = grant.expires_at - grant.issued_at
    if undone or life <= timedelta(0):
        return grant.max_uses, life
    longer = max(life, min(life * 2, RENEW_LIFE))
    paced = math.ceil(uses * (longer / life))
    return max(grant.max_uses, min(paced, RENEW_USES)), longer


def _sized(grant: Grant, most: int, life: timedelta) -> str:
    """What the renewal changes of the grant's bounds, in words ("" when nothing)."""
    if (most, life) == (grant.max_uses, grant.expires_at - grant.issued_at):
        return ""
    return f"; none reversed, so renewed for {span(life)} with {most} uses at the pace it used them"


def _runs_low(grant: Grant, live: Live) -> bool:
    left = grant.max_uses - live.uses.get(grant.id, 0)
    time_left = grant.expires_at - (live.now or grant.issued_at)
    return left < RENEW_SHARE * grant.max_uses or time_left < RENEW_TIME


def _length(life: timedelta) -> str:
    """A grant's life as `--expires` takes it (whole hours at least, at most 30 days)."""
    hours = max(1, min(30 * 24, round(life.total_seconds() / 3600)))
    return f"{hours // 24}d" if hours % 24 == 0 else f"{hours}h"
