"""The authority's checks: which write runs on its own, waits for a person, or is refused."""

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
        origin,
        own_writes,
        precondition,
        refusals,
        scope,
    )

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_attributes(globals())
