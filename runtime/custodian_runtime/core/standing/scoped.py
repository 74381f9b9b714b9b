"""Grants over the facts that parted a person's approvals from their rejections (scopes.py), and
past the writes a person reversed under a suspended grant."""

from __future__ import annotations

from collections.abc import Sequence

import custodian_runtime.core.operations as operations
from custodian_runtime.core.authority.scope import one_of
from custodian_runtime.core.standing.classes import DecidedTally
from custodian_runtime.core.standing.commands import Asking, Suggestion, grant_command
from custodian_runtime.core.standing.earned import NEEDED, earned
from custodian_runtime.core.standing.live import Live
from custodian_runtime.core.standing.scopes import Judged, Scope, asked_anyway, clean_scopes, fits

MAX_SCOPED = 3  # grants over facts suggested per operation in one report


def scoped_grants(
    tally: DecidedTally, live: Live, asking: Asking, covered: frozenset[int]
) -> tuple[list[Suggestion], frozenset[int]]:
    """Grants over the facts that parted a person's approvals from their rejections
    (core/standing/scopes.py), greedily, each past what is covered already."""
    op, said = tally.operation, tally.said()
    undone = _reversed(live, op)
    said = [*said, *undone]
    if tally.rejected + len(undone) == 0 or not any(f is not None for _, _, f in said):
        return [], covered  # nothing to part, or no facts kept
    spec = operations.find(op)
    status_write = spec is not None and spec.status_write
    grants = live.of(op)
    covered |= frozenset(
        i for i, (ok, p, f) in enumerate(said)
        if ok and any(fits(Scope(g.where, g.on, g.evidence), p, f) for g in grants)
    )  # fmt: skip
    found: list[Suggestion] = []
    for _ in range(MAX_SCOPED):
        best = next(
            (f for f in clean_scopes(said, status_write, NEEDED, covered)
             if live.suspension(op, f.scope.where, f.scope.evidence) is None
             or (undone and _leaves_out(f.scope, undone))),
            None,
        )  # fmt: skip
        if best is None:
            break
        ok, why = earned(len(best.approved), best.decided, "approved")
        if not ok:
            break
        asked = sum(1 for j in said if asked_anyway(j))
        outside = tally.rejected - asked
        left = [f"the {outside} rejected"] if outside else []
        left += [f"the {len(undone)} reversed by a person"] if undone else []
        why = f"{why} where {best.scope.label()}; " + (
            f"{' and '.join(left)} fall outside it, and " if left else ""
        )
        why += "the ruling checks each of these facts at every write"
        if asked:
            why += (
                f"; the {asked} other rejected {'was' if asked == 1 else 'were'} asked whatever "
                "would carry them (a person's "
                "later word than their evidence, or a repeat of another workstream's), as a write "
                "under this grant would be"
            )
        found.append(
            grant_command(
                asking, op, best.scope.where, why, evidence=best.scope.evidence, on=best.scope.on
            )
        )
        covered |= best.approved
    return found, covered


def _reversed(live: Live, op: str) -> list[Judged]:
    """Each write a person reversed under a suspended grant of `op`, as a rejected proposal on
    the facts recorded of it (its workstream and owner; none recorded: left out, and the grant
    stays suspended): a scope that leaves them out is a grant narrowed past the reversal."""
    return [(False, dict(grant.where), dict(facts)) for grant, facts in live.reversed_in(op)]


def _leaves_out(scope: Scope, undone: Sequence[Judged]) -> bool:
    """Whether `scope` leaves out each reversed write by its workstream or its owner (the facts
    kept of it; any other fact of it is unknown, and an unknown fact leaves nothing out)."""
    return all(
        any(k in scope.on and k in (f or {}) and not one_of(scope.on[k], (f or {})[k])
            for k in ("workstream", "owner"))
        for _, _, f in undone
    )  # fmt: skip
