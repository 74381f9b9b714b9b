"""The authority: which write runs on its own, waits for a person, or is refused."""

from __future__ import annotations

from typing import TYPE_CHECKING

from custodian_runtime._lazy import lazy_attributes

if TYPE_CHECKING:
    from custodian_runtime.core.authority import (
        asked,
        authorize,
        budgets,
        checks,
        deference,
        evidence,
        facts,
        grounded,
        holds,
        keys,
        marks,
        origin,
        own_writes,
        path,
        precondition,
        proof,
        reconcile,
        refusals,
        scope,
    )

__all__ = [
    "asked",
    "authorize",
    "budgets",
    "checks",
    "deference",
    "evidence",
    "facts",
    "grounded",
    "holds",
    "keys",
    "marks",
    "origin",
    "own_writes",
    "path",
    "precondition",
    "proof",
    "reconcile",
    "refusals",
    "scope",
]

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_attributes(__name__, globals(), submodules=__all__)
