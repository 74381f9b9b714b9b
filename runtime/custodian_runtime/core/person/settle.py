"""Settling an item's open write before a person decides on it again.

An approval that was interrupted after its write was authorized leaves that write open in the
journal while the item still says `pending`. Before a person's next decision on the item, the
write is settled from what is observed now: if it landed, the item is `executed` and the new
decision says so; if not, the write is closed, and the decision stands. Nothing is re-sent here,
and nothing a person decided is silently overridden.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import custodian_runtime.core.operations as operations
from custodian_runtime.core.approvals.items import ApprovalItem
from custodian_runtime.core.authority.precondition import writes_canon
from custodian_runtime.core.contract import DomainSummary
from custodian_runtime.core.fold import api as core_journal
from custodian_runtime.core.inert import for_terminal
from custodian_runtime.core.journal.kinds import Failed, Receipt, Reconciled, encode
from custodian_runtime.core.ruling.proof import probe_version
from custodian_runtime.core.ruling.reconcile import landed_canon, landed_on_hub

JournalEntry = tuple[str, dict[str, Any]]


@dataclass(frozen=True)
class Settled:
    """The records that settle an item's open writes, and the hub id (or path) it landed as."""

    records: tuple[JournalEntry, ...]
    landed: str | None = None


def open_writes_of(
    history: Sequence[core_journal.Record], approval_id: str
) -> list[core_journal.PendingWrite]:
    """The writes an earlier approval of `approval_id` authorized and never closed."""
    return [
        p
        for p in core_journal.unfinished_items(history)
        if p.approval is not None and p.approval.approval_id == approval_id
    ]


def item_probes(
    pending: Sequence[core_journal.PendingWrite], observed: DomainSummary | None, now: datetime
) -> list[tuple[core_journal.PendingWrite, int, str]]:
    """The open status writes only a probe can settle: (write, the If-Match version, why)."""
    found = []
    for write in pending:
        spec = operations.find(write.operation)
        if observed is None or spec is None or not spec.status_write:
            continue
        version, why = probe_version(write, observed, now)
        if version is not None:
            found.append((write, version, why))
    return found


def reconcile_item_writes(
    pending: Sequence[core_journal.PendingWrite],
    observed: DomainSummary | None,
    canon_sha256: str | None,
    closing: str,
) -> Settled:
    """Found (landed) or closed, each open write; `closing` says why one not found is closed."""
    records: list[JournalEntry] = []
    landed: str | None = None
    for write in pending:
        found = _landed(write, observed, canon_sha256)
        action = "found" if found is not None else "refused"
        reason = f"already done as {found}" if found is not None else closing
        records.append(encode(_reconciled(write, action, reason)))
        if found is not None:
            landed = landed or found
            records.append(encode(found_receipt(write, found)))
        else:
            error = f"not sent: {closing}"
            closed = Failed(index=write.index, reconciles=write.run_id, error=error, status=None,
                            code=None, closed="refused")  # fmt: skip
            records.append(encode(closed))
    return Settled(tuple(records), landed)


def found_receipt(
    write: core_journal.PendingWrite, hub_id: str | None, late: str | None = None
) -> Receipt:
    """The `receipt` of an open write a later observation found landed (`late`: after it was
    closed, and how it was closed)."""
    return Receipt(
        index=write.index,
        reconciles=write.run_id,
        status_code=None,
        hub_id=hub_id,
        replayed=False,
        response_sha256=None,
        attempts=0,
        found_on_hub=True,
        **({"late": late} if late is not None else {}),
    )


def _landed(
    write: core_journal.PendingWrite, observed: DomainSummary | None, canon_sha256: str | None
) -> str | None:
    if writes_canon(write.operation):
        return landed_canon(write, canon_sha256)
    spec = operations.find(write.operation)
    if observed is None or spec is None or spec.status_write:
        # The status the task shows proves nothing: a person may have set it by hand.
        return None
    return landed_on_hub(write, observed, ())


def _reconciled(write: core_journal.PendingWrite, action: str, reason: str) -> Reconciled:
    return Reconciled(
        run_id_of_the_interrupted_run=write.run_id,
        index=write.index,
        idempotency_key=write.idempotency_key,
        action=action,
        reason=reason,
    )


def executed_before(item: ApprovalItem, found_by: str, landed: str, now: datetime) -> ApprovalItem:
    """The item as executed: an earlier approval's write was found done (`found_by` says when)."""
    note = f"an interrupted approval's write was found done as {landed} {found_by}"
    update = {"status": "executed", "decided_at": now, "result": {"hub_id": landed},
              "decision_note": note}  # fmt: skip
    return item.model_copy(update=update)


def landed_message(item: ApprovalItem, landed: str) -> str:
    """What the person reads when their decision comes after the write already landed."""
    return for_terminal(
        f"{item.id}: not decided again: an earlier approval of it already landed as {landed}, "
        "so the item is executed (change it on the hub by hand if that is not wanted)"
    )
