"""What deciding a queued item comes to: every verdict on an approval, from what was observed.

The shell observes (the item as stored, the hub and canon configured here, the domain or the
canon file now), calls one of these functions, and performs what it returns: the records to
journal, the item to store, whether to send the write, the exit code and the line to print.
Whether the write may run is ruled by the one authority (`ruling.path.rule_write`), as for a
fresh plan and the reconcile of a killed run.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Literal, TypedDict

from custodian_runtime.core.approvals.decider import BySource
from custodian_runtime.core.approvals.items import ApprovalItem, ApprovalStatus, effective_status
from custodian_runtime.core.authority.budgets import recent_writes
from custodian_runtime.core.authority.origin import (
    HUB_ID_PREFIX,
    DecisionSite,
    approve_command,
    hub_problem,
    origin_problem,
)
from custodian_runtime.core.authority.own_writes import OwnWrite
from custodian_runtime.core.authority.precondition import canon_target, proposed_under, writes_canon
from custodian_runtime.core.contract import DomainSummary, Task
from custodian_runtime.core.inert import for_terminal
from custodian_runtime.core.journal.kinds import ApprovalDecided, RulingRecord, encode
from custodian_runtime.core.limits import Limits
from custodian_runtime.core.operations import all_specs, normalize
from custodian_runtime.core.outcomes import planned_on
from custodian_runtime.core.ruling.path import (
    Grounds,
    PersonDecision,
    WriteRuling,
    as_item,
    rule_write,
)
from custodian_runtime.core.standing.modes import ModeSetting
from custodian_runtime.core.standing.record import Standing
from custodian_runtime.errors import ApprovalError

EXIT_EXECUTED = 0
EXIT_STALE = 1
EXIT_REFUSED = ApprovalError.exit_code
EXIT_FAILED = 5

JournalEntry = tuple[str, dict[str, Any]]
Observe = Literal["hub", "canon", "nothing"]


class SendResult(TypedDict, total=False):
    """What sending an approved write came to, kept as the item's `result`."""

    hub_id: str | None
    error: str
    stale: str
    # No answer came: the write stays open in the journal until a run or a person settles it.
    unknown: str
    current_status: str | None
    # A canon write: the path written, the content's hash and the file's name, and the file's
    # text before it ("" for a new file; left out when too long to keep): what changed.
    path: str
    sha256: str
    file: str
    before: str


@dataclass(frozen=True)
class Verdict:
    """What one decision comes to: journal `records`, store `stored`, send if `execute`."""

    exit_code: int
    message: str
    records: tuple[JournalEntry, ...] = ()
    stored: ApprovalItem | None = None
    execute: bool = False
    # The task as the approval observed it: a status write is sent only on it.
    task: Task | None = None


@dataclass(frozen=True)
class Gate:
    """Whether an item may be decided now; an expired item is stored as expired either way."""

    refusal: str | None
    stored: ApprovalItem | None = None


@dataclass(frozen=True)
class ObservedNow:
    """What the shell observed for a ruling: the domain now, or the canon file now; and the
    grounds a fresh plan is ruled from besides it: the caps and Custodian's recent writes."""

    summary: DomainSummary | None = None
    canon_sha256: str | None = None
    # Why the canon path is unsafe, met while reading the file (a symlink planted since).
    canon_problem: str | None = None
    limits: Limits | None = None
    # Custodian's own (and approved) writes in the domain, from the journal's checkpoint.
    writes: tuple[OwnWrite, ...] = ()
    # A person's modes and grants in the domain now, kept decisions included.
    standing: Standing = field(default_factory=Standing)


def gate(approval_id: str, item: ApprovalItem, now: datetime) -> Gate:
    """Only a pending item can be decided; one past its expiry is stored as expired."""
    status = effective_status(item, now)
    stored = None
    if status == "expired" and item.status == "pending":
        stored = item.model_copy(update={"status": "expired", "decided_at": now})
    if status != "pending":
        refusal = f"{approval_id} is {status}, not pending: only pending items can be decided"
        return Gate(refusal, stored)
    return Gate(None)


def foreign_refusal(item: ApprovalItem, site: DecisionSite, note: str | None) -> Verdict | None:
    """Refused, undecided and unjournaled, when the item was proposed on another hub or canon.

    `site` is where this decision is made (core/authority/origin.py): a hub is the same hub when it
    has the same hub_id, or, for an item bound by URL, the same URL. Without a hub the check is left
    to the client, which says how to configure one. The refusal names a command that decides
    the item where it belongs, and runs as printed.
    """
    if writes_canon(item.operation):
        command = approve_command(item.id, note, site.memory, canon=item.canon)
        fix = f"Approve it with the canon it was proposed for: {command}"
        problem = origin_problem("canon", item.canon, site.canon, fix)
    elif site.hub is None:
        return None
    else:
        problem = hub_problem(item.hub, site.hub, _hub_fix(item, note, site.memory))
    if problem is None:
        return None
    return Verdict(EXIT_REFUSED, for_terminal(f"{item.id}: refused: {problem}"))


def _hub_fix(item: ApprovalItem, note: str | None, memory: str) -> str:
    """How to decide the item on its own hub: a command when it is known where that hub was."""
    hub_at = item.hub_at
    if hub_at is None and item.hub is not None and not item.hub.startswith(HUB_ID_PREFIX):
        hub_at = item.hub  # bound by URL: the URL is where it was
    if hub_at is None:
        return "Approve it where that hub is configured."
    command = approve_command(item.id, note, memory, hub_at=hub_at)
    return f"Approve it on that hub: {command}"


def on_approve(
    item: ApprovalItem,
    site: DecisionSite,
    by: str,
    note: str | None,
    seen: ObservedNow,
    now: datetime,
) -> Verdict:
    """Every ruling of an approve, in order: the item's origin, then the one authority on what
    was seen. `approvals approve` performs it; the review page's preview shows it."""
    refused = foreign_refusal(item, site, note)
    return refused if refused is not None else approved(item, by, note, seen, now)


def approved_operations() -> frozenset[str]:
    """What an approval can carry out: every operation a person may send (a sanctioned one queued
    by the authority or a person's `ask` mode among them), canon writes included."""
    return frozenset(s.name for s in all_specs() if s.person_sends)


def stored_refusal(item: ApprovalItem) -> str | None:
    """Why the item cannot be carried out as stored, before anything is observed (None: it can)."""
    if item.operation not in approved_operations():
        return (
            f"Custodian has no way to perform {item.operation!r}; reject the item "
            "(a person can make such a change by hand)"
        )
    try:
        normalize(item.operation, dict(item.params))
    except ValueError as exc:
        return f"its params do not fit {item.operation} ({exc}); reject it"
    return None


def to_observe(item: ApprovalItem) -> Observe:
    """What the shell reads before the ruling: the domain on the hub, the canon file, or nothing
    (the item is refused as stored)."""
    if stored_refusal(item) is not None:
        return "nothing"
    return "canon" if canon_target(item.operation, item.params) is not None else "hub"


def rejected(item: ApprovalItem, by: str, reason: str, now: datetime) -> Verdict:
    """A person rejects the item: its fingerprint is never queued again."""
    stored = _decided_item(item, "rejected", now, by, reject_reason=reason)
    records = (_decided(item, "rejected", by, reason),)
    return Verdict(0, for_terminal(f"{item.id}: rejected by {by}"), records, stored)


def approved(
    item: ApprovalItem,
    by: str,
    note: str | None,
    seen: ObservedNow,
    now: datetime,
) -> Verdict:
    """Refused, stale, or sent: the one authority rules on the item against what was seen now.

    It rules from the grounds a fresh plan has (`seen.limits`, `seen.writes`, the person's
    `seen.standing`); the person's decision is this approval itself. While its operation is
    `off` or `shadow` nothing is decided: the item stays pending (`held`).
    """
    refusal = stored_refusal(item) or seen.canon_problem
    canon = canon_target(item.operation, item.params) is not None
    if refusal is None and seen.summary is None and not canon:
        refusal = "it could not be ruled on"
    if refusal is not None:
        return _refused_before(item, by, note, refusal, now)
    summary = seen.summary or DomainSummary(domain=item.domain, generated_at=now, workstreams=())
    proposed = as_item(item.operation, item.params, item.fingerprint, reason=item.rationale)
    person = PersonDecision(item.id, by, "approved", dict(item.precondition))
    rules = seen.limits or Limits()
    recent = recent_writes(rules, seen.writes, now)
    grounds = Grounds(limits=rules, recent=recent, standing=seen.standing, now=now)
    verdict = rule_write(proposed, summary, person, canon_sha256=seen.canon_sha256, grounds=grounds)
    if verdict.paused is not None:
        return paused(item, verdict.paused)
    if not verdict.allowed:
        current = proposed_under(proposed, summary, seen.canon_sha256)
        return _not_allowed(item, by, note, verdict, current, now)
    records = (_decided(item, "approved", by, note), encode(ruling_record(item, verdict)))
    task = planned_on(verdict.ruling, summary)
    return Verdict(EXIT_EXECUTED, "", records, execute=True, task=task)


def paused(item: ApprovalItem, setting: ModeSetting) -> Verdict:
    """Refused, undecided and unjournaled: a person set the item's operation to `off` or
    `shadow`, so nothing of it is written; the item stays pending for when the mode changes."""
    op = item.operation
    message = (
        f"{item.id}: refused, still pending: {op} is {setting.mode}, set by {setting.by} at "
        f"{setting.at:%Y-%m-%d %H:%M} UTC ({setting.reason}); nothing of {op} is written while "
        f"it is {setting.mode}, a person's approval included. Approve it again once a person "
        f"sets it back: custodian policy set --domain {item.domain} --operation {op} --mode ask "
        "--reason TEXT"
    )
    return Verdict(EXIT_REFUSED, for_terminal(message))


def carried_out(
    item: ApprovalItem, by: str, note: str | None, outcome: SendResult, now: datetime
) -> Verdict:
    """What sending the approved write came to: executed, stale (the task moved), unknown (no
    answer came) or failed."""
    status = _carried_status(outcome)
    stored = _decided_item(item, status, now, by, decision_note=note, result=dict(outcome))
    code = {"executed": EXIT_EXECUTED, "stale": EXIT_STALE}.get(status, EXIT_FAILED)
    # The status only: the shell says it as a sentence (core/presentation `fate`), and the
    # result stays on the item, for `show` and `--json`.
    message = for_terminal(f"{item.id}: {status}")
    return Verdict(code, message, stored=stored)


def _carried_status(outcome: SendResult) -> ApprovalStatus:
    if "stale" in outcome:
        return "stale"
    if "unknown" in outcome:
        return "unknown"
    return "failed" if "error" in outcome else "executed"


def ruling_record(item: ApprovalItem, verdict: WriteRuling) -> RulingRecord:
    """The approval run's `ruling`: the item as stored, the outcome and the reason."""
    return RulingRecord(
        index=0,
        operation=item.operation,
        target=verdict.ruling.item.target,
        params=dict(item.params),
        fingerprint=item.fingerprint,
        outcome=verdict.ruling.outcome,
        reason=verdict.ruling.reason,
        approval_id=item.id,
        precondition=dict(item.precondition),
    )


def _refused_before(
    item: ApprovalItem, by: str, note: str | None, refusal: str, now: datetime
) -> Verdict:
    stored = _decided_item(item, "failed", now, by, decision_note=note, result={"error": refusal})
    message = for_terminal(f"{item.id}: refused before anything ran: {refusal}")
    return Verdict(EXIT_REFUSED, message, (_decided(item, "refused", by, refusal),), stored)


def _not_allowed(
    item: ApprovalItem,
    by: str,
    note: str | None,
    verdict: WriteRuling,
    current: dict[str, Any],
    now: datetime,
) -> Verdict:
    """Stale (only the target moved) or refused by the authority; nothing reaches the hub."""
    reason = verdict.ruling.reason
    decision = "stale" if verdict.stale else "refused"
    records = (_decided(item, decision, by, reason), encode(ruling_record(item, verdict)))
    if verdict.stale:
        result = {"proposed_under": item.precondition, "now": current}
        stored = _decided_item(item, "stale", now, by, decision_note=note, result=result)
        message = f"{item.id}: stale: the target changed since it was proposed; nothing ran"
        return Verdict(EXIT_STALE, message, records, stored)
    stored = _decided_item(item, "failed", now, by, decision_note=note, result={"error": reason})
    message = for_terminal(f"{item.id}: refused, nothing ran: {reason}")
    return Verdict(EXIT_REFUSED, message, records, stored)


def word_closed(item: ApprovalItem, by: str, why: str) -> Verdict:
    """A kept approve its own refusal closes (a mode holds the item, the ruling refuses it): the
    word is journaled as `closed` with the reason; the item stays as it was (pending)."""
    return Verdict(EXIT_REFUSED, why, records=(_decided(item, "closed", by, why),))


def _decided(item: ApprovalItem, decision: str, by: str, reason: str | None) -> JournalEntry:
    return encode(ApprovalDecided(approval_id=item.id, decision=decision, by=by, reason=reason))


def _decided_item(
    item: ApprovalItem, status: ApprovalStatus, now: datetime, by: str, **fields: Any
) -> ApprovalItem:
    update = {"status": status, "decided_at": now, "decided_by": by, **fields}
    return item.model_copy(update=update)


def sourced(verdict: Verdict, source: BySource) -> Verdict:
    """The verdict whose decision records say where the decider's name came from."""
    records = tuple(
        (kind, {**data, "by_source": source}) if kind == ApprovalDecided.KIND else (kind, data)
        for kind, data in verdict.records
    )
    return replace(verdict, records=records)
