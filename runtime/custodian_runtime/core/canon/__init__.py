"""The canon as the model sees it: files split into sections, pinned whole or retrieved."""

from __future__ import annotations

from typing import TYPE_CHECKING

from custodian_runtime._lazy import lazy_attributes

if TYPE_CHECKING:
    from custodian_runtime.core.canon import sections

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_attributes(globals())
