"""Files on disk: the journal, the run lock, the approval queue, session notes and snapshots.

Everything here is written atomically; the modules with a leading underscore are the parts
behind the journal store and are not imported from outside this package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from custodian_runtime._lazy import lazy_attributes

if TYPE_CHECKING:
    from custodian_runtime.memory.approvals import ApprovalStore
    from custodian_runtime.memory.journal_prune import prune
    from custodian_runtime.memory.journal_reseal import reseal, reseal_command
    from custodian_runtime.memory.journal_settle import settle
    from custodian_runtime.memory.journal_store import (
        JournalStore,
        JournalWriter,
        Opened,
        ReadResult,
    )
    from custodian_runtime.memory.journal_verify import verify_domain
    from custodian_runtime.memory.lock import RunLock
    from custodian_runtime.memory.notes import last_note_prose, note_prose, write_note
    from custodian_runtime.memory.run_journal import DiskJournal, Journal, MemoryJournal
    from custodian_runtime.memory.shadow_log import shadow_log
    from custodian_runtime.memory.snapshots import ContentStore, SnapshotStore, observed_summary
    from custodian_runtime.memory.standing_store import StandingStore

__all__ = [
    "ApprovalStore",
    "ContentStore",
    "DiskJournal",
    "Journal",
    "JournalStore",
    "JournalWriter",
    "MemoryJournal",
    "Opened",
    "ReadResult",
    "RunLock",
    "SnapshotStore",
    "StandingStore",
    "last_note_prose",
    "note_prose",
    "observed_summary",
    "prune",
    "reseal",
    "reseal_command",
    "settle",
    "shadow_log",
    "verify_domain",
    "write_note",
]

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_attributes(
        __name__,
        globals(),
        {
            **dict.fromkeys(("ApprovalStore",), "approvals"),
            **dict.fromkeys(("ContentStore", "SnapshotStore", "observed_summary"), "snapshots"),
            **dict.fromkeys(("DiskJournal", "Journal", "MemoryJournal"), "run_journal"),
            **dict.fromkeys(
                ("JournalStore", "JournalWriter", "Opened", "ReadResult"), "journal_store"
            ),
            **dict.fromkeys(("RunLock",), "lock"),
            **dict.fromkeys(("StandingStore",), "standing_store"),
            **dict.fromkeys(("last_note_prose", "note_prose", "write_note"), "notes"),
            **dict.fromkeys(("prune",), "journal_prune"),
            **dict.fromkeys(("reseal", "reseal_command"), "journal_reseal"),
            **dict.fromkeys(("settle",), "journal_settle"),
            **dict.fromkeys(("shadow_log",), "shadow_log"),
            **dict.fromkeys(("verify_domain",), "journal_verify"),
        },
    )
