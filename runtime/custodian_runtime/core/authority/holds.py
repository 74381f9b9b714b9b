"""What a write held in deference to a person says: who decided the task, when, and that no
newer word of a person supports changing it (core/standing/rule.py holds it).

A person's decision on a task's status stands for `defer_days`: asking them again about it on
the same facts is asking twice, so such a write is neither queued nor sent. A newer event of a
person that supports the change lifts the hold (core/authority/evidence.py `newer_word`). A
status set on the hub before Custodian wrote the task is a person's decision only when their own
`status_change` event says so (`hand_set`): the hub's `updated_at` names no one.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Final

from custodian_runtime.core._timestamps import utc
from custodian_runtime.core.authority.evidence import by_custodian, stamp
from custodian_runtime.core.contract import ProgressEvent

# The ruling's reason code of a held write (core/authority/authorize.py `ReasonCode`).
HELD: Final = "held_deference"
NO_NEWER_WORD = "no newer word from a person supports the change"


def held_clause(who: str, did: str, at: datetime | None, since: str = NO_NEWER_WORD) -> str:
    """`held: ana approved setting task t-1 to blocked on 2026-03-05 10:00 UTC; no newer …`."""
    when = "at a time the hub does not say" if at is None else f"on {stamp(at)}"
    return f"held: {who} {did} {when}; {since}"


def hand_set(
    task_id: str, events: Iterable[ProgressEvent], own_ids: frozenset[str], after: datetime
) -> ProgressEvent | None:
    """A person's own word that they set the task's status on the hub: their newest
    `status_change` event on it (not Custodian's, so not the model's) written at or after
    `after` (the change, within the window); None when none says so (seed data, another system).
    """
    found = [
        e
        for e in events
        if e.task_id == task_id
        and e.event_type == "status_change"
        and by_custodian(e, own_ids) is None
        and utc(e.created_at) >= utc(after)
    ]
    return max(found, key=lambda e: (utc(e.created_at), e.id), default=None)
