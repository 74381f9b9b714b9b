"""The one ruling, over the authority's checks and a person's standing."""

from __future__ import annotations

from typing import TYPE_CHECKING

from custodian_runtime._lazy import lazy_attributes

if TYPE_CHECKING:
    from custodian_runtime.core.ruling import path, proof, reconcile, spine, trace

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_attributes(globals())
