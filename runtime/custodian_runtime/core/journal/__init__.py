"""The journal: records, hash chain, spine, run views and the checkpoint's fold."""

from __future__ import annotations

from typing import TYPE_CHECKING

from custodian_runtime._lazy import lazy_attributes

if TYPE_CHECKING:
    from custodian_runtime.core.journal import (
        api,
        chain,
        cited,
        continuity,
        fold,
        kinds,
        late_landings,
        observation,
        prune,
        records,
        render,
        run_index,
        runs,
        seal_key,
        seals,
        settle,
        spine,
        stream,
        totals,
        trace,
        words,
    )

__all__ = [
    "api",
    "chain",
    "cited",
    "continuity",
    "fold",
    "kinds",
    "late_landings",
    "observation",
    "prune",
    "records",
    "render",
    "run_index",
    "runs",
    "seal_key",
    "seals",
    "settle",
    "spine",
    "stream",
    "totals",
    "trace",
    "words",
]

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_attributes(__name__, globals(), submodules=__all__)
