"""A fleet's shards on one page: `custodian review --memory A --memory B ...`.

Each shard of a fleet keeps its domains' journals, queues and locks in its own memory directory.
The page reads every one of them: one queue over all, each shard's items kept up to date by its
own stamps (review/waiting.py), so a page still costs what it shows. A decision is carried out
against the memory directory its item lives in, under that directory's domain lock, by the very
functions `custodian approvals` runs there; its journal is the one record of it. An item id
found in two shards is decided in neither (a reshard left a copy): the page says it is not
there, and `custodian approvals` in each shard tells them apart.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path
from typing import TypeVar

import custodian_runtime.review.pages as pages
from custodian_runtime.core.approvals.items import ApprovalItem
from custodian_runtime.errors import CustodianError
from custodian_runtime.journal.person.queue import ApprovalStore
from custodian_runtime.person.shards import shard_of, shards
from custodian_runtime.review.pending import PendingView, pending_views
from custodian_runtime.settings import Settings

T = TypeVar("T")


def first_of(settings: Settings, read: Callable[[Settings], T | None]) -> T | None:
    """What `read` finds in the first shard where it finds anything (a run, a note)."""
    for shard in shards(settings):
        found = read(shard)
        if found is not None:
            return found
    return None


def every(settings: Settings, read: Callable[[Settings], Iterable[T]]) -> list[T]:
    """What `read` finds in every shard, shard after shard."""
    return [found for shard in shards(settings) for found in read(shard)]


def item_of(settings: Settings, approval_id: str) -> tuple[ApprovalItem | None, Settings | None]:
    """The item, pending or decided, and the shard it lives in (None: in no one shard)."""
    shard = shard_of(settings, approval_id)
    if shard is None:
        return None, None
    try:
        return ApprovalStore(shard.memory_dir, shard.seal_key).get(approval_id, verify=False), shard
    except CustodianError:
        return None, None


def in_shards(settings: Settings, items: list[ApprovalItem], now: datetime) -> list[PendingView]:
    """Each item's view, read in the shard it lives in (an item in no one shard is left out),
    in the order given: one read of each domain's summary for the whole page, as before."""
    homes: dict[Path, tuple[Settings, list[ApprovalItem]]] = {}
    for item in items:
        shard = shard_of(settings, item.id)
        if shard is not None:
            homes.setdefault(shard.memory_dir, (shard, []))[1].append(item)
    found = {
        v.item.id: v
        for shard, mine in homes.values()
        for v in pending_views(shard, ApprovalStore(shard.memory_dir, shard.seal_key), now, mine)
    }
    return [found[i.id] for i in items if i.id in found]


def notes_of(settings: Settings, domains: set[str]) -> dict[str, str]:
    """Run id -> its note's file name, for the runs of `domains` in every shard."""
    found: dict[str, str] = {}
    for shard in shards(settings):
        found |= pages.run_notes(shard, domains)
    return found
