"""What a skip needs of a domain's journal, derived once by the run that commits it.

A `custodian run` that ends on the hub's 304 decides with: the last completed run's
observation, the writes still open, the killed runs to close, a person's modes and grants, the
pending approvals' expiries, and the settings and model it runs with. The run that commits the
journal derives them here from the records it folded (the same views the full run asks), so
that the next skip reads one small file instead of the typed journal (run/_quick.py). The file
names the record it was derived at: any other record appended since makes a skip read as before.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from custodian_runtime.core.approvals.items import ApprovalItem
from custodian_runtime.core.fold.api import (
    Record,
    interrupted_runs,
    last_completed_observation,
    unfinished_items,
)
from custodian_runtime.core.journal.chain import format_at
from custodian_runtime.core.standing.record import standing_of

FACTS_VERSION = 1


def skip_facts(
    records: Sequence[Record],
    items: Iterable[ApprovalItem],
    settings_digest: str,
    model: str | None,
) -> dict[str, Any]:
    """The facts a skip decides with, as JSON; `records` as the checkpoint keeps them."""
    last = last_completed_observation(records)
    return {
        "v": FACTS_VERSION,
        "last": None
        if last is None
        else {
            "run_id": last.run_id,
            "finished_at": format_at(last.finished_at),
            "state_digest": last.state_digest,
            "snapshot": last.snapshot,
            "generated_at": last.generated_at,
            "revision": last.revision,
            "inputs_digest": last.inputs_digest,
        },
        "open_writes": len(unfinished_items(records)),
        "interrupted": len(interrupted_runs(records)),
        "standing": standing_of(records).fingerprint(),
        "expiries": sorted(format_at(i.expires_at) for i in items if i.status == "pending"),
        "settings_digest": settings_digest,
        "model": model,
    }
