"""Probing an item's open status write before a person decides on it again.

A status write is never taken as landed because the task shows its status: a person may have
set it by hand. Where its task moved since it was authorized, its own key is re-sent through the
one chain with the If-Match of the version it carried, which is gone, so it can apply nothing:
a replay proves it landed (the item is executed), a 412 that it never did (closed stale; the
person's decision stands). The core says which writes to probe (`settle.item_probes`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import custodian_runtime.person._execute as _execute
from custodian_runtime.core.contract import DomainSummary
from custodian_runtime.core.fold import api as core_journal
from custodian_runtime.core.journal.kinds import Reconciled, SameValue
from custodian_runtime.core.person.settle import item_probes
from custodian_runtime.core.ruling.proof import SET_BY_OTHER
from custodian_runtime.core.ruling.reconcile import authority_of, landed_on_hub
from custodian_runtime.journal.run_journal import Journal
from custodian_runtime.settings import Settings
from custodian_runtime.writes import calls_of, send


@dataclass(frozen=True)
class ProbeLanded:
    """Where a probed write is on the hub: `replayed`, the hub answered from its key (the write
    had landed before); otherwise the probe itself was applied (the hub ignored If-Match)."""

    hub_id: str
    replayed: bool


def probe_item_writes(
    settings: Settings,
    journal: Journal,
    pending: Sequence[core_journal.PendingWrite],
    observed: DomainSummary | None,
    now: datetime,
) -> tuple[list[core_journal.PendingWrite], ProbeLanded | None]:
    """Probe the writes only a probe can settle; the writes left to settle, and where one landed.

    Call it only for a write the ruling would send now: a probe re-sends the write, and a hub
    or gateway that ignores If-Match applies it."""
    probes = item_probes(pending, observed, now)
    if not probes or observed is None:
        return list(pending), None
    landed: ProbeLanded | None = None
    with _execute.hub_client(settings) as client:
        for write, version, why in probes:
            reason = f"{why}: its key is re-sent with If-Match {version}, which can apply nothing"
            journal.write(
                Reconciled(run_id_of_the_interrupted_run=write.run_id, index=write.index,
                           idempotency_key=write.idempotency_key, action="probe", reason=reason)
            )  # fmt: skip
            sent = send(
                journal, client, calls_of(authority_of(write)), index=write.index,
                operation=write.operation, params=dict(write.params), run_id=write.run_id,
                key=write.idempotency_key, reconciles=write.run_id,
                sent_before=write.dispatched, if_match=version, planned_on=write.planned_on,
            )  # fmt: skip
            if landed is None and sent.hub_id is not None:
                landed = ProbeLanded(sent.hub_id, sent.replayed)
            _same_value(journal, write, observed, sent.stale)
    probed = {id(write) for write, _, _ in probes}
    return [w for w in pending if id(w) not in probed], landed


def _same_value(
    journal: Journal,
    write: core_journal.PendingWrite,
    observed: DomainSummary,
    never_landed: str | None,
) -> None:
    """A probe that proved the write never landed, on a task that shows its status: say so."""
    shown = landed_on_hub(write, observed, ()) if never_landed else None
    if shown is None:
        return
    journal.write(
        SameValue(index=write.index, reconciles=write.run_id, hub_id=shown, closed="stale",
                  by_other=True, reason=f"{never_landed}; {SET_BY_OTHER}")
    )  # fmt: skip
