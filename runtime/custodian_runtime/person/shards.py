"""A fleet's shards: the memory directories one review page reads, and the one an item lives in.

Each shard keeps its domains' journals, queues and locks in its own memory directory; a decision
is carried out in the shard whose queue holds its item, and an item found in two shards (a
reshard left a copy) is decided in neither.
"""

from __future__ import annotations

from dataclasses import replace

from custodian_runtime.errors import CustodianError
from custodian_runtime.journal.person.queue import ApprovalStore
from custodian_runtime.settings import Settings


def shards(settings: Settings) -> tuple[Settings, ...]:
    """The settings of each shard the page reads (one: the memory directory alone)."""
    if not settings.shard_memory:
        return (settings,)
    return tuple(replace(settings, memory_dir=d, shard_memory=()) for d in settings.shard_memory)


def shard_of(settings: Settings, approval_id: str) -> Settings | None:
    """The shard whose queue holds `approval_id`; None when none does, or more than one."""
    found = []
    for shard in shards(settings):
        try:
            held = approval_id in ApprovalStore(shard.memory_dir)
        except CustodianError:  # not an approval id at all
            return None
        if held:
            found.append(shard)
    return found[0] if len(found) == 1 else None
