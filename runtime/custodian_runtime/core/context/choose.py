"""Which retrieved sections a run shows: the rankings merged fairly, then fitted to the room.

Each query of the run (core/context/queries.py) ranks sections by BM25 in the shell's index. The
rankings are merged in turns, every query's best first, then every query's second, and so on, so
that each thing in the state gets its governing section before any gets its third; a section
ranked by several queries keeps its earliest place. The merged list is then fitted, in that order,
into the canon's share of the token budget, and what is shown is shown in canon order.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from custodian_runtime.core.canon.sections import CanonSection, SectionKey, entry
from custodian_runtime.core.context.tokens import estimate_tokens

__all__ = ["SMALLEST", "Fitted", "fit", "fuse", "share"]

SMALLEST = 24  # tokens: no section with its heading and file name costs less


@dataclass(frozen=True)
class Fitted:
    """The sections shown, in canon order, their estimated tokens, and how many were left out."""

    shown: tuple[CanonSection, ...] = ()
    tokens: int = 0
    left_out: int = 0


def share(token_budget: int, percent: int) -> int:
    """The tokens the retrieved sections may take of the prompt's budget."""
    return token_budget * percent // 100


def fuse(
    rankings: Sequence[Sequence[SectionKey]], files: Collection[str], depth: int
) -> tuple[SectionKey, ...]:
    """Section keys merged in turns from each ranking's first `depth` sections of `files` (the
    run's scope), each once."""
    scoped = [[key for key in ranking if key[0] in files][:depth] for ranking in rankings]
    merged: dict[SectionKey, None] = {}
    for rank in range(depth):
        for ranking in scoped:
            if rank < len(ranking):
                merged.setdefault(ranking[rank], None)
    return tuple(merged)


def fit(ranked: Sequence[CanonSection], room: int, candidates: int) -> Fitted:
    """The ranked sections that fit in `room` tokens, each taken whole or not at all;
    `candidates` is how many sections the run could have been shown."""
    taken: list[CanonSection] = []
    left = room
    for section in ranked:
        if left < SMALLEST:
            break  # nothing more fits: the rest are not costed
        cost = estimate_tokens(entry(section) + "\n")
        if cost <= left:
            taken.append(section)
            left -= cost
    shown = tuple(sorted(taken, key=lambda s: (s.file, s.order)))
    return Fitted(shown, room - left, candidates - len(shown))
