"""The revision skip: whether a run may end on the hub's word, and the facts a skip decides with."""

from __future__ import annotations

from typing import TYPE_CHECKING

from custodian_runtime._lazy import lazy_attributes

if TYPE_CHECKING:
    from custodian_runtime.core.skip import (
        facts,
        unchanged,
    )

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_attributes(globals())
