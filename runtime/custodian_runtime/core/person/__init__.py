"""A person's decision on a queued item, over the ruling and the standing."""

from __future__ import annotations

from typing import TYPE_CHECKING

from custodian_runtime._lazy import lazy_attributes

if TYPE_CHECKING:
    from custodian_runtime.core.person import settle, verdicts, waiting

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_attributes(globals())
