"""Asked, whatever else would carry it: a write a person must see, even under a grant.

Two facts a class cannot name, so that no scope of a grant (nor a write's own evidence) speaks
for them, and the write waits for a person with the fact on its card:

- *A person's later word.* A write that cites events acts only while the newest event it cites
  is still the newest word of a person on its task. When someone other than Custodian wrote on
  the task after it (a note, a blocker, a milestone: any event), the later word may say
  otherwise: the write is asked, naming that event. It is the same on its own (a sanctioned
  status move) and under a grant (even one that asks for evidence, `--evidence newer`).
- *A repeat elsewhere.* A create that nearly repeats an open one of another workstream
  (the operation's `repeats_elsewhere`, core/operations/near.py) is asked, naming it; a repeat
  in its own scope is denied before anyone is asked (its `repeats`).

Ruled in `authorize()` (core/authority/authorize.py), so on every path: a fresh plan, the same
write ruled again just before it is sent, a reconcile and a grant's use. A person's approval of
the asked item is their word on it. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from custodian_runtime.core._timestamps import utc
from custodian_runtime.core.authority.evidence import (
    Evidence,
    by_custodian,
    cited,
    newest_cited,
    stamp,
)
from custodian_runtime.core.contract import ProgressEvent
from custodian_runtime.core.operations import OperationSpec
from custodian_runtime.core.operations.schema import short
from custodian_runtime.core.view import View


def asked_anyway(
    spec: OperationSpec, params: Mapping[str, Any], view: View, evidence: Evidence
) -> str | None:
    """Why a person must be asked about the write whatever would carry it; None: nothing."""
    if spec.repeats_elsewhere is not None:
        found = spec.repeats_elsewhere(params, view)
        if found is not None:
            return found
    if not spec.status_write:
        return None
    return later_word_clause(params, evidence)


def later_word(params: Mapping[str, Any], evidence: Evidence) -> ProgressEvent | None:
    """The newest event of a person on the write's task written after the newest event it
    cites (not cited itself, not Custodian's, not dated ahead of the hub); None: none is."""
    newest = newest_cited(params, evidence)
    if newest is None:
        return None
    ids = set(cited(params))
    after = utc(newest.created_at)
    found = [
        event
        for event in evidence.events.values()
        if event.task_id == newest.task_id
        and event.id not in ids
        and by_custodian(event, evidence.own_ids) is None
        and not evidence.ahead(event)
        and utc(event.created_at) > after
    ]
    return max(found, key=lambda e: (utc(e.created_at), e.id), default=None)


def later_word_clause(params: Mapping[str, Any], evidence: Evidence) -> str | None:
    """What a person reads when someone wrote on the task after the write's evidence."""
    later = later_word(params, evidence)
    newest = newest_cited(params, evidence)
    if later is None or newest is None:
        return None
    kind = f"an {later.event_type}" if later.event_type[:1] in "aeiou" else f"a {later.event_type}"
    return (
        f"{short(later.source)} wrote on task {later.task_id} after the evidence it cites: event "
        f"{later.id}, {kind} at {stamp(later.created_at)}, is newer than {newest.id} "
        f"({stamp(newest.created_at)}); a person reads the newer word and decides, and no grant "
        "carries it"
    )
