"""What parted a person's approvals from their rejections: a grant's scope found in the facts.

An operation whose classes by one param all hold rejections may still hold a scope that holds
none: a few facts of the proposals (core/authority/scope.py) that every rejected one lacked.
The facts a scope may name are the ones a grant can bind and the ruling checks: a param's
value (`--where`), the target's workstream, its owner, the task's status, at least so many
idle days (`--on`), and citing a person's newer event (`--evidence newer`, status writes
only). A scope is looked for among conjunctions of at most MAX_ATOMS of them, each held by
at least NEEDED approved proposals: one that covers no rejected proposal in the window and
whose approvals earn the bound, the one covering the most approvals first (the narrowest of
equals). A bound on days must be learnt: the bound the older half of the window gives must
leave out every rejection of the newer half, so that it held on proposals it was not fit on.
A rejected proposal whose facts were not kept counts as inside every scope its params fit: an
unknown fact never widens a grant.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations

from custodian_runtime.core.authority.scope import (
    ASKED,
    AT_LEAST,
    CITES,
    MAX_IDLE,
    NOT_SCOPES,
    ONE_OF,
    one_of,
    scope_label,
)
from custodian_runtime.core.standing.grants import where_text

MAX_ATOMS = 3
# A value joins a set of values in a scope once this many of its proposals were approved.
SET_LEAST = 2
NEWER = "newer"
# A param whose value names one target is no class (a grant on one task is no standing word).
ONE_TARGET = frozenset({"task_id", "decision_id", "flag_id", "title", "summary", "note"})


@dataclass(frozen=True)
class Scope:
    """A grant's scope: params (`--where`), facts (`--on`), and evidence (`--evidence`)."""

    where: Mapping[str, str] = field(default_factory=dict)
    on: Mapping[str, str] = field(default_factory=dict)
    evidence: str | None = None

    def label(self) -> str:
        """`status=blocked; on owner=mia idle_days>=7; citing a person's newer event`."""
        parts = [" ".join(f"{k}={v}" for k, v in sorted(self.where.items()))]
        parts.append(f"on {scope_label(self.on)}" if self.on else "")
        parts.append("citing a person's newer event" if self.evidence else "")
        return "; ".join(p for p in parts if p) or "as a whole"

    def size(self) -> int:
        """How many facts it names."""
        return len(self.where) + len(self.on) + (self.evidence is not None)


# One decided proposal: approved or not, its params as held, its facts (None: not kept).
Judged = tuple[bool, Mapping[str, object], Mapping[str, str] | None]


def fits(scope: Scope, params: Mapping[str, object], facts: Mapping[str, str] | None) -> bool:
    """Whether a proposal falls in `scope`; with facts unknown, whether its params do (the
    cautious answer for a rejected one; an approved one is then counted in no scope)."""
    if any(where_text(params.get(k)) != v for k, v in scope.where.items()):
        return False
    if facts is None:
        return True
    if scope.evidence is not None and facts.get(CITES) != NEWER:
        return False
    for key, want in scope.on.items():
        have = facts.get(key)
        if have is None:
            return False
        if key in AT_LEAST:
            if not (have.isdigit() and int(have) >= int(want)):
                return False
        elif not one_of(want, have):
            return False
    return True


def _atoms(said: Sequence[Judged], status_write: bool, needed: int) -> list[Scope]:
    """Each single fact that at least `needed` approved proposals held (for idle days, a
    bound past each rejected proposal's)."""
    approved = [(p, f) for ok, p, f in said if ok and f is not None]
    counts: dict[tuple[str, str, str], int] = {}
    for params, facts in approved:
        for k, v in params.items():
            if k not in ONE_TARGET and isinstance(v, str | int | float | bool):
                counts[("where", k, where_text(v))] = counts.get(("where", k, where_text(v)), 0) + 1
        for k, v in facts.items():
            if k not in NOT_SCOPES and k not in AT_LEAST:
                counts[("on", k, v)] = counts.get(("on", k, v), 0) + 1
        if status_write and facts.get(CITES) == NEWER:
            counts[("evidence", NEWER, NEWER)] = counts.get(("evidence", NEWER, NEWER), 0) + 1
    atoms = [_atom(kind, k, v) for (kind, k, v), n in sorted(counts.items()) if n >= needed]
    atoms += _sets(said, needed)
    for key in sorted(AT_LEAST):
        # Past a rejected proposal's days, the least an approved one had: the narrowest bound
        # that covers as many approvals as any that leaves the rejected one out.
        days = [int(f[key]) for _, f in approved if f.get(key, "").isdigit()]
        past = {int(f[key]) for ok, _, f in said if not ok and f and f.get(key, "").isdigit()}
        bounds = {min((d for d in days if d > r), default=0) for r in past}
        for t in sorted(t for t in bounds if 1 <= t <= MAX_IDLE):
            if sum(1 for d in days if d >= t) >= needed:
                atoms.append(Scope(on={key: str(t)}))
    return atoms


def _sets(said: Sequence[Judged], needed: int) -> list[Scope]:
    """For each fact of the target, the set of its values whose proposals a person approved at
    least SET_LEAST times and never rejected (`--on KEY=A,B,C`), when it holds more than one
    value and `needed` approvals: one grant where each value would wait for its own. A value
    with an unkept rejection is left out (its facts unknown, it counts as every value)."""
    tally: dict[str, dict[str, list[bool]]] = {}
    for ok, _, facts in said:
        for key, value in (facts or {}).items():
            if key not in AT_LEAST and key not in NOT_SCOPES:
                tally.setdefault(key, {}).setdefault(value, []).append(ok)
    unknown = any(not ok and facts is None for ok, _, facts in said)
    found = []
    for key, values in sorted(tally.items()):
        clean = sorted(v for v, oks in values.items() if all(oks) and len(oks) >= SET_LEAST)
        held = sum(len(values[v]) for v in clean)
        if len(clean) > 1 and held >= needed and not unknown and ONE_OF not in "".join(clean):
            found.append(Scope(on={key: ONE_OF.join(clean)}))
    return found


def _atom(kind: str, key: str, value: str) -> Scope:
    if kind == "where":
        return Scope(where={key: value})
    if kind == "on":
        return Scope(on={key: value})
    return Scope(evidence=NEWER)


def _joined(parts: Sequence[Scope]) -> Scope | None:
    """The conjunction of single facts, or None when two name the same key."""
    where: dict[str, str] = {}
    on: dict[str, str] = {}
    evidence = None
    for part in parts:
        if set(part.where) & set(where) or set(part.on) & set(on):
            return None
        if part.evidence and evidence:
            return None
        where |= part.where
        on |= part.on
        evidence = evidence or part.evidence
    return Scope(where, on, evidence)


def _narrowest(scope: Scope, approved: Sequence[Judged]) -> Scope:
    """`scope` with every param and fact all its approved proposals shared: it then covers
    no more than what a person approved, and no fewer of them."""
    params = [p for _, p, _ in approved]
    facts = [f for _, _, f in approved if f is not None]
    first_p, first_f = params[0], facts[0]
    where = {
        k: where_text(v) for k, v in first_p.items()
        if k not in ONE_TARGET and isinstance(v, str | int | float | bool)
        and all(where_text(p.get(k)) == where_text(v) for p in params)
    }  # fmt: skip
    on = {
        k: v for k, v in first_f.items()
        if k not in NOT_SCOPES and k not in AT_LEAST and all(f.get(k) == v for f in facts)
    }  # fmt: skip
    return Scope({**where, **scope.where}, {**on, **scope.on}, scope.evidence)


def bounds_learnt(scope: Scope, said: Sequence[Judged]) -> bool:
    """Whether each at-least bound of `scope` holds out of the half it would be fit on (`said`
    oldest first): the bound the older half's proposals give (the least approved value past
    every rejected one) must leave out every rejection of the newer half. A bound that the
    newer rejections reach has not been learnt, and a grant on it would cover the next one
    (none of the window's rejections inside it is not enough)."""
    half = len(said) // 2
    for key in (k for k in scope.on if k in AT_LEAST):
        rest = Scope(scope.where, {k: v for k, v in scope.on.items() if k != key}, scope.evidence)

        def values(
            part: Sequence[Judged], approved: bool, key: str = key, rest: Scope = rest
        ) -> list[int]:
            return [int(f[key]) for ok, p, f in part
                    if ok == approved and f is not None and f.get(key, "").isdigit()
                    and fits(rest, p, f)]  # fmt: skip

        top = max(values(said[:half], False), default=-1)
        fit = min((d for d in values(said[:half], True) if d > top), default=None)
        if fit is None or any(r >= fit for r in values(said[half:], False)):
            return False
    return True


@dataclass(frozen=True)
class Found:
    """A scope that holds no rejection, and the approved proposals (by index) it covers."""

    scope: Scope
    approved: frozenset[int]
    decided: int


def asked_anyway(judged: Judged) -> bool:
    """Whether a rejected proposal was asked whatever would carry it (core/authority/asked.py):
    no grant covers such a one, whatever its scope, so it parts nothing a scope could name."""
    ok, _, facts = judged
    return not ok and facts is not None and ASKED in facts


def clean_scopes(
    said: Sequence[Judged],
    status_write: bool,
    needed: int,
    covered: frozenset[int] = frozenset(),
) -> list[Found]:
    """Every scope of at most MAX_ATOMS facts that covers no rejected proposal and at least
    `needed` approved ones past `covered`, its bounds learnt (`bounds_learnt`; `said` oldest
    first), the most approvals first, then the narrowest. A rejection asked whatever would
    carry it (`asked_anyway`) is left out: no grant would have covered it."""
    kept = [i for i, judged in enumerate(said) if not asked_anyway(judged)]
    if len(kept) == len(said):
        return _clean_scopes(said, status_write, needed, covered)
    back = dict(enumerate(kept))
    where = {i: n for n, i in back.items()}
    found = _clean_scopes([said[i] for i in kept], status_write, needed,
                          frozenset(where[i] for i in covered if i in where))  # fmt: skip
    return [Found(f.scope, frozenset(back[n] for n in f.approved), f.decided) for f in found]


def _clean_scopes(
    said: Sequence[Judged],
    status_write: bool,
    needed: int,
    covered: frozenset[int],
) -> list[Found]:
    atoms = _atoms(said, status_write, needed)
    found: list[Found] = []
    for size in range(1, MAX_ATOMS + 1):
        for parts in combinations(atoms, size):
            scope = _joined(parts)
            if scope is None:
                continue
            inside = [(i, ok) for i, (ok, p, f) in enumerate(said) if fits(scope, p, f)]
            if any(not ok for _, ok in inside):
                continue
            yes = frozenset(i for i, ok in inside if ok and said[i][2] is not None)
            if len(yes - covered) >= needed and bounds_learnt(scope, said):
                found.append(Found(_narrowest(scope, [said[i] for i in sorted(yes)]), yes,
                                   len(inside)))  # fmt: skip
    return sorted(
        found, key=lambda f: (-len(f.approved - covered), -f.scope.size(), f.scope.label())
    )
