"""What people read: the court record, approval text, labels, a note's outcomes; decides nothing."""

from __future__ import annotations

from typing import TYPE_CHECKING

from custodian_runtime._lazy import lazy_attributes

if TYPE_CHECKING:
    from custodian_runtime.core.presentation import approval_text, display, note_outcomes

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_attributes(globals())
