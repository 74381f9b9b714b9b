"""The items waiting in every domain, at the cost of what changed since the last page.

A review server keeps, between requests, the stamp (inode, ctime, mtime, size) of every item
file and the pending items whole. A page reads again only the files whose stamp changed: none
when the queue's directory is as it was (every save is a rename into it) and the pending files
are as they were; after a decision, a listing of the directory and the changed files. What the
journal says wins over a file: the status of every pending item is checked against its domain's
ledger (the checkpoint's, core/approvals/ledger.py), and a file the journal decided is rewritten
from the journal when its domain is free (person/derived.py), as `approvals list` does.
Derived, never a record: a restart rebuilds it from the files.
"""

from __future__ import annotations

import os
import threading
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from custodian_runtime.clock import new_nonce
from custodian_runtime.core.approvals.items import ApprovalItem, effective_status
from custodian_runtime.core.approvals.ledger import Ledger, disagreements
from custodian_runtime.errors import CustodianError, RunLocked
from custodian_runtime.journal.lock import RunLock
from custodian_runtime.journal.person.queue import ApprovalStore
from custodian_runtime.journal.store import JournalStore
from custodian_runtime.person.derived import heal_items, journal_ledger


@dataclass(frozen=True)
class _File:
    stamp: str
    item: ApprovalItem | None  # kept whole only while it waits


@dataclass(frozen=True)
class Waiting:
    """The pending items, oldest first, and each one's plan place (from the journal)."""

    items: tuple[ApprovalItem, ...]
    order: dict[str, int]


def _stamp_of(st: os.stat_result, *, size: bool = True) -> str:
    tail = f":{st.st_size}" if size else ""
    return f"{st.st_ino}:{st.st_ctime_ns}:{st.st_mtime_ns}{tail}"


class WaitingItems:
    """The pending items of one memory directory, kept up to date by stamps (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._directory = ""
        self._files: dict[str, _File] = {}
        # Each domain's ledger, and the stamps of the journal files it was read from: a domain
        # whose journal did not change since is not opened again.
        self._ledgers: dict[str, tuple[str, Ledger]] = {}

    def pending(self, store: ApprovalStore, now: datetime) -> Waiting:
        """Every pending item as its journal says it, oldest first."""
        with self._lock:
            items = self._refreshed(store)
        mine = [i for i in items if effective_status(i, now) == "pending"]
        checked, order = self._as_journal_says(store, mine, now)
        return Waiting(tuple(sorted(checked, key=lambda i: (i.created_at, i.id))), order)

    def _refreshed(self, store: ApprovalStore) -> list[ApprovalItem]:
        folder = store.directory
        try:
            seen = _stamp_of(folder.stat(), size=False)
        except FileNotFoundError:
            self._directory, self._files = "", {}
            return []
        if seen != self._directory or not self._pending_unchanged(folder):
            self._files = self._rescanned(store, folder)
            self._directory = seen
        return [f.item for f in self._files.values() if f.item is not None]

    def _pending_unchanged(self, folder: Path) -> bool:
        where = str(folder)
        for name, known in self._files.items():
            if known.item is None:
                continue
            try:
                if _stamp_of(os.stat(os.path.join(where, name))) != known.stamp:
                    return False
            except FileNotFoundError:
                return False
        return True

    def _rescanned(self, store: ApprovalStore, folder: Path) -> dict[str, _File]:
        files: dict[str, _File] = {}
        with os.scandir(folder) as entries:
            for e in entries:
                if not (e.name.endswith(".json") and e.is_file(follow_symlinks=False)):
                    continue
                stamp = _stamp_of(e.stat(follow_symlinks=False))
                known = self._files.get(e.name)
                if known is None or known.stamp != stamp:
                    known = _read(store, e.name, stamp)
                files[e.name] = known
        return files

    def _as_journal_says(
        self, store: ApprovalStore, items: list[ApprovalItem], now: datetime
    ) -> tuple[list[ApprovalItem], dict[str, int]]:
        """The items the journal too says wait (their files healed where it says otherwise),
        and each one's place in the journal (its `queued` record's sequence number)."""
        kept: list[ApprovalItem] = []
        order: dict[str, int] = {}
        by_domain: dict[str, list[ApprovalItem]] = {}
        for item in items:
            by_domain.setdefault(item.domain, []).append(item)
        for domain, mine in sorted(by_domain.items()):
            try:
                ledger = self._ledger(store, domain)
            except CustodianError:
                kept += mine  # `inspect` names a journal that cannot be read; the queue shows
                continue
            decided = {d.approval_id for d in disagreements(ledger, mine, now)}
            if decided:
                _heal(store, domain, [i for i in mine if i.id in decided], now)
            kept += [i for i in mine if i.id not in decided]
            order |= _places(ledger, mine)
        return kept, order

    def _ledger(self, store: ApprovalStore, domain: str) -> Ledger:
        """What the domain's journal says of its items; opened again only when a journal file
        (the active segment, the sealed ones' folder, the checkpoint) changed."""
        stamp = _journal_stamp(store.memory_dir, domain)
        with self._lock:
            known = self._ledgers.get(domain)
        if known is not None and known[0] == stamp:
            return known[1]
        ledger = journal_ledger(store.memory_dir, store.seal_key, domain)
        with self._lock:
            self._ledgers[domain] = (stamp, ledger)
        return ledger


def _journal_stamp(memory_dir: Path, domain: str) -> str:
    layout = JournalStore(memory_dir).layout(domain)
    parts = []
    for path in (layout.active, layout.sealed_dir, layout.checkpoint):
        try:
            parts.append(_stamp_of(os.stat(path)))
        except FileNotFoundError:
            parts.append("-")
    return "/".join(parts)


def _read(store: ApprovalStore, name: str, stamp: str) -> _File:
    try:
        item = store.get(name.removesuffix(".json"), verify=False)
    except CustodianError:
        return _File(stamp, None)  # a damaged file: `approvals list` names it
    return _File(stamp, item if item.status == "pending" else None)


def _places(ledger: Ledger, items: list[ApprovalItem]) -> dict[str, int]:
    found = {}
    for item in items:
        said = ledger.status_of(item.id)
        seq = None if said is None else said.ref.rpartition(":")[2]
        if seq is not None and seq.isdigit():
            found[item.id] = int(seq)
    return found


def _heal(store: ApprovalStore, domain: str, items: list[ApprovalItem], now: datetime) -> None:
    """Rewrite the files the journal decided, under the domain's lock (not while a run holds
    it: the page shows the journal's word either way)."""
    try:
        with RunLock(store.memory_dir, domain, run_id=f"heal-{new_nonce()}"):
            ledger = journal_ledger(store.memory_dir, store.seal_key, domain)
            heal_items(store, items, ledger, now)
    except (RunLocked, CustodianError):
        return


def together(parts: list[Waiting]) -> Waiting:
    """Several shards' pending items as one queue, oldest first; an id that two shards hold (a
    reshard left a copy) is in neither, as it can be decided in neither (review/shards.py)."""
    if len(parts) == 1:
        return parts[0]
    ids = Counter(i.id for p in parts for i in p.items)
    mine = (i for p in parts for i in p.items if ids[i.id] == 1)
    items = sorted(mine, key=lambda i: (i.created_at, i.id))
    order: dict[str, int] = {}
    for part in parts:
        order |= part.order
    return Waiting(tuple(items), order)
