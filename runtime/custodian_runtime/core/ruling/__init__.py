"""The one ruling: every path's write ruled by one function, and what proves it landed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from custodian_runtime._lazy import lazy_attributes

if TYPE_CHECKING:
    from custodian_runtime.core.ruling import path, proof, reconcile, spine, trace

__all__ = [
    "path",
    "proof",
    "reconcile",
    "spine",
    "trace",
]

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_attributes(__name__, globals(), submodules=__all__)
