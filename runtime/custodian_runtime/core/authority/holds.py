"""What a write held in deference to a person says: who decided the task, when, and that no
newer word of a person supports changing it (core/standing/rule.py holds it).

A person's decision on a task's status stands for `defer_days`: asking them again about it on
the same facts is asking twice, so such a write is neither queued nor sent. A newer event of a
person that supports the change lifts the hold (core/authority/evidence.py `newer_word`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Final

from custodian_runtime.core.authority.evidence import stamp

# The ruling's reason code of a held write (core/authority/authorize.py `ReasonCode`).
HELD: Final = "held_deference"
NO_NEWER_WORD = "no newer word from a person supports the change"


def held_clause(who: str, did: str, at: datetime | None, since: str = NO_NEWER_WORD) -> str:
    """`held: ana approved setting task t-1 to blocked on 2026-03-05 10:00 UTC; no newer …`."""
    when = "at a time the hub does not say" if at is None else f"on {stamp(at)}"
    return f"held: {who} {did} {when}; {since}"
