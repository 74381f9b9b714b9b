"""`custodian journal settle REF [--by NAME] --reason TEXT`: a person closes an open write by hand.

Under the domain's run lock, the journal is opened (and verified) as a run opens it; the core
names the write (core/fold/settle.py), and one `settled_by_hand` record, the person's
decision, closes it in a run of its own. Nothing is sent to any hub.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from custodian_runtime.core.fold import api as core_journal
from custodian_runtime.core.fold.settle import by_hand, open_write, parse_ref
from custodian_runtime.core.journal.kinds import SettledByHand, read_as
from custodian_runtime.core.journal.seals import SealKey
from custodian_runtime.errors import SettleRefused
from custodian_runtime.journal.lock import RunLock
from custodian_runtime.journal.store import JournalStore


@dataclass(frozen=True)
class HandSettlement:
    """What settling by hand did: the write closed, and the record that closed it."""

    ref: str
    operation: str
    run_id: str
    record: core_journal.Record

    def text(self) -> str:
        """One line for a person."""
        return (
            f"{self.ref}: {self.operation} of run {self.run_id} closed by hand at "
            f"{self.record.ref} ({read_as(self.record, SettledByHand).by}); nothing was sent"
        )


def settle(
    memory_dir: Path,
    ref: str,
    by: str,
    reason: str,
    clock: Callable[[], datetime],
    nonce: str,
    key: SealKey | None = None,
) -> HandSettlement:
    """Close the open write `ref` (`<domain>:<seq>`) as `by`'s decision, for `reason`."""
    try:
        domain, seq = parse_ref(ref)
    except ValueError as exc:
        raise SettleRefused(str(exc)) from None
    run_id = f"by-hand-{nonce}"
    store = JournalStore(memory_dir, seal_key=key)
    with RunLock(memory_dir, domain, run_id=run_id):
        opened = store.open(domain)
        try:
            write = open_write(core_journal.unfinished_items(opened.history), domain, seq)
        except ValueError as exc:
            raise SettleRefused(str(exc)) from None
        writer = store.writer(domain, run_id, clock, opened)
        record = writer.write(by_hand(write, f"{domain}:{seq}", by, reason))
        store.commit(writer)
    return HandSettlement(f"{domain}:{seq}", write.operation, write.run_id, record)
