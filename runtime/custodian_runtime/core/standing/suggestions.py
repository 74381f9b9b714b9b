"""What `policy report` suggests a person run, per class a grant can name, and why (or why not).

A class is an operation as a whole, or the operation with one param equal to one value (what
`--where KEY=VALUE` names), its params read as the hub will hold them (grants.held_params). A
class earns a suggestion when it holds no proposal a person rejected in the window and the
lower bound of the Wilson score interval (95 %) of its agreement is at least MIN_BOUND: with
no rejection that takes NEEDED approvals. A class a live grant already covers earns none; a
live grant running low (under 20 % of its uses left, or under 2 days) is suggested for
renewal with its record. A suggested grant is narrowed further to every param value all the
class's approved proposals shared. A mode an operation already has is never suggested.

A status write's class that holds rejections earns a grant on evidence (`--evidence newer`)
when citing an event separates them: every rejected move cited none, and the approved moves
that cited one earn the bound on their own. Such a grant covers no move that cites nothing.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import custodian_runtime.core.operations as operations
from custodian_runtime.core.authority.scope import one_of
from custodian_runtime.core.standing.commands import (
    GRANT_EXPIRES,
    GRANT_MAX,
    Asking,
    Suggestion,
    grant_command,
    mode_command,
    where_label,
)
from custodian_runtime.core.standing.grants import (
    Grant,
    never_grantable,
    span,
    state_of,
    where_text,
)
from custodian_runtime.core.standing.scopes import Judged, Scope, asked_anyway, clean_scopes, fits

Z = 1.96  # 95 %, two-sided
MIN_BOUND = 0.65  # the lower bound a class's agreement must reach
RENEW_SHARE = 0.2  # a live grant with fewer uses left than this share of its max runs low
RENEW_TIME = timedelta(days=2)  # ... or with less time than this left
# A renewal sized to its record: a grant no person reversed is renewed for twice its life, at
# most RENEW_LIFE, with uses at the pace it used them, at most RENEW_USES (never fewer than it had).
RENEW_LIFE = timedelta(days=30)
RENEW_USES = 50
MAX_SCOPED = 3  # grants over facts suggested per operation in one report
GRANT_LIFE = timedelta(days=7)  # how long ago a grant used up is still renewed as it earned


def lower_bound(agreed: int, decided: int) -> float:
    """The lower bound of the Wilson score interval at 95 % (0 before any decision)."""
    if decided == 0:
        return 0.0
    p, n = agreed / decided, decided
    centre = p + Z * Z / (2 * n)
    margin = Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n))
    return (centre - margin) / (1 + Z * Z / n)


# How many decided, none rejected, a class needs for its bound to reach MIN_BOUND.
NEEDED = next(n for n in range(1, 1000) if lower_bound(n, n) >= MIN_BOUND)
# A first grant, sooner and smaller: a class of an operation no person rejected in the window
# earns one once its bound says the person approves more often than not (FIRST_BOUND), with
# its uses sized so that, at that bound, no more of them would be rejected than of a full grant
# (GRANT_MAX uses) at MIN_BOUND: uses * (1 - bound) <= GRANT_MAX * (1 - MIN_BOUND).
FIRST_BOUND = 0.5
FIRST_NEEDED = next(n for n in range(1, 1000) if lower_bound(n, n) >= FIRST_BOUND)


def first_uses(agreed: int, decided: int) -> int:
    """A grant's uses at (agreed, decided): GRANT_MAX at MIN_BOUND or above; below it, the
    uses whose rejections at the lower bound are no more than a full grant's at MIN_BOUND."""
    risk = GRANT_MAX * (1 - MIN_BOUND)
    return min(GRANT_MAX, math.floor(risk / (1 - lower_bound(agreed, decided)) + 1e-9))


@dataclass(frozen=True)
class Suggested:
    """One operation's suggestions, or why there is none."""

    operation: str
    suggestions: tuple[Suggestion, ...] = ()
    none_because: str | None = None


@dataclass(frozen=True)
class DecidedTally:
    """What the suggestion reads of one operation's window (core/standing/agreement.py)."""

    operation: str
    approved: int
    rejected: int
    shadow: int
    shadow_matched: int
    # Each decided proposal: approved or not, and its params as the hub will hold them.
    decided: tuple[tuple[bool, Mapping[str, object]], ...] = ()
    # Each one's target as observed when it was queued (core/authority/scope.py; None: not
    # kept), in the same order.
    facts: tuple[Mapping[str, str] | None, ...] = ()

    def said(self) -> list[Judged]:
        """Each decided proposal with its facts (core/standing/scopes.py)."""
        facts = list(self.facts) + [None] * (len(self.decided) - len(self.facts))
        return [(ok, p, f) for (ok, p), f in zip(self.decided, facts, strict=True)]


@dataclass(frozen=True)
class Live:
    """The domain's grants and their uses, at the report's clock."""

    grants: Sequence[Grant] = ()
    uses: Mapping[str, int] = field(default_factory=dict)
    now: datetime | None = None
    # Writes made under each grant that a person then reversed, where that is known.
    reversed: Mapping[str, int] = field(default_factory=dict)
    # Grants a person's reversal suspended, with why (core/standing/narrowed.py).
    suspended: Mapping[str, str] = field(default_factory=dict)
    # The facts (workstream, owner) of the reversed write that suspended each grant, where
    # recorded (core/standing/narrowed.py).
    reversed_on: Mapping[str, Mapping[str, str]] = field(default_factory=dict)

    def reversed_in(self, operation: str) -> list[tuple[Grant, Mapping[str, str]]]:
        """The suspended grants of `operation` whose reversed write's facts are recorded."""
        return [
            (g, self.reversed_on[g.id])
            for g in self.grants
            if g.operation == operation and g.id in self.suspended and g.id in self.reversed_on
        ]

    def of(self, operation: str) -> list[Grant]:
        """The grants of `operation` that are live now (a suspended one is not)."""
        if self.now is None:
            return []
        return [
            g
            for g in self.grants
            if g.operation == operation
            and g.id not in self.suspended
            and state_of(g, self.uses.get(g.id, 0), self.now) == "live"
        ]

    def suspension(
        self, operation: str, where: Mapping[str, str], evidence: str | None = None
    ) -> str | None:
        """Why a grant of `operation` over `where` is not suggested again: a person reversed a
        write made under a suspended grant that covered as much (None: none did). A grant that
        asks for evidence covers less than one that did not: only such a one's reversal counts."""
        for g in self.grants:
            why = self.suspended.get(g.id)
            wider = g.where.items() <= where.items() and (evidence is None or g.evidence)
            if why is not None and g.operation == operation and wider:
                return (
                    f"{g.id} ({where_label(g.where)}) was suspended: {why}; a person issues it "
                    "again only once they judge the reversal a one-off (custodian grants list)"
                )
        return None


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
    renewals = tuple(_renewals(op, live, asking))
    grants, because = _grants(tally, live, asking)
    renewed = [(r.where, r.on) for r in renewals]
    found = renewals + tuple(g for g in grants if (g.where, g.on) not in renewed)
    if found:
        return Suggested(op, found)
    return Suggested(op, none_because=because)


def _whole(tally: DecidedTally) -> tuple[int, int]:
    """(agreed, decided) of the operation as a whole, shadow items counted."""
    decided = tally.approved + tally.rejected + tally.shadow
    return tally.approved + tally.shadow_matched, decided


def _earned(agreed: int, decided: int, what: str, first: bool = False) -> tuple[bool, str]:
    """Whether (agreed, decided) earns a suggestion, and the words why (or why not); `first`:
    a first grant of a class with no rejection may earn it sooner, smaller (`first_uses`)."""
    bound = lower_bound(agreed, decided)
    least, floor = (
        (FIRST_NEEDED, FIRST_BOUND) if first and agreed == decided else (NEEDED, MIN_BOUND)
    )
    if decided < least:
        return False, f"too few decided: {decided} of the {least} needed"
    said = f"{agreed} of {decided} {what}, lower bound {bound:.2f}"
    if bound < floor:
        return False, f"below the threshold: {said}, under {floor:.2f}"
    if bound < MIN_BOUND:
        uses = first_uses(agreed, decided)
        said += (
            f"; a first grant of {uses} uses, as few as keep the rejections expected at that "
            f"bound within a full grant's ({GRANT_MAX} uses at {MIN_BOUND:.2f})"
        )
    return True, said


def _sanctioned(tally: DecidedTally, mode: str | None, asking: Asking) -> Suggested:
    op = tally.operation
    if mode in (None, "auto"):
        return Suggested(op, none_because="already auto: it runs on its own")
    ok, why = _earned(*_whole(tally), "approved")
    if not ok:
        return Suggested(op, none_because=why)
    return Suggested(op, (mode_command(asking, op, "auto", why),))


def _mode_back(tally: DecidedTally, asking: Asking) -> Suggested:
    op = tally.operation
    ok, why = _earned(tally.shadow_matched, tally.shadow, "shadow items done the same by a person")
    if not ok:
        return Suggested(op, none_because=why)
    back = "auto" if op in operations.names("sanctioned") else "ask"
    return Suggested(op, (mode_command(asking, op, back, why),))


def _renewals(op: str, live: Live, asking: Asking) -> list[Suggestion]:
    """A live grant running low, or one used up in the last GRANT_LIFE with none of its writes
    reversed, unless another live grant of the same class is not running low."""
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
        found.append(
            grant_command(asking, op, grant.where, why, "renew", bounds, grant.evidence, grant.on)
        )
    return found


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


@dataclass(frozen=True)
class _Class:
    where: Mapping[str, str]
    approved: frozenset[int]  # indexes of the approved proposals in it
    rejected: int
    agreed: int
    decided: int

    @property
    def label(self) -> str:
        return " ".join(f"{k}={v}" for k, v in sorted(self.where.items())) or "as a whole"


def _classes(tally: DecidedTally) -> list[_Class]:
    """The operation as a whole, and each KEY=VALUE an approved proposal held."""
    agreed, decided = _whole(tally)
    approved = frozenset(i for i, (ok, _) in enumerate(tally.decided) if ok)
    found = [_Class({}, approved, tally.rejected, agreed, decided)]
    pairs = sorted(
        {
            (k, where_text(v))
            for ok, params in tally.decided
            if ok
            for k, v in params.items()
            if isinstance(v, str | int | float | bool)
        }
    )
    for key, value in pairs:
        inside = [
            (i, ok)
            for i, (ok, params) in enumerate(tally.decided)
            if where_text(params.get(key)) == value
        ]
        yes = frozenset(i for i, ok in inside if ok)
        found.append(_Class({key: value}, yes, len(inside) - len(yes), len(yes), len(inside)))
    return found


def shared_params(approved: Sequence[Mapping[str, object]]) -> dict[str, str]:
    """The `KEY=VALUE`s (scalar values, as a grant compares them) every approved item had."""
    if not approved:
        return {}
    first, *rest = approved
    shared = {k: where_text(v) for k, v in first.items() if isinstance(v, str | int | float | bool)}
    return {k: v for k, v in sorted(shared.items()) if all(where_text(p.get(k)) == v for p in rest)}


def _covered(tally: DecidedTally, grants: Sequence[Grant]) -> frozenset[int]:
    """The approved proposals a live grant already covers (by its params, and by the facts
    it names where it names some: core/standing/scopes.py)."""
    return frozenset(
        i
        for i, (ok, params, facts) in enumerate(tally.said())
        if ok and any(fits(Scope(g.where, g.on), params, facts) for g in grants)
    )


def _judge(
    c: _Class, grants: Sequence[Grant], covered: frozenset[int], first: bool
) -> tuple[bool, str]:
    """Whether a clean class earns a grant past what is covered already (`first`: a first
    grant, sooner and smaller, may do), and the words why."""
    named = ", ".join(f"{g.id} ({where_label(g.where)})" for g in grants)
    if any(not g.on and all(c.where.get(k) == v for k, v in g.where.items()) for g in grants):
        return False, f"a live grant covers it: {named}"
    gone = len(c.approved & covered)
    if gone and c.approved <= covered:
        return False, f"a live grant covers it: {named}"
    ok, why = _earned(c.agreed - gone, c.decided - gone, "approved", first=first)
    return ok, why if ok else f"{why} ({c.label})"


def _grants(tally: DecidedTally, live: Live, asking: Asking) -> tuple[tuple[Suggestion, ...], str]:
    """Grants for the strongest clean classes, greedily, each past what is covered already:
    full grants first, then one scope over the facts that parted approvals from rejections,
    then first grants for what is left (one scope rather than a small grant per value)."""
    grants = live.of(tally.operation)
    covered = _covered(tally, grants)
    classes = sorted(_classes(tally), key=lambda c: (-c.decided, len(c.where), c.label))
    clean = [c for c in classes if c.rejected == 0]
    found: list[Suggestion] = []
    for c in classes:
        if c.rejected:
            split = _separated(tally, c, live, asking)
            if split is not None and all(f.command != split.command for f in found):
                found.append(split)
    covered, _ = _clean(tally, clean, live, asking, covered, found, first=False)
    scoped, covered = _scoped(tally, live, asking, covered)
    found += [f for f in scoped if all(f.command != g.command for g in found)]
    _, reasons = _clean(tally, clean, live, asking, covered, found, first=True)
    return tuple(found), _why_none(tally, classes, reasons)


def _clean(
    tally: DecidedTally,
    clean: Sequence[_Class],
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
            cited = _on_evidence(tally, c, where, live, asking)
            if cited is not None and all(f.command != cited.command for f in found):
                found.append(cited)
            continue
        gone = len(c.approved & covered)
        bounds = (first_uses(c.agreed - gone, c.decided - gone), GRANT_EXPIRES)
        made = grant_command(
            asking, op, where, f"{why}, none rejected in this class", bounds=bounds
        )
        if all(f.command != made.command for f in found):
            found.append(made)
        covered |= c.approved
    return covered, reasons


def _scoped(
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
        ok, why = _earned(len(best.approved), best.decided, "approved")
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


def _separated(tally: DecidedTally, c: _Class, live: Live, asking: Asking) -> Suggestion | None:
    """A grant on evidence for a status write's class that holds rejections, when citing
    evidence separates its approved moves from its rejected ones: every rejected move cited
    none, and the approved moves that cited some earn a grant on their own (None: else).

    Sound from the params alone: a grant on evidence runs only a move citing a person's newer
    event, so it covers no move that cited nothing; a rejected move that cited any event (older,
    or one the person did not take) keeps it unsuggested."""
    spec = operations.find(tally.operation)
    if spec is None or not spec.status_write or not c.where or "task_id" in c.where:
        return None  # a status write's class; never one task's
    inside = [(ok, p) for ok, p in tally.decided if _in_class(p, c.where)]
    if any(not ok and p.get("evidence") for ok, p in inside):
        return None  # a rejected move cited an event: evidence does not separate them
    cited = [ok for ok, p in inside if p.get("evidence")]
    if not cited or not all(cited):
        return None
    ok, why = _earned(len(cited), len(cited), "approved moves citing a person's event")
    if not ok or live.suspension(tally.operation, c.where, "newer"):
        return None
    if any(g.evidence and g.where.items() <= c.where.items() for g in live.of(tally.operation)):
        return None  # a live grant on evidence covers it already
    rejected = sum(1 for ok, _ in inside if not ok)
    why = (
        f"{why}; the {rejected} rejected in {c.label} cited no event, and a grant on evidence "
        "runs only a move citing a person's newer event"
    )
    return grant_command(asking, tally.operation, c.where, why, evidence="newer")


def _in_class(params: Mapping[str, object], where: Mapping[str, str]) -> bool:
    return all(where_text(params.get(k)) == v for k, v in where.items())


def _on_evidence(
    tally: DecidedTally, c: _Class, where: Mapping[str, str], live: Live, asking: Asking
) -> Suggestion | None:
    """The narrower grant of a class whose plain grant a reversal suspended: only the moves
    citing a person's event newer than the task's last change (`--evidence newer`), when the
    class's approved proposals that cited events earn it on their own (None: they do not)."""
    spec = operations.find(tally.operation)
    if spec is None or not spec.status_write or live.suspension(tally.operation, where, "newer"):
        return None
    if any(g.evidence and g.where.items() <= where.items() for g in live.of(tally.operation)):
        return None  # a live grant on evidence covers it already
    cited = [ok for i, (ok, p) in enumerate(tally.decided) if i in c.approved and p.get("evidence")]
    ok, why = _earned(sum(cited), len(cited), "approved moves citing a person's event")
    if not ok:
        return None
    why = f"{why}; a person reversed a move the plain grant made, and a grant on evidence "
    why += "runs only a move citing a person's newer event"
    return grant_command(asking, tally.operation, where, why, evidence="newer")


def _why_none(tally: DecidedTally, classes: Sequence[_Class], reasons: Sequence[str]) -> str:
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
