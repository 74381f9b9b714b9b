"""`custodian approvals`: the person's side of the queue: list, show, approve, reject.

An approval goes through the same authority as a fresh plan (core/authority_path.py): the stored
fingerprint is re-derived from the params, the ids must be of the item's domain as observed now,
and the stored precondition must be non-empty (create_workstream and write_canon have no target)
and still hold. A target that moved makes the item stale; an item edited after it was queued is
refused and failed. Each decision, its ruling and each write are journaled in the domain's journal.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TextIO

from custodian.approvals import execute as approval_exec
from custodian.clock import utc_now
from custodian.core import approval_text
from custodian.core.approvals import ApprovalItem, effective_status
from custodian.core.inert import for_terminal, for_terminal_json
from custodian.errors import ApprovalError
from custodian.memory.approvals import ApprovalStore
from custodian.memory.journal_store import JournalStore
from custodian.memory.lock import RunLock
from custodian.memory.run_journal import DiskJournal
from custodian.settings import Settings

EXIT_STALE = 1
EXIT_REFUSED = ApprovalError.exit_code
EXIT_FAILED = 5


@dataclass(frozen=True)
class Decision:
    """What deciding an item came to: its exit code and the one line the CLI prints."""

    approval_id: str
    exit_code: int
    message: str


def approvals_command(settings: Settings, args: argparse.Namespace, out: TextIO) -> int:
    """Dispatch `approvals list|show|approve|reject`."""
    store = ApprovalStore(settings.memory_dir, settings.seal_key)
    now = utc_now()
    command = args.approvals_command
    if command == "list":
        return list_items(store, now, args.domain, args.status, args.json, out)
    if command == "show":
        return show_item(store, args.approval_id, now, getattr(args, "json", False), out)
    if command == "reject":
        return reject(settings, store, args.approval_id, args.by, args.reason, now, out)
    return approve(settings, store, args.approval_id, args.by, args.note, now, out)


def _listing(store: ApprovalStore, item: ApprovalItem, now: datetime) -> dict[str, Any]:
    data = item.model_dump(mode="json", exclude={"seal"})
    data["status"] = effective_status(item, now)
    problem = store.seal_problem(item)
    if problem is not None:
        # With a seal key, an item whose seal fails is listed as such and can never be decided.
        data["status"] = "unsealed" if item.seal is None else "bad-seal"
        data["seal_problem"] = problem
    return data


def list_items(
    store: ApprovalStore,
    now: datetime,
    domain: str | None,
    status: str | None,
    as_json: bool,
    out: TextIO,
) -> int:
    """Print the queue, pending first; `--json` prints a JSON array."""
    listed = [(i, _listing(store, i, now)) for i in store.all(domain, verify=False)]
    if status:
        listed = [(i, data) for i, data in listed if data["status"] == status]
    listed.sort(key=lambda pair: (pair[1]["status"] != "pending", pair[1]["created_at"]))
    if as_json:
        out.write(for_terminal_json([data for _, data in listed], indent=2) + "\n")
        return 0
    if not listed:
        out.write("no approval items\n")
    for item, data in listed:
        # Two inert lines per item whatever the params hold, each at most 100 columns.
        out.write("\n".join(approval_text.list_lines(item, data["status"], now)) + "\n")
    return 0


def show_item(
    store: ApprovalStore, approval_id: str, now: datetime, as_json: bool, out: TextIO
) -> int:
    """Print one item: every field labelled, or with `--json` the item as stored."""
    item = store.get(approval_id, verify=False)
    listing = _listing(store, item, now)
    if as_json:
        out.write(for_terminal_json(listing, indent=2) + "\n")
        return 0
    out.write(approval_text.show_text(item, listing["status"], now, listing.get("seal_problem")))
    return 0


def reject(
    settings: Settings,
    store: ApprovalStore,
    approval_id: str,
    by: str,
    reason: str,
    now: datetime,
    out: TextIO,
) -> int:
    """Mark the item rejected; its fingerprint is never queued again."""
    return _printed(decide_reject(settings, store, approval_id, by, reason, now), out)


def decide_reject(
    settings: Settings, store: ApprovalStore, approval_id: str, by: str, reason: str, now: datetime
) -> Decision:
    """`reject` without printing: the CLI and the review page both call this."""
    with _deciding(settings, store, approval_id, now) as (item, journal, _):
        journal.append("approval_decided", _decided(item, "rejected", by, reason))
        _save(store, item, "rejected", now, by, reject_reason=reason)
    return Decision(item.id, 0, for_terminal(f"{item.id}: rejected by {by}"))


def _printed(decision: Decision, out: TextIO) -> int:
    out.write(decision.message + "\n")
    return decision.exit_code


def _pending(store: ApprovalStore, approval_id: str, now: datetime) -> ApprovalItem:
    item = store.get(approval_id)
    status = effective_status(item, now)
    if status == "expired" and item.status == "pending":
        store.save(item.model_copy(update={"status": "expired", "decided_at": now}))
    if status != "pending":
        raise ApprovalError(
            f"{approval_id} is {status}, not pending: only pending items can be decided"
        )
    return item


@contextmanager
def _deciding(
    settings: Settings, store: ApprovalStore, approval_id: str, now: datetime
) -> Iterator[tuple[ApprovalItem, DiskJournal, str]]:
    """Hold the domain's lock, and yield the item (still pending) and this attempt's journal."""
    item = _pending(store, approval_id, now)
    run_id = approval_exec.attempt_run_id(item)
    with RunLock(settings.memory_dir, item.domain, run_id=run_id):
        item = _pending(store, approval_id, now)  # again under the lock: decided only once
        journals = JournalStore(settings.memory_dir, seal_key=settings.seal_key)
        # Opened from its checkpoint and tail (a torn tail is set aside before appending).
        writer = journals.writer(item.domain, run_id, utc_now)
        try:
            yield item, DiskJournal(writer), run_id
        finally:
            with suppress(OSError):  # derived data: a failure costs the next run a full scan
                journals.commit(writer)


def _decided(item: ApprovalItem, decision: str, by: str, reason: str | None) -> dict[str, Any]:
    return {"approval_id": item.id, "decision": decision, "by": by, "reason": reason}


def _save(
    store: ApprovalStore, item: ApprovalItem, status: str, now: datetime, by: str, **fields: Any
) -> None:
    store.save(
        item.model_copy(update={"status": status, "decided_at": now, "decided_by": by, **fields})
    )


def approve(
    settings: Settings,
    store: ApprovalStore,
    approval_id: str,
    by: str,
    note: str | None,
    now: datetime,
    out: TextIO,
) -> int:
    """Refuse what cannot run, rule on the item through the authority, execute only if allowed."""
    return _printed(decide_approve(settings, store, approval_id, by, note, now), out)


def decide_approve(
    settings: Settings,
    store: ApprovalStore,
    approval_id: str,
    by: str,
    note: str | None,
    now: datetime,
) -> Decision:
    """`approve` without printing: the CLI and the review page both call this."""
    elsewhere = approval_exec.origin_refusal(settings, _pending(store, approval_id, now))
    if elsewhere is not None:
        # Not decided: the item stays pending for its own hub or canon; nothing is journaled.
        message = for_terminal(f"{approval_id}: refused: {elsewhere}")
        return Decision(approval_id, EXIT_REFUSED, message)
    with _deciding(settings, store, approval_id, now) as (item, journal, run_id):
        refused, ruled = approval_exec.refuse_or_rule(settings, item, by)
        if refused is not None or ruled is None:
            refused = refused or "it could not be ruled on"
            journal.append("approval_decided", _decided(item, "refused", by, refused))
            _save(store, item, "failed", now, by, decision_note=note, result={"error": refused})
            message = for_terminal(f"{item.id}: refused before anything ran: {refused}")
            return Decision(item.id, EXIT_REFUSED, message)
        if not ruled.verdict.allowed:
            return _not_allowed(store, item, ruled, journal, now, by, note)
        journal.append("approval_decided", _decided(item, "approved", by, note))
        journal.append("ruling", approval_exec.ruling_record(item, ruled.verdict))
        outcome = approval_exec.execute(settings, item, by, journal, run_id, ruled.task)
        status = "stale" if "stale" in outcome else "failed" if "error" in outcome else "executed"
        _save(store, item, status, now, by, decision_note=note, result=outcome)
    code = {"executed": 0, "stale": EXIT_STALE}.get(status, EXIT_FAILED)
    return Decision(item.id, code, for_terminal(f"{item.id}: {status} ({json.dumps(outcome)})"))


def _not_allowed(
    store: ApprovalStore,
    item: ApprovalItem,
    ruled: approval_exec.Ruled,
    journal: DiskJournal,
    now: datetime,
    by: str,
    note: str | None,
) -> Decision:
    """Journal and save an item the authority will not carry out; nothing reaches the hub."""
    verdict = ruled.verdict
    reason = verdict.ruling.reason
    decision = "stale" if verdict.stale else "refused"
    journal.append("approval_decided", _decided(item, decision, by, reason))
    journal.append("ruling", approval_exec.ruling_record(item, verdict))
    if verdict.stale:
        result = {"proposed_under": item.precondition, "now": ruled.current}
        _save(store, item, "stale", now, by, decision_note=note, result=result)
        message = f"{item.id}: stale: the target changed since it was proposed; nothing ran"
        return Decision(item.id, EXIT_STALE, message)
    _save(store, item, "failed", now, by, decision_note=note, result={"error": reason})
    return Decision(
        item.id, EXIT_REFUSED, for_terminal(f"{item.id}: refused, nothing ran: {reason}")
    )
