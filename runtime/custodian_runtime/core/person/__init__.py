"""A person's decision on a queued item: what it comes to, why an item waits."""

from __future__ import annotations

from typing import TYPE_CHECKING

from custodian_runtime._lazy import lazy_attributes

if TYPE_CHECKING:
    from custodian_runtime.core.person import settle, verdicts, waiting

__all__ = [
    "settle",
    "verdicts",
    "waiting",
]

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_attributes(__name__, globals(), submodules=__all__)
