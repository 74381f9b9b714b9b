"""The journal's records: what each kind is, the hash chain, seals, a person's words."""

from __future__ import annotations

from typing import TYPE_CHECKING

from custodian_runtime._lazy import lazy_attributes

if TYPE_CHECKING:
    from custodian_runtime.core.journal import (
        chain,
        cited,
        continuity,
        keys,
        kinds,
        observation,
        records,
        seal_key,
        seals,
        totals,
        words,
    )

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_attributes(globals())
