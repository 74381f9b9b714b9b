"""One operation's decided proposals in the report's window, and the classes a grant can name.

A class is an operation as a whole, or the operation with one param equal to one value (what
`--where KEY=VALUE` names), its params read as the hub will hold them (grants.held_params).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from custodian_runtime.core.standing.grants import where_text
from custodian_runtime.core.standing.scopes import Judged


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


def whole(tally: DecidedTally) -> tuple[int, int]:
    """(agreed, decided) of the operation as a whole, shadow items counted."""
    decided = tally.approved + tally.rejected + tally.shadow
    return tally.approved + tally.shadow_matched, decided


@dataclass(frozen=True)
class WhereClass:
    """One class of an operation's decided proposals: the `--where` it names, and its tally."""

    where: Mapping[str, str]
    approved: frozenset[int]  # indexes of the approved proposals in it
    rejected: int
    agreed: int
    decided: int

    @property
    def label(self) -> str:
        """The class in words: its `KEY=VALUE`s, or "as a whole"."""
        return " ".join(f"{k}={v}" for k, v in sorted(self.where.items())) or "as a whole"


def where_classes(tally: DecidedTally) -> list[WhereClass]:
    """The operation as a whole, and each KEY=VALUE an approved proposal held."""
    agreed, decided = whole(tally)
    approved = frozenset(i for i, (ok, _) in enumerate(tally.decided) if ok)
    found = [WhereClass({}, approved, tally.rejected, agreed, decided)]
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
        found.append(WhereClass({key: value}, yes, len(inside) - len(yes), len(yes), len(inside)))
    return found


def shared_params(approved: Sequence[Mapping[str, object]]) -> dict[str, str]:
    """The `KEY=VALUE`s (scalar values, as a grant compares them) every approved item had."""
    if not approved:
        return {}
    first, *rest = approved
    shared = {k: where_text(v) for k, v in first.items() if isinstance(v, str | int | float | bool)}
    return {k: v for k, v in sorted(shared.items()) if all(where_text(p.get(k)) == v for p in rest)}


def in_class(params: Mapping[str, object], where: Mapping[str, str]) -> bool:
    """Whether a proposal's params hold each `KEY=VALUE` of `where`."""
    return all(where_text(params.get(k)) == v for k, v in where.items())
