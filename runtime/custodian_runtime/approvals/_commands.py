"""`custodian approvals`: the person's side of the queue: list, show, approve, reject.

An approval goes through the same authority as a fresh plan: the core rules on the item as
stored against the domain observed now (`core.approval_verdicts`), and this module performs what
the verdict says: it journals the decision, its ruling and each write in the domain's journal,
under the domain's lock, and stores the item's new status.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TextIO

from custodian_runtime.approvals import _execute
from custodian_runtime.clock import utc_now
from custodian_runtime.core import approval_text
from custodian_runtime.core import approval_verdicts as verdicts
from custodian_runtime.core.approval_verdicts import Settlement
from custodian_runtime.core.approvals import ApprovalItem, listed_status
from custodian_runtime.core.inert import for_terminal_json
from custodian_runtime.core.journal import PendingWrite, unfinished_items
from custodian_runtime.core.journal_settle import open_attempt
from custodian_runtime.errors import ApprovalError
from custodian_runtime.memory.approvals import ApprovalStore
from custodian_runtime.memory.journal_store import JournalStore
from custodian_runtime.memory.lock import RunLock
from custodian_runtime.memory.run_journal import DiskJournal
from custodian_runtime.settings import Settings


@dataclass(frozen=True)
class ListRequest:
    """`approvals list`: the queue, of one domain or status if given."""

    domain: str | None = None
    status: str | None = None
    as_json: bool = False


@dataclass(frozen=True)
class ShowRequest:
    """`approvals show ID`."""

    approval_id: str
    as_json: bool = False


@dataclass(frozen=True)
class ApproveRequest:
    """`approvals approve ID --by NAME [--note TEXT]`."""

    approval_id: str
    by: str
    note: str | None = None


@dataclass(frozen=True)
class RejectRequest:
    """`approvals reject ID --by NAME --reason TEXT`."""

    approval_id: str
    by: str
    reason: str


ApprovalsRequest = ListRequest | ShowRequest | ApproveRequest | RejectRequest


@dataclass(frozen=True)
class Decision:
    """What deciding an item came to: its exit code and the one line the CLI prints."""

    approval_id: str
    exit_code: int
    message: str


def approvals_command(settings: Settings, request: ApprovalsRequest, out: TextIO) -> int:
    """Carry out `approvals list|show|approve|reject`."""
    store = ApprovalStore(settings.memory_dir, settings.seal_key)
    now = utc_now()
    if isinstance(request, ListRequest):
        return _list_items(store, now, request, out)
    if isinstance(request, ShowRequest):
        return _show_item(store, request.approval_id, now, request.as_json, out)
    if isinstance(request, RejectRequest):
        done = decide_reject(settings, store, request.approval_id, request.by, request.reason, now)
    else:
        done = decide_approve(settings, store, request.approval_id, request.by, request.note, now)
    out.write(done.message + "\n")
    return done.exit_code


def _listing(store: ApprovalStore, item: ApprovalItem, now: datetime) -> dict[str, Any]:
    data = item.model_dump(mode="json", exclude={"seal"})
    problem = store.seal_problem(item)
    data["status"] = listed_status(item, now, problem)
    if problem is not None:
        data["seal_problem"] = problem
    return data


def _list_items(store: ApprovalStore, now: datetime, request: ListRequest, out: TextIO) -> int:
    """Print the queue, pending first; `--json` prints a JSON array."""
    listed = [(i, _listing(store, i, now)) for i in store.all(request.domain, verify=False)]
    if request.status:
        listed = [(i, data) for i, data in listed if data["status"] == request.status]
    listed.sort(key=lambda pair: (pair[1]["status"] != "pending", pair[1]["created_at"]))
    if request.as_json:
        out.write(for_terminal_json([data for _, data in listed], indent=2) + "\n")
        return 0
    if not listed:
        out.write("no approval items\n")
    for item, data in listed:
        # Two inert lines per item whatever the params hold, each at most 100 columns.
        out.write("\n".join(approval_text.list_lines(item, data["status"], now)) + "\n")
    return 0


def _show_item(
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


def decide_reject(
    settings: Settings, store: ApprovalStore, approval_id: str, by: str, reason: str, now: datetime
) -> Decision:
    """Reject one item (never queued again); the CLI and the review page both call this."""
    with _deciding(settings, store, approval_id, now) as (item, journal, _, _):
        settled = verdicts.rejected(item, by, reason, now)
        _journal(journal, settled)
        _store(store, settled)
    return Decision(item.id, settled.exit_code, settled.message)


def decide_approve(
    settings: Settings,
    store: ApprovalStore,
    approval_id: str,
    by: str,
    note: str | None,
    now: datetime,
) -> Decision:
    """Approve one item: the core rules on it now, and only an allowed write is sent.

    The CLI and the review page both call this.
    """
    item = _pending(store, approval_id, now)
    hub = _execute.hub_here(settings) if _execute.needs_hub(item) else None
    here = _execute.here(settings, item, hub)
    elsewhere = verdicts.elsewhere(item, here, by, note)
    if elsewhere is not None:
        # Not decided: the item stays pending for its own hub or canon; nothing is journaled.
        return Decision(approval_id, elsewhere.exit_code, elsewhere.message)
    _execute.check_writable_canon(settings, item)
    with _deciding(settings, store, approval_id, now) as (item, journal, run_id, pending):
        # An earlier approval's write still open: a new authorization would be a second write.
        refusal = open_attempt(pending, item.domain, item.id)
        if refusal is not None:
            raise ApprovalError(refusal)
        seen = _execute.observe(settings, item)
        # The same ruling the review page previews (verdicts.on_approve), origin included.
        settled = verdicts.on_approve(item, here, by, note, seen, now)
        _journal(journal, settled)
        if settled.execute:
            outcome = _execute.execute(settings, item, by, journal, run_id, settled.task, hub)
            settled = verdicts.carried_out(item, by, note, outcome, now)
        _store(store, settled)
    return Decision(item.id, settled.exit_code, settled.message)


def _journal(journal: DiskJournal, settled: Settlement) -> None:
    """Append the records the core decided on (the decision, and its ruling if ruled)."""
    for kind, data in settled.records:
        journal.append(kind, data)


def _store(store: ApprovalStore, settled: Settlement) -> None:
    """Save the item with the status the core decided on."""
    if settled.stored is not None:
        store.save(settled.stored)


def _pending(store: ApprovalStore, approval_id: str, now: datetime) -> ApprovalItem:
    """The item, if it may be decided now (an expired one is stored as expired), else an error."""
    item = store.get(approval_id)
    gate = verdicts.gate(approval_id, item, now)
    if gate.stored is not None:
        store.save(gate.stored)
    if gate.refusal is not None:
        raise ApprovalError(gate.refusal)
    return item


@contextmanager
def _deciding(
    settings: Settings, store: ApprovalStore, approval_id: str, now: datetime
) -> Iterator[tuple[ApprovalItem, DiskJournal, str, list[PendingWrite]]]:
    """Hold the domain's lock; yield the item (still pending), this attempt's journal and run id,
    and the domain's open writes."""
    item = _pending(store, approval_id, now)
    run_id = _execute.new_attempt_run_id(item)
    with RunLock(settings.memory_dir, item.domain, run_id=run_id):
        item = _pending(store, approval_id, now)  # again under the lock: decided only once
        journals = JournalStore(settings.memory_dir, seal_key=settings.seal_key)
        # Opened from its checkpoint and tail (a torn tail is set aside before appending).
        opened = journals.open(item.domain)
        writer = journals.writer(item.domain, run_id, utc_now, opened)
        try:
            yield item, DiskJournal(writer), run_id, unfinished_items(opened.history)
        finally:
            with suppress(OSError):  # derived data: a failure costs the next run a full scan
                journals.commit(writer)
