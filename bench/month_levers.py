"""Each lever of the month switched off in turn, for its share: bench-only knobs, never flags.

A lever's share is the items the person judges with every lever but that one, less the items
with all of them: what that lever alone saves in the same world. The knobs live here, not in
the runtime: a lever the person works (a grant the report suggests) is off when the person
skips the lines that would issue it; a lever of the authority itself (the hold, a person's
newer word) is off when this process swaps the one pure function that decides it for one that
never does, for that arm only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any

import custodian_runtime.core.authority.deference as deference
import custodian_runtime.core.authority.refusals as refusals
import custodian_runtime.core.standing.rule as rule


def _never(*_: Any, **__: Any) -> None:
    return None


def _unchanged(ruling: Any) -> Any:
    return ruling


def _cites_nothing_known(*_: Any) -> str:
    return ""


@dataclass(frozen=True)
class Lever:
    """One lever: its name, the report lines its person skips, the functions it swaps."""

    name: str
    skips: Callable[[str], bool] = lambda _: False
    swaps: tuple[tuple[Any, str, Any], ...] = ()


def _issues(line: str) -> bool:
    return " grants issue " in f" {line} "


LEVERS = (
    Lever(
        "held in deference to a person (not asked again)",
        swaps=((rule, "in_deference", _unchanged),),
    ),
    Lever(
        "grants from class suggestions",
        skips=lambda line: (
            _issues(line)
            and "--evidence" not in line
            and "runs low" not in line
            and " --on " not in line
        ),
    ),
    Lever("grants scoped by facts (--on)", skips=lambda line: _issues(line) and " --on " in line),
    Lever(
        "a standing no said of what was cited",
        swaps=((refusals, "cites_of", _cites_nothing_known),),
    ),
    Lever("grants asking for evidence", skips=lambda line: _issues(line) and "--evidence" in line),
    Lever("renewals suggested", skips=lambda line: _issues(line) and "runs low" in line),
    Lever(
        "a person's newer word lifts deference",
        swaps=((deference, "newer_word", _never), (rule, "newer_word", _never)),
    ),
)


@contextmanager
def switched_off(lever: Lever | None) -> Iterator[None]:
    """The authority with `lever`'s functions swapped for the arm's length (None: none)."""
    with ExitStack() as stack:
        for module, name, stand_in in () if lever is None else lever.swaps:
            before = getattr(module, name)
            setattr(module, name, stand_in)
            stack.callback(setattr, module, name, before)
        yield
