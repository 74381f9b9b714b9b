"""The queue's items: what an item is and what became of it, below the authority."""

from __future__ import annotations

from typing import TYPE_CHECKING

from custodian_runtime._lazy import lazy_attributes

if TYPE_CHECKING:
    from custodian_runtime.core.approvals import (
        decider,
        history,
        items,
        ledger,
        notice,
        recorded_decisions,
        seals,
        status,
    )

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_attributes(globals())
