"""Carrying out an approved item: observe what the ruling needs, then send the write.

This module observes and performs; it never decides. What to observe, whether the item may run
and what it came to are the core's (`core.approval_verdicts`, ruled by the one authority
`core.authority_path.rule_write`). An approved hub write goes out through run/act's one send
path (authorized -> dispatched -> receipt, failed or stale) and the approved dispatch table only.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from contextlib import contextmanager

from custodian_runtime.canon import current_sha256, resolve_inside, write_canon
from custodian_runtime.clock import new_nonce, utc_now
from custodian_runtime.core.approval_verdicts import Outcome, Seen, to_observe
from custodian_runtime.core.approvals import ApprovalItem
from custodian_runtime.core.contract import Task
from custodian_runtime.core.journal_trace import executed_params
from custodian_runtime.core.keys import approval_key, attempt_run_id
from custodian_runtime.errors import ApprovalError, ConfigError, CustodianError
from custodian_runtime.memory.run_journal import Journal
from custodian_runtime.run import APPROVED_CALLS, bound, read_summary, send
from custodian_runtime.settings import Settings
from custodian_runtime.statehub.client import StateHubClient
from custodian_runtime.statehub.connect import open_hub


def new_attempt_run_id(item: ApprovalItem) -> str:
    """A fresh journal run id for this attempt (its write gets a key of its own)."""
    return attempt_run_id(item.id, secrets.token_hex(3))


@contextmanager
def hub_client(settings: Settings) -> Iterator[StateHubClient]:
    """A client of the configured hub (`embedded`: the reference hub in this process)."""
    if settings.hub is None:
        raise ConfigError(
            "approving needs the state-hub: pass --hub URL (or --hub embedded) "
            "or set STATE_HUB_URL",
            setting="STATE_HUB_URL",
        )
    with open_hub(settings.hub, settings.embedded_dir, utc_now) as client:
        yield client


def observe(settings: Settings, item: ApprovalItem) -> Seen:
    """What the core asks to see before ruling: the domain on the hub now, or the canon file."""
    what = to_observe(item)
    if what == "nothing":
        return Seen()
    if what == "canon":
        return _canon_seen(settings, str(item.params["path"]))
    with hub_client(settings) as client:
        return Seen(summary=read_summary(client, item.domain))


def _canon_seen(settings: Settings, path: str) -> Seen:
    """The canon file's hash now, or why its path is unsafe (a symlink planted since)."""
    try:
        resolve_inside(settings.canon_dir, path)
        return Seen(canon_sha256=current_sha256(settings.canon_dir, path, strict=True))
    except ApprovalError as exc:
        return Seen(canon_problem=exc.message)


def execute(
    settings: Settings,
    item: ApprovalItem,
    by: str,
    journal: Journal,
    run_id: str,
    observed_task: Task | None = None,
) -> Outcome:
    """authorized (by the person) -> dispatched -> receipt, failed or stale; the item's result.

    A status write is sent only on `observed_task`, the task as the approval observed it. This
    authorization draws its own nonce, so its key is new even for an equal proposal.
    """
    nonce = new_nonce()
    key = approval_key(item.id, item.fingerprint, nonce)
    params = executed_params(item.operation, dict(item.params), item.domain)
    authorized = {"index": 0, "operation": item.operation, "params": params, "nonce": nonce}
    authorized |= {"fingerprint": item.fingerprint, "idempotency_key": key, "by": f"person:{by}"}
    journal.append("authorized", authorized | bound(settings))
    if item.operation == "write_canon":
        return _execute_canon(settings, item, key, journal)
    with hub_client(settings) as client:
        sent = send(
            journal,
            client,
            APPROVED_CALLS,
            index=0,
            operation=item.operation,
            params=params,
            run_id=run_id,
            key=key,
            observed_task=observed_task,
        )
    if sent.stale:
        return {"stale": sent.stale, "current_status": sent.current_status}
    if sent.unknown:
        return {"unknown": sent.unknown}
    return {"error": sent.error} if sent.error else {"hub_id": sent.hub_id}


def _execute_canon(settings: Settings, item: ApprovalItem, key: str, journal: Journal) -> Outcome:
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
