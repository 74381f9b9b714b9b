"""The journal on disk: segments, writer, checkpoint, runs index, lock, snapshots; a person's
words and items are its `person/`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from custodian_runtime._lazy import lazy_attributes

if TYPE_CHECKING:
    from custodian_runtime.journal.lock import ATTEMPTS, LeftLock, LockHolder, RunLock
    from custodian_runtime.journal.prune import Pruned, prune_segments
    from custodian_runtime.journal.reader import JournalReader, RunsPage
    from custodian_runtime.journal.reseal import Survey, reseal_command
    from custodian_runtime.journal.run_journal import DiskJournal, Journal, MemoryJournal
    from custodian_runtime.journal.settle import HandSettlement
    from custodian_runtime.journal.snapshots import ContentStore, SnapshotStore, observed_summary
    from custodian_runtime.journal.store import (
        JournalStore,
        JournalWriter,
        Opened,
        ReadResult,
        check_domain,
        fsync_dir,
        parse_line,
    )
    from custodian_runtime.journal.verify import WINDOW, DomainReport, verify_domain

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_attributes(globals())
