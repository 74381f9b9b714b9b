"""A grant's ledger across a killed run: whether a write left open under a grant is re-sent.

A write authorized under a grant already counted its use (its `grant_used` record). If the hub
does not show it, it is re-sent under the same grant, with no new use, only when the grant is
still live for that very use, still covers it on this hub, and every other rule still allows
it: the one ruling (core/ruling/path.py) with that grant alone, as a run's own write under a
grant is ruled again just before it is sent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from types import MappingProxyType

from custodian_runtime.core.authority.authorize import Ruling
from custodian_runtime.core.journal.kinds import PolicySet
from custodian_runtime.core.plan.extract import ProposedItem
from custodian_runtime.core.standing.grants import miss, state_of
from custodian_runtime.core.standing.record import Standing
from custodian_runtime.core.standing.rule import Ground, cites_newer, observed_facts


@dataclass(frozen=True)
class GrantDecision:
    """Whether an open write of `grant_id` may be re-sent under it now, and why."""

    grant_id: str
    allowed: bool
    reason: str


def grant_standing(
    grant_id: str, item: ProposedItem, ground: Ground, *, counted: bool = True
) -> Standing | GrantDecision:
    """The standing a use of `grant_id` is ruled with (its modes, that grant alone, its uses
    before this one), or why the grant cannot carry the write at all.

    `counted`: the write's own `grant_used` is already journaled (a killed run's write), so it
    is this very use and not one before it.
    """
    grant = ground.standing.grant(grant_id)
    if grant is None:
        why = f"grant {grant_id} is not recorded in the domain's journal, so it is refused"
        return GrantDecision(grant_id, False, why)
    before = ground.standing.uses.get(grant_id, 0)
    before = max(0, before - 1) if counted else before
    state = state_of(grant, before, ground.now)
    if state != "live":
        return GrantDecision(grant_id, False, f"grant {grant_id} is {state}")
    suspended = ground.standing.narrowed.suspended.get(grant_id)
    if suspended is not None:
        return GrantDecision(grant_id, False, f"grant {grant_id} is suspended: {suspended}")
    problem = miss(grant, item.operation, item.params, ground.hub_id, cites_newer(item, ground),
                   observed_facts(item, ground))  # fmt: skip
    if problem is not None:
        return GrantDecision(grant_id, False, problem)
    return Standing(ground.standing.modes, (grant,), MappingProxyType({grant_id: before}))


def grant_verdict(grant_id: str, ruled: Ruling) -> GrantDecision:
    """Whether the ruling on a write under `grant_id`, with that grant alone, lets it run."""
    if ruled.outcome != "execute" or ruled.grant != grant_id:
        return GrantDecision(grant_id, False, ruled.reason)
    return GrantDecision(grant_id, True, ruled.reason)


def rederived(
    kept: Standing,
    journaled: Standing,
    revoked_later: frozenset[str] = frozenset(),
    set_later: Sequence[PolicySet] = (),
) -> tuple[Standing, tuple[str, ...]]:
    """The standing the journal records before a plan, and where the plan's kept one differs.

    A grant revoked in `kept` but not yet in the journal was a revoke kept while the domain was
    busy: it counts when the journal records it later (`revoked_later`). So does a mode kept
    while busy that the journal records later (`set_later`, the same mode, by and reason).
    """
    waited = {g.id for g in kept.grants if g.revoked} & revoked_later
    derived = journaled.revoking(waited)
    modes = derived.modes
    for entry in set_later:
        mine = kept.modes.settings.get(str(entry.operation))
        if mine is not None and (mine.mode, mine.by, mine.reason) == (
            entry.mode, entry.by, entry.reason,
        ):  # fmt: skip
            modes = modes.with_setting(mine)
    derived = Standing(modes, derived.grants, derived.uses, narrowed=derived.narrowed)
    return derived, (*_grant_differences(kept, derived), *_use_and_mode_differences(kept, derived))


def _grant_differences(kept: Standing, derived: Standing) -> list[str]:
    found: list[str] = []
    for grant in kept.grants:
        recorded = derived.grant(grant.id)
        if recorded is None:
            found.append(
                f"the plan record keeps grant {grant.id}, which the journal does not record"
            )
        elif recorded != grant:
            mine, theirs = grant.model_dump(mode="json"), recorded.model_dump(mode="json")
            fields = ", ".join(f"{k} {mine[k]!r} (journal: {theirs[k]!r})" for k in sorted(mine)
                               if mine[k] != theirs[k])  # fmt: skip
            found.append(f"the plan record keeps grant {grant.id} with {fields}")
    kept_ids = {g.id for g in kept.grants}
    found += [
        f"the journal records grant {g.id}, which the plan record does not keep"
        for g in derived.grants
        if g.id not in kept_ids
    ]
    return found


def _use_and_mode_differences(kept: Standing, derived: Standing) -> list[str]:
    found = [
        f"the plan record keeps {kept.uses.get(gid, 0)} use(s) of grant {gid}, the journal "
        f"records {derived.uses.get(gid, 0)}"
        for gid in sorted({*kept.uses, *derived.uses})
        if kept.uses.get(gid, 0) != derived.uses.get(gid, 0)
    ]
    mine, theirs = kept.as_record()["modes"], derived.as_record()["modes"]
    found += [
        f"the plan record keeps the mode of {op} as {mine.get(op)}, the journal {theirs.get(op)}"
        for op in sorted({*mine, *theirs})
        if mine.get(op) != theirs.get(op)
    ]
    return found
