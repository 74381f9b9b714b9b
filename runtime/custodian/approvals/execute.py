"""Carrying out an approved item: refuse what cannot run, observe the domain, rule, execute.

An operation Custodian cannot perform, params that no longer fit the schema, or a canon path that
leads outside the canon is refused before anything else. Whether the item may run is then ruled by
the one authority (`core.authority_path.rule_write`) on the domain observed now, with the person's
decision as input; only then is an `authorized` record written.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from custodian.canon import current_sha256, resolve_inside, write_canon
from custodian.clock import utc_now
from custodian.core.approvals import ApprovalItem
from custodian.core.authority import approval_key, precondition
from custodian.core.authority_path import PersonDecision, Verdict, as_item, rule_write
from custodian.core.contract import DomainSummary, Task
from custodian.core.journal_trace import executed_params
from custodian.core.origin import origin_problem
from custodian.core.outcomes import planned_on
from custodian.core.plan_schema import normalize
from custodian.errors import ApprovalError, ConfigError, CustodianError
from custodian.memory.run_journal import DiskJournal
from custodian.run.act import send
from custodian.run.dispatch import APPROVED_CALLS
from custodian.run.observe import read_summary
from custodian.run.origin import bound, canon_identity, hub_identity
from custodian.settings import Settings
from custodian.statehub.client import StateHubClient
from custodian.statehub.connect import open_hub


def attempt_run_id(item: ApprovalItem) -> str:
    """A fresh journal run id per attempt: a retried approval must not reuse an earlier one's.

    The idempotency key stays the item's, so a retry after a crash is replayed by the hub.
    """
    return f"approval-{item.id}-{secrets.token_hex(3)}"


def idempotency_key(item: ApprovalItem) -> str:
    """The hub key of one approval: stable across its retries, new for every other approval.

    An equal proposal approved again later is a new write, so the key names the approval, not
    only the fingerprint (the hub would replay the first answer and change nothing).
    """
    return approval_key(item.id, item.fingerprint)


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


def origin_refusal(settings: Settings, item: ApprovalItem) -> str | None:
    """Why the item may not act here: it was proposed on another hub, or for another canon."""
    if item.operation == "write_canon":
        here = canon_identity(settings.canon_dir)
        return origin_problem("canon", item.canon, here, "Approve it with --canon")
    hub = hub_identity(settings)
    if hub is None:
        return None  # hub_client says how to configure one
    return origin_problem("hub", item.hub, hub, "Approve it with --hub")


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


@dataclass(frozen=True)
class Ruled:
    """The authority's verdict on an approved item, the target's state now, and its task."""

    verdict: Verdict
    current: dict[str, Any]
    task: Task | None


def refuse_or_rule(
    settings: Settings, item: ApprovalItem, by: str
) -> tuple[str | None, Ruled | None]:
    """Why the item cannot run at all (a refusal, or an unsafe canon path met while observing),
    else None and the authority's ruling on it."""
    refused = refusal(settings, item)
    if refused is not None:
        return refused, None
    try:
        return None, rule(settings, item, by)
    except ApprovalError as exc:  # a canon path made unsafe since the check above
        return exc.message, None


def rule(settings: Settings, item: ApprovalItem, by: str) -> Ruled:
    """The one authority's verdict on the item as stored, with the target's state now.

    The domain is observed now (a canon write reads its file instead): the ids must be of that
    domain, and the stored precondition must still hold. A status write is later sent only on
    the task as observed here.
    """
    proposed = as_item(item.operation, item.params, item.fingerprint, reason=item.rationale)
    current: dict[str, Any] | None = None
    if item.operation == "write_canon":
        path = str(item.params.get("path", ""))
        current = {"file_sha256": current_sha256(settings.canon_dir, path, strict=True)}
        summary = DomainSummary(domain=item.domain, generated_at=utc_now(), workstreams=())
    else:
        with hub_client(settings) as client:
            summary = read_summary(client, item.domain)
    person = PersonDecision(item.id, by, "approved", dict(item.precondition))
    verdict = rule_write(proposed, summary, person, current=current)
    now = current if current is not None else precondition(proposed, summary)
    return Ruled(verdict, now, planned_on(verdict.ruling, summary))


def ruling_record(item: ApprovalItem, verdict: Verdict) -> dict[str, Any]:
    """The approval run's `ruling`: the item as stored, the outcome and the reason."""
    return {
        "index": 0,
        "operation": item.operation,
        "target": verdict.ruling.item.target,
        "params": dict(item.params),
        "fingerprint": item.fingerprint,
        "outcome": verdict.ruling.outcome,
        "reason": verdict.ruling.reason,
        "approval_id": item.id,
        "precondition": dict(item.precondition),
    }


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
    params = executed_params(item.operation, dict(item.params), item.domain)
    journal.append(
        "authorized",
        {
            "index": 0,
            "operation": item.operation,
            "params": params,
            "fingerprint": item.fingerprint,
            "idempotency_key": key,
            "by": f"person:{by}",
            **bound(settings),
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
