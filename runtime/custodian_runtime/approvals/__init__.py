"""The approval queue on disk: each queued item's file and the queue's per-domain index.

It sits below the journal, whose pruning and resealing keep what the queue holds; what a person
does with an item (approve, reject, repair, an approved item executed) is `person/`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from custodian_runtime._lazy import lazy_attributes

if TYPE_CHECKING:
    from custodian_runtime.approvals.store import ApprovalStore

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_attributes(globals())
