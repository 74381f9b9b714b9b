"""The prompt context: what the model sees, under a token budget, with hub text inert."""

from __future__ import annotations

from typing import TYPE_CHECKING

from custodian_runtime._lazy import lazy_attributes

if TYPE_CHECKING:
    from custodian_runtime.core.context import (
        choose,
        neutralize,
        overview,
        prompt,
        queries,
        tokens,
    )

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_attributes(globals())
