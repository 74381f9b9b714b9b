"""An item's status as the journal says it: the file is a view, repaired when it disagrees.

The journal's checkpoint keeps what the journal says of each item (core/approvals/ledger.py). Every
command that decides reads the item's status from there under the domain's lock, and an item file
that says otherwise is rewritten from the journal and named, never believed: a crash between a
decision's journal record and its file leaves the decision whole for the next command of any kind.
Commands that only read (`approvals list`, `show`, the review page) heal a domain's files when
its lock is free, and otherwise show the journal's status.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from custodian_runtime.clock import new_nonce
from custodian_runtime.core.approvals.items import ApprovalItem
from custodian_runtime.core.approvals.ledger import (
    Disagreement,
    Ledger,
    disagreements,
    repaired,
)
from custodian_runtime.core.journal.seals import SealKey
from custodian_runtime.errors import ApprovalError, JournalError, RunLocked, SealError
from custodian_runtime.journal.lock import RunLock
from custodian_runtime.journal.person.queue import ApprovalStore
from custodian_runtime.journal.store import JournalStore


@dataclass(frozen=True)
class Healed:
    """An item file rewritten from the journal: the item now, and what disagreed."""

    item: ApprovalItem
    disagreement: Disagreement

    def line(self) -> str:
        """One line for a person: what the file said, what the journal says, where."""
        d = self.disagreement
        return (
            f"{d.approval_id}: its file said {d.file_says}, the journal says {d.journal_says} at "
            f"{d.ref}; the file was rewritten from the journal"
        )


def as_journal_says(
    store: ApprovalStore, item: ApprovalItem, ledger: Ledger, now: datetime
) -> tuple[ApprovalItem, Healed | None]:
    """The item with the journal's status (hold the domain's lock): its file rewritten when it
    said another; an item whose seal fails is refused, never rewritten."""
    found = disagreements(ledger, [item], now)
    if not found:
        return item, None
    problem = store.seal_problem(item)
    if problem is not None:
        raise ApprovalError(
            f"{item.id}: its file says {found[0].file_says} and the journal says "
            f"{found[0].journal_says}, and its seal does not verify ({problem}); nothing was done. "
            "`custodian inspect` names it"
        )
    fixed = repaired(item, found[0], now)
    store.save(fixed)
    return fixed, Healed(fixed, found[0])


def heal_domain(
    memory_dir: Path, key: SealKey | None, domain: str, now: datetime
) -> list[Healed] | None:
    """Rewrite the domain's item files that disagree with its journal, under its lock; None
    when a run has the domain's lock (nothing is written; readers show the journal's status)."""
    store = ApprovalStore(memory_dir, key)
    try:
        with RunLock(memory_dir, domain, run_id=f"heal-{new_nonce()}"):
            ledger = JournalStore(memory_dir, seal_key=key).open(domain).checkpoint.ledger
            return heal_items(store, store.all(domain, verify=False), ledger, now)
    except RunLocked:
        return None


def heal_items(
    store: ApprovalStore, items: Iterable[ApprovalItem], ledger: Ledger, now: datetime
) -> list[Healed]:
    """Rewrite the files of `items` (one domain's) that disagree with `ledger` (hold the
    domain's lock); an item whose seal fails is left for `inspect` to name."""
    healed = []
    for item in items:
        if ledger.status_of(item.id) is not None and store.seal_problem(item) is None:
            _, one = as_journal_says(store, item, ledger, now)
            healed += [one] if one is not None else []
    return healed


def journal_ledger(memory_dir: Path, key: SealKey | None, domain: str) -> Ledger:
    """What the domain's journal says of its items, read without writing anything."""
    return JournalStore(memory_dir, seal_key=key).open(domain, repair=False).checkpoint.ledger


def heal_pending(store: ApprovalStore, now: datetime) -> list[Healed]:
    """Rewrite the item files that say pending where their journal says otherwise, in each
    domain with such a file whose lock is free: what a page lists as pending is pending."""
    domains = sorted({i.domain for i in store.all(verify=False) if i.status == "pending"})
    healed: list[Healed] = []
    for domain in domains:
        try:
            healed += heal_domain(store.memory_dir, store.seal_key, domain, now) or []
        except (JournalError, SealError):
            continue  # deciding refuses such a domain, and says why; a listing still lists
    return healed
