"""Trackers: which backend a hub URL names, and each backend's contract as a tracker's items."""

from __future__ import annotations

from typing import TYPE_CHECKING

from custodian_runtime._lazy import lazy_attributes

if TYPE_CHECKING:
    from custodian_runtime.core.trackers import address, redmine, roundup

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_attributes(globals())
