"""What `policy report` suggests a person run, per class a grant can name, and why (or why not).

A class is an operation as a whole, or the operation with one param equal to one value (what
`--where KEY=VALUE` names), its params read as the hub will hold them (grants.held_params). A
class earns a suggestion when it holds no proposal a person rejected in the window and the
lower bound of the Wilson score interval (95 %) of its agreement is at least MIN_BOUND: with
no rejection that takes NEEDED approvals. A class a live grant already covers earns none; a
live grant running low (under 20 % of its uses left, or under 2 days) is suggested for
renewal with its record. A suggested grant is narrowed further to every param value all the
class's approved proposals shared. A mode an operation already has is never suggested.

A first grant (one earned on fewer decisions than a full one) reaches only the workstreams its
approvals were in (`--on workstream=`): so few decisions say nothing of a workstream no person
decided in.

A status write's class that holds rejections earns a grant on evidence (`--evidence newer`)
when citing an event separates them: every rejected move cited none, and the approved moves
that cited one earn the bound on their own. Such a grant covers no move that cites nothing.

This module puts the parts together: the bound a class must reach (earned.py), the tally of an
operation's window and its classes (classes.py), the live grants (live.py), renewals
(renewals.py), grants over facts (scoped.py) and grants on evidence (evidence_grants.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import custodian_runtime.core.operations as operations
from custodian_runtime.core.authority.scope import ONE_OF
from custodian_runtime.core.standing.classes import (
    DecidedTally,
    WhereClass,
    shared_params,
    where_classes,
    whole,
)
from custodian_runtime.core.standing.commands import (
    GRANT_EXPIRES,
    Asking,
    Suggestion,
    grant_command,
    mode_command,
    where_label,
)
from custodian_runtime.core.standing.earned import NEEDED, earned, first_uses
from custodian_runtime.core.standing.evidence_grants import on_evidence, separated
from custodian_runtime.core.standing.grants import Grant, never_grantable
from custodian_runtime.core.standing.live import Live
from custodian_runtime.core.standing.renewals import renewals_of
from custodian_runtime.core.standing.scoped import scoped_grants
from custodian_runtime.core.standing.scopes import Scope, fits


@dataclass(frozen=True)
class Suggested:
    """One operation's suggestions, or why there is none."""

    operation: str
    suggestions: tuple[Suggestion, ...] = ()
    none_because: str | None = None


def suggest(tally: DecidedTally, mode: str | None, live: Live, asking: Asking) -> Suggested:
    """What to suggest for one operation in `mode`, or why nothing."""
    op = tally.operation
    if mode == "shadow":
        return _mode_back(tally, asking)
    if mode == "off":
        return Suggested(op, none_because="its mode is off: a person stopped it; nothing runs")
    if op in operations.names("sanctioned"):
        return _sanctioned(tally, mode, asking)
    never = never_grantable()
    if op in never:
        return Suggested(op, none_because=f"never grantable: {never[op]}")
    renewals = tuple(renewals_of(op, live, asking, tally))
    grants, because = _grants(tally, live, asking)
    renewed = [(r.where, r.on) for r in renewals]
    found = renewals + tuple(g for g in grants if (g.where, g.on) not in renewed)
    if found:
        return Suggested(op, found)
    return Suggested(op, none_because=because)


def _sanctioned(tally: DecidedTally, mode: str | None, asking: Asking) -> Suggested:
    op = tally.operation
    if mode in (None, "auto"):
        return Suggested(op, none_because="already auto: it runs on its own")
    ok, why = earned(*whole(tally), "approved")
    if not ok:
        return Suggested(op, none_because=why)
    return Suggested(op, (mode_command(asking, op, "auto", why),))


def _mode_back(tally: DecidedTally, asking: Asking) -> Suggested:
    op = tally.operation
    ok, why = earned(tally.shadow_matched, tally.shadow, "shadow items done the same by a person")
    if not ok:
        return Suggested(op, none_because=why)
    back = "auto" if op in operations.names("sanctioned") else "ask"
    return Suggested(op, (mode_command(asking, op, back, why),))


def _covered(tally: DecidedTally, grants: Sequence[Grant]) -> frozenset[int]:
    """The approved proposals a live grant already covers (by its params, and by the facts
    it names where it names some: core/standing/scopes.py)."""
    return frozenset(
        i
        for i, (ok, params, facts) in enumerate(tally.said())
        if ok and any(fits(Scope(g.where, g.on), params, facts) for g in grants)
    )


def _judge(
    c: WhereClass, grants: Sequence[Grant], covered: frozenset[int], first: bool
) -> tuple[bool, str]:
    """Whether a clean class earns a grant past what is covered already (`first`: a first
    grant, sooner and smaller, may do), and the words why."""
    named = ", ".join(f"{g.id} ({where_label(g.where)})" for g in grants)
    if any(not g.on and all(c.where.get(k) == v for k, v in g.where.items()) for g in grants):
        return False, f"a live grant covers it: {named}"
    gone = len(c.approved & covered)
    if gone and c.approved <= covered:
        return False, f"a live grant covers it: {named}"
    ok, why = earned(c.agreed - gone, c.decided - gone, "approved", first=first)
    return ok, why if ok else f"{why} ({c.label})"


def _grants(tally: DecidedTally, live: Live, asking: Asking) -> tuple[tuple[Suggestion, ...], str]:
    """Grants for the strongest clean classes, greedily, each past what is covered already:
    full grants first, then one scope over the facts that parted approvals from rejections,
    then first grants for what is left (one scope rather than a small grant per value)."""
    grants = live.of(tally.operation)
    covered = _covered(tally, grants)
    classes = sorted(where_classes(tally), key=lambda c: (-c.decided, len(c.where), c.label))
    clean = [c for c in classes if c.rejected == 0]
    found: list[Suggestion] = []
    for c in classes:
        if c.rejected:
            split = separated(tally, c, live, asking)
            if split is not None and all(f.command != split.command for f in found):
                found.append(split)
    covered, _ = _clean(tally, clean, live, asking, covered, found, first=False)
    scoped, covered = scoped_grants(tally, live, asking, covered)
    found += [f for f in scoped if all(f.command != g.command for g in found)]
    _, reasons = _clean(tally, clean, live, asking, covered, found, first=True)
    return tuple(found), _why_none(tally, classes, reasons)


def _clean(
    tally: DecidedTally,
    clean: Sequence[WhereClass],
    live: Live,
    asking: Asking,
    covered: frozenset[int],
    found: list[Suggestion],
    first: bool,
) -> tuple[frozenset[int], list[str]]:
    """Append to `found` a grant for each clean class that earns one past `covered` (`first`:
    first grants too); what they cover, and why each other class earns none."""
    op, grants = tally.operation, live.of(tally.operation)
    reasons: list[str] = []
    for c in clean:
        ok, why = _judge(c, grants, covered, first)
        if not ok:
            reasons.append(why)
            continue
        where = {**shared_params([tally.decided[i][1] for i in sorted(c.approved)]), **c.where}
        undone = live.suspension(op, where)
        if undone is not None:
            reasons.append(undone)
            cited = on_evidence(tally, c, where, live, asking)
            if cited is not None and all(f.command != cited.command for f in found):
                found.append(cited)
            continue
        gone = len(c.approved & covered)
        bounds = (first_uses(c.agreed - gone, c.decided - gone), GRANT_EXPIRES)
        on = _seen_workstreams(tally, c) if first else None
        said = f"{why}, none rejected in this class" + (
            "; only in the workstreams its approvals were in" if on else ""
        )
        made = grant_command(asking, op, where, said, bounds=bounds, on=on)
        if all(f.command != made.command for f in found):
            found.append(made)
        covered |= c.approved
    return covered, reasons


def _seen_workstreams(tally: DecidedTally, c: WhereClass) -> dict[str, str] | None:
    """A first grant's scope: the workstreams its class's approvals were in. A grant earned on
    so few decisions reaches no workstream no person decided in; None when a fact is unknown."""
    said = tally.said()
    seen = {(said[i][2] or {}).get("workstream") for i in c.approved}
    if not seen or None in seen or any(ONE_OF in str(w) for w in seen):
        return None  # a value holding the separator joins no set (as in scopes._sets)
    return {"workstream": ONE_OF.join(sorted(str(w) for w in seen))}


def _why_none(tally: DecidedTally, classes: Sequence[WhereClass], reasons: Sequence[str]) -> str:
    """Why no grant is suggested: the strongest clean class's reason, or the rejections that
    a class with enough approvals would cover."""
    if tally.approved + tally.rejected + tally.shadow == 0:
        return "nothing decided in the window"
    clean = [c for c in classes if c.rejected == 0]
    dirty = [c for c in classes if c.rejected and len(c.approved) >= NEEDED]
    if dirty and (not clean or clean[0].decided < NEEDED):
        worst = dirty[0]
        narrower = f"; {reasons[0]}" if reasons else ""
        return (
            f"would cover a rejected proposal: {worst.label} holds {len(worst.approved)} "
            f"approved and {worst.rejected} rejected{narrower}"
        )
    return reasons[0] if reasons else f"none approved: {tally.rejected} rejected"
