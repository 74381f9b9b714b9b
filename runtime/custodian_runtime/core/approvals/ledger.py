"""Approval items as a view of the journal: each item's status as the journal says it.

The journal is the one record of truth for a write's life; an item file is a view of it. This
module folds a domain's records into what the journal says of each approval id, and lists the
items whose file says otherwise. The journal wins: `approvals repair` rewrites those files.

What each record says of the item it belongs to (an approval run's records belong to the item
its `approval_decided` names; a later run's records to it through `reconciles`):

- `queued` -> pending;
- `approval_decided` rejected -> rejected, refused -> failed, stale -> stale (approved decides
  nothing yet: the write it authorizes does);
- `receipt` (sent, re-sent, or `found_on_hub`) -> executed; `unknown` -> unknown;
- `failed` / `stale` -> failed / stale when the write was sent; a write closed without being
  sent (`closed`) settles only an item that was `unknown`, and leaves a person's decision as it is;
- `settled_by_hand` -> the journal no longer says a status a file can hold.

A decision kept in the domain's inbox is not in the journal yet: the item is still pending
there, as its file says, so it is no disagreement.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from pydantic import BaseModel, ConfigDict

from custodian_runtime.core.approvals.items import ApprovalItem, effective_status
from custodian_runtime.core.journal.kinds import (
    ApprovalDecided,
    Entry,
    Failed,
    Queued,
    SettledByHand,
    Stale,
    WriteStep,
    decode,
)
from custodian_runtime.core.journal.records import Record, parse_at

DECIDED = {"rejected": "rejected", "refused": "failed", "stale": "stale"}
SENT = {"receipt": "executed", "unknown": "unknown", "failed": "failed", "stale": "stale"}
# The kinds of record that can speak of an approval item.
SPOKEN = frozenset({"queued", "approval_decided", "settled_by_hand", *SENT})


# How long the checkpoint keeps what the journal said of an item after its last word on it: far
# past any item's expiry, so an item file can never outlive the record that decides it.
RETAIN = timedelta(days=180)


class Said(BaseModel):
    """What the journal says of one item: its status, the record that says it, and when."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    status: str
    ref: str
    at: str | None = None


class Ledger(BaseModel):
    """A domain's records folded: each approval id's status, and which run acted for which id.

    The checkpoint keeps it (core/fold/checkpoint.py), so a command reads an item's status from the
    journal at the cost of opening the checkpoint, never of reading the journal."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    said: dict[str, Said] = {}
    runs: dict[str, str] = {}

    def status_of(self, approval_id: str) -> Said | None:
        """What the journal says of the item (None: nothing it still keeps)."""
        return self.said.get(approval_id)


@dataclass(frozen=True)
class Disagreement:
    """An item file that says one status where the journal says another (at `ref`)."""

    approval_id: str
    file_says: str
    journal_says: str
    ref: str

    def line(self) -> str:
        """One line for a person."""
        return (
            f"{self.approval_id} file says {self.file_says}, "
            f"journal says {self.journal_says} at {self.ref}"
        )


def fold_ledger(ledger: Ledger, records: Iterable[Record]) -> Ledger:
    """The ledger after `records` (folding in chunks equals folding all at once)."""
    said, runs = dict(ledger.said), dict(ledger.runs)
    changed = False
    for record in records:
        if record.kind not in SPOKEN:
            continue
        data = decode(record)
        approval_id = _approval_of(record, data, runs)
        if approval_id is None:
            continue
        changed = True
        now = _status_after(said.get(approval_id), record, data)
        if now is None:
            said.pop(approval_id, None)
        else:
            said[approval_id] = now
    return Ledger(said=said, runs=runs) if changed or runs != ledger.runs else ledger


def retained(ledger: Ledger, last_at: str) -> Ledger:
    """The ledger without the items the journal last spoke of more than `RETAIN` before
    `last_at` (and the runs bound to them): its size follows the queue, not history."""
    since = parse_at(last_at) - RETAIN
    said = {k: v for k, v in ledger.said.items() if v.at is None or parse_at(v.at) >= since}
    if len(said) == len(ledger.said):
        return ledger
    runs = {run: approval for run, approval in ledger.runs.items() if approval in said}
    return Ledger(said=said, runs=runs)


def _approval_of(record: Record, data: Entry, runs: dict[str, str]) -> str | None:
    """The approval id the record speaks of (and, for a decision, bind its run to it)."""
    if isinstance(data, Queued | ApprovalDecided):
        approval_id = data.approval_id
        if approval_id is None:
            return None
        if isinstance(data, ApprovalDecided):
            runs[record.run_id] = approval_id
        return approval_id
    if isinstance(data, SettledByHand):
        return runs.get(str(data.run_id_of_the_open_write))
    if isinstance(data, WriteStep) and record.kind in SENT:
        return runs.get(str(data.reconciles or record.run_id))
    return None


def _status_after(before: Said | None, record: Record, data: Entry) -> Said | None:
    """What the journal says of the item once `record` is read."""
    kind = record.kind
    if kind == "queued":
        return _said("pending", record)
    if isinstance(data, ApprovalDecided):
        status = DECIDED.get(str(data.decision))
        return before if status is None else _said(status, record)
    if kind == "settled_by_hand":
        return None
    closed = isinstance(data, Failed | Stale) and bool(data.closed)
    status = reconciled_status(None if before is None else before.status, kind, closed)
    return before if status is None else _said(status, record)


def _said(status: str, record: Record) -> Said:
    return Said(status=status, ref=record.ref, at=record.at)


def reconciled_status(before: str | None, kind: str, closed: bool) -> str | None:
    """The item's status once its write's `kind` record is read (`closed`: closed, not sent).

    A write closed without being sent settles a write whose answer never came (an `unknown`
    item), and nothing else: a person's decision stands, and an undecided item stays pending.
    """
    if closed and kind in ("failed", "stale") and before != "unknown":
        return before
    return SENT[kind]


def disagreements(
    ledger: Ledger, items: Iterable[ApprovalItem], now: datetime
) -> list[Disagreement]:
    """Each item whose file says another status than the journal, in id order.

    A pending item past its expiry is expired in the file and in the journal alike; an item
    the journal says nothing of (queued before a prune, say) is no disagreement.
    """
    found: list[Disagreement] = []
    for item in sorted(items, key=lambda i: i.id):
        said = ledger.said.get(item.id)
        if said is None:
            continue
        journal = _expiring(said.status, item, now)
        file = effective_status(item, now)
        if file != journal:
            found.append(Disagreement(item.id, file, journal, said.ref))
    return found


def _expiring(status: str, item: ApprovalItem, now: datetime) -> str:
    """The journal's pending, read as the file's is: expired once past the item's expiry."""
    return "expired" if status == "pending" and now >= item.expires_at else status


def repaired(item: ApprovalItem, disagreement: Disagreement, now: datetime) -> ApprovalItem:
    """The item with the journal's status, and a note saying where that status comes from."""
    status = disagreement.journal_says
    note = f"status set from the journal at {disagreement.ref} (the file said {item.status})"
    update: dict[str, object] = {"status": status, "decision_note": note}
    if status == "pending":
        update |= {"decided_at": None, "decided_by": None}
    else:
        update |= {"decided_at": item.decided_at or now}
    return ApprovalItem.model_validate({**item.model_dump(), **update})
