"""The plan: the model's answer parsed into a `Plan`, or refused with the reason."""

from __future__ import annotations

from typing import TYPE_CHECKING

from custodian_runtime._lazy import lazy_attributes

if TYPE_CHECKING:
    from custodian_runtime.core.plan import answer, extract

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_attributes(globals())
