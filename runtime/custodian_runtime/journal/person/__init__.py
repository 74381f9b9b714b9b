"""A person's side on disk: what a person decided or said, kept in the memory directory.

The queue's item files and their per-domain index (`queue.py`, `_queue_index.py`); the inbox of
a person's words kept while a run has the domain's lock (`inbox.py`, its listing
`inbox_files.py`, and an earlier release's side stores, `_inbox_legacy.py`); a person's modes and
grants, kept as words in the journal (`standing_store.py`); and the shadow records a report reads
back (`shadow_log.py`). It lives in the journal because the journal's pruning and resealing keep
what it holds, and the inbox continues the checkpoint's arrival mark; what a person does with
these (the commands) is `person/`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from custodian_runtime._lazy import lazy_attributes

if TYPE_CHECKING:
    from custodian_runtime.journal.person.inbox import Inbox, new_word_id
    from custodian_runtime.journal.person.queue import ApprovalStore
    from custodian_runtime.journal.person.standing_store import StandingStore

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_attributes(globals())
