"""Fair selection: every section of the prompt gets a share of the token budget.

The room is split evenly among the sections that have items. A section takes its items in order
while they fit its share; a section that runs out of items before its share does gives the rest
back, and the room given back is split again among the others, until no section can take more.
Items go in whole first; only then may an item go in without its long text (its compact form).
What is left over at the very end goes to the sections in order. Each section shows a prefix of its
items, so what it leaves out is always the rest of its list. Pure and deterministic.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from custodian_runtime.core.context._items import Piece

__all__ = ["Candidates", "Selection", "select"]


@dataclass(frozen=True)
class Candidates:
    """One section's items, best first, each rendered only when considered.

    `overhead` is charged with the first item shown (the block markers around the items).
    """

    key: str
    items: Sequence[Callable[[], Piece]]
    overhead: int = 0


@dataclass(frozen=True)
class Selection:
    """The lines each section shows, what each left out, and the estimated cost."""

    shown: Mapping[str, tuple[str, ...]]
    omitted: Mapping[str, int]
    compacted: int  # items shown without their long text
    tokens: int


class _Fill:
    """One section's progress through its items against the room it has been given."""

    def __init__(self, candidates: Candidates, cost: Callable[[str], int]) -> None:
        self.candidates = candidates
        self.cost = cost
        self.cap = 0
        self.used = 0
        self.lines: list[str] = []
        self.compacted = 0
        self._piece: Piece | None = None

    @property
    def exhausted(self) -> bool:
        return len(self.lines) == len(self.candidates.items)

    @property
    def left_out(self) -> int:
        return len(self.candidates.items) - len(self.lines)

    def take(self, compact: bool) -> None:
        """Take items in order while the next one fits what is left of `cap`."""
        while not self.exhausted:
            if self._piece is None:
                self._piece = self.candidates.items[len(self.lines)]()
            extra = 0 if self.lines else self.candidates.overhead
            room = self.cap - self.used - extra
            forms = [self._piece.full]
            if compact and self._piece.compact is not None:
                forms.append(self._piece.compact)
            fitting = [(t, c) for t, c in ((t, self.cost(t)) for t in forms) if c <= room]
            if not fitting:
                return
            text, spent = fitting[0]
            self.compacted += text != self._piece.full
            self.lines.append(text)
            self.used += spent + extra
            self._piece = None


def select(sections: Sequence[Candidates], room: int, cost: Callable[[str], int]) -> Selection:
    """Choose each section's lines within `room` tokens, as the module docstring describes."""
    fills = [_Fill(c, cost) for c in sections]
    pool = max(0, room)
    for compact in (False, True):
        pool = _water_fill([f for f in fills if not f.exhausted], pool, compact)
    for fill in fills:  # what no share could use, offered to the sections in order
        pool, fill.cap = pool + fill.cap - fill.used, fill.used
    for fill in fills:
        fill.cap += pool
        fill.take(compact=True)
        pool, fill.cap = fill.cap - fill.used, fill.used
    return Selection(
        shown=MappingProxyType({f.candidates.key: tuple(f.lines) for f in fills}),
        omitted=MappingProxyType({f.candidates.key: f.left_out for f in fills if f.left_out}),
        compacted=sum(f.compacted for f in fills),
        tokens=sum(f.used for f in fills),
    )


def _water_fill(fills: list[_Fill], pool: int, compact: bool) -> int:
    # Each round gives every open section an even share of the pool, and the sections that reach
    # the end of their lists give back what they did not use. It stops when a round with a share
    # finishes no section; the sections keep what they were given. Returns what is left.
    share = 0
    while fills:
        for fill in fills:
            fill.cap += share
            fill.take(compact)
        finished = [f for f in fills if f.exhausted]
        for fill in finished:
            pool, fill.cap = pool + fill.cap - fill.used, fill.used
        fills = [f for f in fills if not f.exhausted]
        if (share and not finished) or not fills or pool < len(fills):
            break
        share = pool // len(fills)
        pool -= share * len(fills)
    return pool
