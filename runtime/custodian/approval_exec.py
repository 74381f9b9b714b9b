"""Carrying out an approved item: re-observe its target, refuse what cannot run, then execute.

Everything here runs after a person said yes; nothing here decides whether they may. What it does
decide is whether the item can be carried out at all: an operation Custodian cannot perform, params
that no longer fit the schema, or a canon path that leads outside the canon is refused before any
`authorized` record is written.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from datetime import UTC, datetime
from typing import Any

from custodian.act import send
from custodian.canon_write import current_sha256, resolve_inside, write_canon
from custodian.core.approvals import ApprovalItem
from custodian.core.authority import Ruling, precondition
from custodian.core.contract import Task
from custodian.core.outcomes import planned_on
from custodian.core.plan import ProposedItem
from custodian.core.plan_schema import normalize
from custodian.dispatch import APPROVED_CALLS
from custodian.embedded import embedded_hub
from custodian.errors import ApprovalError, ConfigError, CustodianError
from custodian.memory.run_journal import DiskJournal
from custodian.observe import read_summary
from custodian.settings import Settings
from custodian.statehub.client import StateHubClient


def attempt_run_id(item: ApprovalItem) -> str:
    """A fresh journal run id per attempt: a retried approval must not reuse an earlier one's.

    The idempotency key stays the item's, so a retry after a crash is replayed by the hub.
    """
    return f"approval-{item.id}-{secrets.token_hex(3)}"


def idempotency_key(item: ApprovalItem) -> str:
    """The hub key of an approved item: the same for every attempt to carry it out."""
    return f"custodian-approval-{item.fingerprint[:48]}"


def refusal(settings: Settings, item: ApprovalItem) -> str | None:
    """Why the item cannot be carried out as stored (None when it can)."""
    if item.operation != "write_canon" and item.operation not in APPROVED_CALLS:
        return (
            f"Custodian has no way to perform {item.operation!r}; reject the item "
            "(a person can make such a change by hand)"
        )
    try:
        normalize(item.operation, dict(item.params))
    except ValueError as exc:
        return f"its params do not fit {item.operation} ({exc}); reject it"
    if item.operation == "write_canon":
        try:
            resolve_inside(settings.canon_dir, str(item.params.get("path", "")))
        except ApprovalError as exc:
            return exc.message
    return None


@contextmanager
def hub_client(settings: Settings) -> Iterator[StateHubClient]:
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


def observe_precondition(settings: Settings, item: ApprovalItem) -> dict[str, Any]:
    """The target's state now, in the shape the item stored when it was proposed."""
    return observe_target(settings, item)[0]


def refuse_or_observe(
    settings: Settings, item: ApprovalItem
) -> tuple[str | None, dict[str, Any], Task | None]:
    """Why the item cannot run (refusal, or an unsafe canon path met while observing), else the
    precondition as observed now and the task a status write would be sent on."""
    refused = refusal(settings, item)
    if refused is not None:
        return refused, {}, None
    try:
        current, task = observe_target(settings, item)
    except ApprovalError as exc:  # a canon path made unsafe since the check above
        return exc.message, {}, None
    return None, current, task


def observe_target(settings: Settings, item: ApprovalItem) -> tuple[dict[str, Any], Task | None]:
    """The precondition as observed now, and the task a status write would be sent on."""
    if item.operation == "write_canon":
        path = str(item.params.get("path", ""))
        return {"file_sha256": current_sha256(settings.canon_dir, path, strict=True)}, None
    with hub_client(settings) as client:
        summary = read_summary(client, item.domain)
    proposed = ProposedItem(
        index=0,
        section="proposals",
        operation=item.operation,
        params=dict(item.params),
        reason=item.rationale,
        error=None,
        fingerprint=item.fingerprint,
    )
    ruling = Ruling(item=proposed, outcome="execute", reason="approved")
    return precondition(proposed, summary), planned_on(ruling, summary)


def execute(
    settings: Settings,
    item: ApprovalItem,
    by: str,
    journal: DiskJournal,
    run_id: str,
    observed_task: Task | None = None,
) -> dict[str, Any]:
    """authorized (by the person) -> dispatched -> receipt, failed or stale; the item's result.

    A status write is sent only on `observed_task`, the task as the approval observed it.
    """
    key = idempotency_key(item)
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
    with hub_client(settings) as client:
        sent = send(
            journal,
            client,
            index=0,
            operation=item.operation,
            params=params,
            run_id=run_id,
            key=key,
            observed_task=observed_task,
        )
    if sent.stale:
        return {"stale": sent.stale, "current_status": sent.current_status}
    return {"error": sent.error} if sent.error else {"hub_id": sent.hub_id}


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
