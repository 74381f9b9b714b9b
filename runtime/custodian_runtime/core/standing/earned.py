"""How much a person's agreement must show before a grant or a mode is suggested, and the words why.

The lower bound of the Wilson score interval (95 %) of a class's agreement must reach MIN_BOUND:
with no rejection that takes NEEDED approvals. A first grant of a class with no rejection comes
sooner (FIRST_BOUND, FIRST_NEEDED) and smaller (`first_uses`).
"""

from __future__ import annotations

import math

from custodian_runtime.core.standing.commands import GRANT_MAX

Z = 1.96  # 95 %, two-sided
MIN_BOUND = 0.65  # the lower bound a class's agreement must reach


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


def earned(agreed: int, decided: int, what: str, first: bool = False) -> tuple[bool, str]:
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
