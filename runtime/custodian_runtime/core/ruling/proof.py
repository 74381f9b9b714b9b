"""Landed means proven: what shows that a write made the change the hub now shows.

A matching value proves nothing (a person may have set the same status by hand), and neither
does a version that moved by one (any write moves it). What proves that a status write landed
is the hub replaying the write's own idempotency key. Re-sent with that key, the same body and
the `If-Match` of the version it carried, a status write can never apply once that version is
gone, so the re-send is a safe probe: a replay (`Idempotent-Replayed: true`) proves it landed,
a 412 without a replay that it never did. It is made only while the task's version differs from
the carried one and within the hub's idempotency window; otherwise nothing proves it either way.

An event found by its run mark is proof: the mark names the run that authorized it, a run
authorizes one event per text (a second equal item is denied as a duplicate), a reconcile
re-sends it under the same mark, and no other writer puts that mark on an event. A flag, a
create or a resolve found by its value is not proof, and a re-send could make it: no probe.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

import custodian_runtime.core.operations as operations
from custodian_runtime.core.contract import DomainSummary
from custodian_runtime.core.journal.keys import IDEMPOTENCY_WINDOW
from custodian_runtime.core.journal.records import parse_at
from custodian_runtime.core.operations import add_progress_event
from custodian_runtime.core.ruling.spine import PendingWrite

# proven: found by what only this write makes; probe: re-send the key with `if_match`;
# not_landed: proven never made; unproven: nothing proves it either way.
Proof = Literal["proven", "probe", "not_landed", "unproven"]
SET_BY_OTHER = "the hub shows the same value, set by someone else"


@dataclass(frozen=True)
class LandingProof:
    """How a write whose value the hub shows (as `hub_id`) can be proven landed, and why."""

    proof: Proof
    reason: str
    hub_id: str
    if_match: int | None = None


def carried_version(pending: PendingWrite) -> int | None:
    """The task version a status write carried as `If-Match` (None: it kept none)."""
    version = (pending.planned_on or {}).get("version")
    return version if isinstance(version, int) and not isinstance(version, bool) else None


def probe_version(
    pending: PendingWrite, observed: DomainSummary, now: datetime
) -> tuple[int | None, str]:
    """The version a status write's key may be re-sent with as a safe probe, or None and why not.

    Only while the task's version differs from the carried one (then the re-send can apply
    nothing) and within the hub's idempotency window (past it, no replay can be asked for).
    """
    carried = carried_version(pending)
    task_id = pending.params.get("task_id")
    task = next(
        (t for ws in observed.workstreams for t in ws.tasks if t.id == task_id),
        None,
    )
    if carried is None:
        return None, "its authorization kept no task version, so no re-send is a safe probe"
    if task is None or task.version is None:
        return None, "the hub shows no version of its task, so no re-send is a safe probe"
    if task.version == carried:
        return None, f"its task is still at version {carried}: a re-send could apply it"
    if now - parse_at(pending.authorized_at) >= IDEMPOTENCY_WINDOW:
        return None, "authorized more than 24 h ago, past the hub's idempotency window"
    return carried, f"its task moved from version {carried} to {task.version}"


def landing_proof(
    pending: PendingWrite, hub_id: str, observed: DomainSummary, now: datetime, *, sent: bool
) -> LandingProof:
    """How to prove a write whose value the hub shows as `hub_id` (`reconcile.landed_on_hub`).

    `sent`: whether any `dispatched` record says the write ever left; one that never did
    cannot have landed, whatever the hub shows.
    """
    spec = operations.spec(pending.operation)
    if spec.name == add_progress_event.SPEC.name:
        return LandingProof("proven", "its event bears the run's mark", hub_id)
    if not sent:
        return LandingProof("not_landed", "it never left Custodian (no dispatched record)", hub_id)
    if not spec.status_write:
        why = "found only by its value, and a re-send could make it: no safe probe"
        return LandingProof("unproven", why, hub_id)
    version, why = probe_version(pending, observed, now)
    if version is None:
        return LandingProof("unproven", why, hub_id)
    return LandingProof("probe", why, hub_id, if_match=version)
