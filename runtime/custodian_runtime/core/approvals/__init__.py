"""The approvals: the queue's rules and what a person's decision comes to."""

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

__all__ = [
    "decider",
    "history",
    "items",
    "ledger",
    "notice",
    "recorded_decisions",
    "seals",
    "status",
]

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_attributes(__name__, globals(), submodules=__all__)
