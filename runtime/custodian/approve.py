"""`custodian approvals`: the person's side of the queue: list, show, approve, reject.

An approval executes only against the state it was proposed under: the target is observed again
and compared with the stored precondition; if they differ the item is marked stale and nothing
runs. Each decision and each write is journaled in the domain's journal.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from datetime import UTC, datetime
from typing import Any, TextIO

from custodian.act import DiskJournal, send
from custodian.canon_write import current_sha256, write_canon
from custodian.core.approvals import ApprovalItem, effective_status
from custodian.core.authority import precondition
from custodian.core.plan import ProposedItem
from custodian.embedded import embedded_hub
from custodian.errors import ApprovalError, ConfigError, CustodianError
from custodian.memory.approvals import ApprovalStore
from custodian.memory.journal_store import JournalStore
from custodian.memory.lock import RunLock
from custodian.settings import Settings
from custodian.statehub.client import StateHubClient

EXIT_STALE = 1


def approvals_command(settings: Settings, args: argparse.Namespace, out: TextIO) -> int:
    """Dispatch `approvals list|show|approve|reject`."""
    store = ApprovalStore(settings.memory_dir)
    now = datetime.now(UTC)
    command = args.approvals_command
    if command == "list":
        return list_items(store, now, args.domain, args.status, args.json, out)
    if command == "show":
        item = store.get(args.approval_id)
        out.write(json.dumps(_listing(item, now), indent=2, ensure_ascii=False) + "\n")
        return 0
    if command == "reject":
        return reject(settings, store, args.approval_id, args.by, args.reason, now, out)
    return approve(settings, store, args.approval_id, args.by, args.note, now, out)


def _listing(item: ApprovalItem, now: datetime) -> dict[str, Any]:
    data = item.model_dump(mode="json")
    data["status"] = effective_status(item, now)
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
    items = [_listing(i, now) for i in store.all(domain)]
    if status:
        items = [i for i in items if i["status"] == status]
    items.sort(key=lambda i: (i["status"] != "pending", i["created_at"]))
    if as_json:
        out.write(json.dumps(items, indent=2, ensure_ascii=False) + "\n")
        return 0
    if not items:
        out.write("no approval items\n")
    for i in items:
        out.write(
            f"{i['id']}  {i['status']:8}  {i['domain']:12}  {i['operation']:18}  "
            f"{_target(i['params'])}  (run {i['run_id']}, {i['created_at'][:16]})\n"
        )
    return 0


def _target(params: dict[str, Any]) -> str:
    for key in ("task_id", "decision_id", "flag_id", "workstream_id", "path", "title"):
        if key in params:
            return f"{key}={str(params[key])[:60]}"
    return "-"


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
    item = _pending(store, approval_id, now)
    with RunLock(settings.memory_dir, item.domain, run_id=f"approval-{item.id}"):
        journal = _journal(settings, item, now)
        journal.append("approval_decided", _decided(item, "rejected", by, reason))
        store.save(
            item.model_copy(
                update={
                    "status": "rejected",
                    "decided_at": now,
                    "decided_by": by,
                    "reject_reason": reason,
                }
            )
        )
    out.write(f"{item.id}: rejected by {by}\n")
    return 0


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


def _journal(settings: Settings, item: ApprovalItem, now: datetime) -> DiskJournal:
    store = JournalStore(settings.memory_dir)
    store.read(item.domain)  # sets a torn tail aside before appending
    return DiskJournal(store.writer(item.domain, f"approval-{item.id}", lambda: datetime.now(UTC)))


def _decided(item: ApprovalItem, decision: str, by: str, reason: str | None) -> dict[str, Any]:
    return {"approval_id": item.id, "decision": decision, "by": by, "reason": reason}


def approve(
    settings: Settings,
    store: ApprovalStore,
    approval_id: str,
    by: str,
    note: str | None,
    now: datetime,
    out: TextIO,
) -> int:
    """Re-observe the target; execute only if the precondition still holds."""
    item = _pending(store, approval_id, now)
    with RunLock(settings.memory_dir, item.domain, run_id=f"approval-{item.id}"):
        journal = _journal(settings, item, now)
        current = _observe_precondition(settings, item)
        if current != item.precondition:
            journal.append(
                "approval_decided",
                _decided(
                    item,
                    "stale",
                    by,
                    f"state changed: proposed under {item.precondition}, now {current}",
                ),
            )
            store.save(
                item.model_copy(
                    update={
                        "status": "stale",
                        "decided_at": now,
                        "decided_by": by,
                        "decision_note": note,
                        "result": {"proposed_under": item.precondition, "now": current},
                    }
                )
            )
            out.write(f"{item.id}: stale: the target changed since it was proposed; nothing ran\n")
            return EXIT_STALE
        journal.append("approval_decided", _decided(item, "approved", by, note))
        outcome = _execute(settings, item, by, journal)
        status = "failed" if "error" in outcome else "executed"
        store.save(
            item.model_copy(
                update={
                    "status": status,
                    "decided_at": now,
                    "decided_by": by,
                    "decision_note": note,
                    "result": outcome,
                }
            )
        )
    out.write(f"{item.id}: {status} ({json.dumps(outcome)})\n")
    return 0 if status == "executed" else 5


@contextmanager
def _client(settings: Settings) -> Iterator[StateHubClient]:
    """A client of the configured hub; `embedded` starts the local reference hub for the call."""
    if settings.hub is None:
        raise ConfigError(
            "approving needs the state-hub: pass --hub URL (or --hub embedded) "
            "or set STATE_HUB_URL",
            setting="STATE_HUB_URL",
        )
    hub = settings.hub
    with ExitStack() as stack:
        url = hub.url
        if hub.embedded:
            url = stack.enter_context(
                embedded_hub(settings.embedded_dir, lambda: datetime.now(UTC))
            )
        client = stack.enter_context(
            StateHubClient(
                url,
                token=hub.token,
                timeout_s=hub.timeout_s,
                max_attempts=hub.max_attempts,
                max_total_s=hub.max_total_s,
            )
        )
        yield client


def _observe_precondition(settings: Settings, item: ApprovalItem) -> dict[str, Any]:
    if item.operation == "write_canon":
        return {"file_sha256": current_sha256(settings.canon_dir, str(item.params.get("path", "")))}
    with _client(settings) as client:
        summary = client.domain_summary(item.domain)
    proposed = ProposedItem(
        index=0,
        section="proposals",
        operation=item.operation,
        params=dict(item.params),
        reason=item.rationale,
        error=None,
        fingerprint=item.fingerprint,
    )
    return precondition(proposed, summary)


def _execute(
    settings: Settings, item: ApprovalItem, by: str, journal: DiskJournal
) -> dict[str, Any]:
    key = f"custodian-approval-{item.fingerprint[:48]}"
    params = dict(item.params)
    if item.operation == "record_decision":
        params["domain"] = item.domain
    journal.append(
        "authorized",
        {
            "index": 0,
            "operation": item.operation,
            "params": params,
            "fingerprint": item.fingerprint,
            "idempotency_key": key,
            "by": f"person:{by}",
        },
    )
    if item.operation == "write_canon":
        return _execute_canon(settings, item, key, journal)
    with _client(settings) as client:
        hub_id, error = send(
            journal,
            client,
            index=0,
            operation=item.operation,
            params=params,
            run_id=f"approval-{item.id}",
            key=key,
        )
    return {"error": error} if error else {"hub_id": hub_id}


def _execute_canon(
    settings: Settings, item: ApprovalItem, key: str, journal: DiskJournal
) -> dict[str, Any]:
    journal.append("dispatched", {"index": 0, "idempotency_key": key})
    try:
        path, sha = write_canon(
            settings.canon_dir, str(item.params["path"]), str(item.params["content"])
        )
    except (CustodianError, OSError) as exc:
        journal.append("failed", {"index": 0, "error": str(exc), "status": None, "code": None})
        return {"error": str(exc)}
    journal.append(
        "receipt",
        {
            "index": 0,
            "status_code": None,
            "hub_id": None,
            "replayed": False,
            "response_sha256": sha,
            "attempts": 1,
            "path": item.params["path"],
        },
    )
    return {"path": str(item.params["path"]), "sha256": sha, "file": path.name}
