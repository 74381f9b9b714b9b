"""The canon on disk: its hash, its read-only reasons, and approved writes opened from its fd."""

from __future__ import annotations

from typing import TYPE_CHECKING

from custodian_runtime._lazy import lazy_attributes

if TYPE_CHECKING:
    from custodian_runtime.canon.store import (
        current_sha256,
        path_parts,
        read_canon,
        readonly_reason,
        resolve_inside,
        write_canon,
    )

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_attributes(globals())
