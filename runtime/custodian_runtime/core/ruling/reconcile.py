"""The reconcile half of the one authority: a write a killed run left open, found, probed,
sent again or closed, each ruled again through `rule_write` (core/ruling/path.py) on the
observation now; and the escalation flag of a write that cannot be settled.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Literal

import custodian_runtime.core.operations as operations
from custodian_runtime.core.authority.checks import SAME_TITLE
from custodian_runtime.core.contract import DomainSummary, ProgressEvent, Task
from custodian_runtime.core.journal.keys import IDEMPOTENCY_WINDOW
from custodian_runtime.core.journal.kinds import RulingRecord
from custodian_runtime.core.journal.records import parse_at
from custodian_runtime.core.operations import flag_for_human
from custodian_runtime.core.plan.extract import ProposedItem, fingerprint
from custodian_runtime.core.ruling.path import (
    Grounds,
    PersonDecision,
    UnderGrant,
    WriteRuling,
    as_item,
    rule_write,
)
from custodian_runtime.core.ruling.proof import probe_version
from custodian_runtime.core.ruling.spine import PendingWrite
from custodian_runtime.core.view import View

Action = Literal["found", "probe", "resend", "refused", "expired", "stale"]
# Who allowed a write: sanctioned (a run's own write), a person (an approved item) or a person's
# grant. A write is sent only through the dispatch table of the authority that allowed it.
Authority = Literal["sanctioned", "person", "grant"]


@dataclass(frozen=True)
class ReconcileStep:
    """What to do with one write a killed run left open, why, and who allowed it."""

    action: Action
    reason: str
    hub_id: str | None = None
    authority: Authority = "sanctioned"
    # A probe: the version the write carried, re-sent as If-Match with the write's own key.
    if_match: int | None = None


def reconcile_step(
    pending: PendingWrite,
    observed: DomainSummary,
    events: Sequence[ProgressEvent],
    now: datetime,
    grounds: Grounds | None = None,
    *,
    canon_sha256: str | None = None,
) -> ReconcileStep:
    """Found on the hub, re-sent, or closed: the record chain, the hub and the window decide.

    A write is re-sent only when its target is still as the authorization saw it, and the one
    authority allows it now from the same `grounds` a fresh plan would be ruled from. A canon
    write is settled against its file's hash now (`canon_sha256`), never through the hub.
    """
    if pending.problems:
        return ReconcileStep("refused", "the journal does not prove it: " + pending.problems[0])
    spec = operations.find(pending.operation)
    if spec is None:
        return ReconcileStep("refused", f"{pending.operation} is not an operation Custodian knows")
    if spec.writes == "canon":
        return _canon_step(pending, canon_sha256)
    landed = _landed_step(pending, spec.status_write, observed, events, now)
    if landed is not None:
        return landed
    shown = _shown(pending, observed, events) if spec.status_write else ""
    if now - parse_at(pending.authorized_at) >= IDEMPOTENCY_WINDOW:
        return ReconcileStep(
            "expired",
            "authorized more than 24 h ago, past the hub's idempotency window, and not proven "
            f"on the hub{shown}: a re-send could make it twice, so a person must check",
        )
    moved = moved_since_authorized(pending, observed)
    if moved is not None:
        return ReconcileStep("stale", moved + shown)
    if pending.grant_id is not None:
        return _grant_step(pending, pending.grant_id, observed, now, grounds or Grounds())
    person = _person_of(pending)
    verdict = rule_write(_recorded_item(pending), observed, person, grounds=grounds)
    if verdict.stale:
        return ReconcileStep("stale", "the authority finds it stale: " + verdict.ruling.reason)
    if not verdict.allowed:
        return ReconcileStep("refused", "the authority denies it now: " + verdict.ruling.reason)
    authority: Authority = "sanctioned" if person is None else "person"
    return ReconcileStep("resend", verdict.ruling.reason, authority=authority)


def _landed_step(
    pending: PendingWrite,
    status_write: bool,
    observed: DomainSummary,
    events: Sequence[ProgressEvent],
    now: datetime,
) -> ReconcileStep | None:
    """Found on the hub, or a status write's probe: the status a task shows proves nothing
    (landed means proven), only the hub replaying the write's key does."""
    if status_write:
        return _status_probe(pending, observed, now)
    landed = landed_on_hub(pending, observed, events)
    if landed is None:
        return None
    return ReconcileStep("found", f"already on the hub as {landed}", hub_id=landed)


def _status_probe(
    pending: PendingWrite, observed: DomainSummary, now: datetime
) -> ReconcileStep | None:
    """Re-send a status write's key with the If-Match of the version it carried, once that
    version is gone: it can apply nothing, and only a replay of the key proves it landed."""
    version, why = probe_version(pending, observed, now)
    if version is None:
        return None
    reason = (
        f"{why}: its key is re-sent with If-Match {version}, which can apply nothing now; "
        "only the hub replaying the key proves it landed"
    )
    return ReconcileStep("probe", reason, authority=authority_of(pending), if_match=version)


def authority_of(pending: PendingWrite) -> Authority:
    """Who allowed a write: its dispatch table is the one a re-send or a probe goes through."""
    if pending.grant_id is not None:
        return "grant"
    return "person" if pending.approval is not None else "sanctioned"


def _shown(pending: PendingWrite, observed: DomainSummary, events: Sequence[ProgressEvent]) -> str:
    """What a reason adds when the task shows the status the write sets: that proves nothing."""
    if landed_on_hub(pending, observed, events) is None:
        return ""
    return " (the hub shows the status it sets, but a status alone proves nothing)"


def _grant_step(
    pending: PendingWrite, grant_id: str, observed: DomainSummary, now: datetime, g: Grounds
) -> ReconcileStep:
    """Re-send under the same grant (its use already counted), or close it with the reason."""
    use = UnderGrant(grant_id, counted=True)
    verdict = rule_write(_recorded_item(pending), observed, grounds=replace(g, now=now), use=use)
    if not verdict.allowed:
        return ReconcileStep(
            "refused", "the grant no longer allows it: " + _clause(verdict.ruling.reason)
        )
    return ReconcileStep("resend", verdict.ruling.reason, authority="grant")


def _clause(reason: str) -> str:
    """A denial's sentence without its item label (the reconcile report names the item)."""
    head, sep, rest = reason.partition(" is denied: ")
    return rest.rstrip(".") if sep and head.startswith("Item #") else reason


def _canon_step(pending: PendingWrite, canon_sha256: str | None) -> ReconcileStep:
    path = landed_canon(pending, canon_sha256)
    if path is not None:
        return ReconcileStep("found", f"the canon file {path} already has the approved content")
    return ReconcileStep(
        "refused",
        "the approved canon write did not land (the file does not hold its content); only its "
        "approval writes the canon, so a person approves the item again",
        authority="person",
    )


def moved_since_authorized(pending: PendingWrite, observed: DomainSummary) -> str | None:
    """Why a status write's task is no longer as its authorization saw it (None: it is)."""
    planned = pending.planned_on
    task_id = pending.params.get("task_id")
    if planned is None or not isinstance(task_id, str):
        return None
    task = _task(observed, task_id)
    if task is None:
        return f"task {task_id} is no longer in the domain"
    then = (planned.get("status"), planned.get("version"), planned.get("updated_at"))
    version_moved = then[1] is not None and task.version is not None and then[1] != task.version
    time_moved = then[2] is not None and parse_at(str(then[2])) != task.updated_at
    if then[0] == task.status and not version_moved and not time_moved:
        return None
    return (
        f"task {task_id} moved since the write was authorized: it was {then[0]} (version "
        f"{then[1]}), the hub now shows {task.status} (version {task.version}); the next plan "
        "decides"
    )


def _task(observed: DomainSummary, task_id: str) -> Task | None:
    return next((t for ws in observed.workstreams for t in ws.tasks if t.id == task_id), None)


def _recorded_item(pending: PendingWrite) -> ProposedItem:
    ruling = pending.ruling or RulingRecord()
    return as_item(
        str(ruling.operation), dict(ruling.params or {}), str(ruling.fingerprint), index=0
    )


def _person_of(pending: PendingWrite) -> PersonDecision | None:
    if pending.approval is None:
        return None
    ruling = pending.ruling or RulingRecord()
    return PersonDecision(
        approval_id=str(pending.approval.approval_id),
        by=str(pending.approval.by),
        decision=str(pending.approval.decision),
        precondition=dict(ruling.precondition or {}),
    )


def landed_on_hub(
    pending: PendingWrite,
    observed: DomainSummary,
    events: Sequence[ProgressEvent],
    *,
    canon_sha256: str | None = None,
) -> str | None:
    """The hub id (a canon write: the path) that shows the write already made; None: not found.

    Each operation's spec says how it is found (core/operations/): an event by its run mark, a
    status by the task's status, a flag by an open flag on the task, a create by a new item with
    its title (one that bore the title when it was proposed does not count), a resolve by the
    decision or flag no longer being open, a canon write by its file's hash. An operation
    Custodian does not know is an error (KeyError), never a silent "not found".
    """
    spec = operations.spec(pending.operation)
    ruling = pending.ruling or RulingRecord()
    before = (ruling.precondition or {}).get(SAME_TITLE) or []
    landing = operations.Landing(
        View.of(observed), tuple(events), pending.run_id, tuple(before), canon_sha256
    )
    return spec.landed(pending.params, landing)


def landed_canon(pending: PendingWrite, canon_sha256: str | None) -> str | None:
    """A canon write found done: the file's hash now is that of the approved content."""
    spec = operations.find(pending.operation)
    if spec is None or spec.writes != "canon":
        return None
    nothing = View("", {}, {}, {}, {}, frozenset())
    landing = operations.Landing(nothing, run_id=pending.run_id, canon_sha256=canon_sha256)
    return spec.landed(pending.params, landing)


def escalation(
    pending: PendingWrite, reason: str, observed: DomainSummary, grounds: Grounds | None = None
) -> WriteRuling | None:
    """The ruling on a flag for a person on the write's task (None: the write names no task).

    It is a write without a card like any other: the modes and budgets rule it as they rule a
    fresh plan's flag.
    """
    task = pending.params.get("task_id")
    if not isinstance(task, str):
        return None
    note = (
        f"Custodian could not confirm a {pending.operation} that run {pending.run_id} "
        f"authorized and may not resend it: {reason}. Check the task by hand."
    )[:1000]
    params = {"task_id": task, "note": note}
    flag = flag_for_human.SPEC.name
    item = as_item(flag, params, fingerprint(flag, params))
    return rule_write(item, observed, grounds=grounds)
