"""The journal on disk: segments, writer, checkpoint, runs index, lock, snapshots, words."""

from __future__ import annotations

from typing import TYPE_CHECKING

from custodian_runtime._lazy import lazy_attributes

if TYPE_CHECKING:
    from custodian_runtime.journal.inbox import Inbox, new_word_id
    from custodian_runtime.journal.lock import ATTEMPTS, LeftLock, LockHolder, RunLock
    from custodian_runtime.journal.prune import Pruned, prune, prune_segments
    from custodian_runtime.journal.reader import JournalReader, RunsPage
    from custodian_runtime.journal.reseal import Survey, reseal, reseal_command
    from custodian_runtime.journal.run_journal import DiskJournal, Journal, MemoryJournal
    from custodian_runtime.journal.settle import HandSettlement, settle
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

__all__ = [
    "ATTEMPTS",
    "WINDOW",
    "ContentStore",
    "DiskJournal",
    "DomainReport",
    "HandSettlement",
    "Inbox",
    "Journal",
    "JournalReader",
    "JournalStore",
    "JournalWriter",
    "LeftLock",
    "LockHolder",
    "MemoryJournal",
    "Opened",
    "Pruned",
    "ReadResult",
    "RunLock",
    "RunsPage",
    "SnapshotStore",
    "Survey",
    "check_domain",
    "fsync_dir",
    "new_word_id",
    "observed_summary",
    "parse_line",
    "prune",
    "prune_segments",
    "reseal",
    "reseal_command",
    "settle",
    "verify_domain",
]

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_attributes(
        __name__,
        globals(),
        {
            **dict.fromkeys(("Inbox", "new_word_id"), "inbox"),
            **dict.fromkeys(("ATTEMPTS", "LeftLock", "LockHolder", "RunLock"), "lock"),
            **dict.fromkeys(("Pruned", "prune", "prune_segments"), "prune"),
            **dict.fromkeys(("JournalReader", "RunsPage"), "reader"),
            **dict.fromkeys(("Survey", "reseal", "reseal_command"), "reseal"),
            **dict.fromkeys(("DiskJournal", "Journal", "MemoryJournal"), "run_journal"),
            **dict.fromkeys(("HandSettlement", "settle"), "settle"),
            **dict.fromkeys(("ContentStore", "SnapshotStore", "observed_summary"), "snapshots"),
            **dict.fromkeys(
                (
                    "JournalStore",
                    "JournalWriter",
                    "Opened",
                    "ReadResult",
                    "check_domain",
                    "fsync_dir",
                    "parse_line",
                ),
                "store",
            ),
            **dict.fromkeys(("DomainReport", "WINDOW", "verify_domain"), "verify"),
        },
    )
