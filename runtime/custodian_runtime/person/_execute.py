"""Carrying out an approved item: observe what the ruling needs, then send the write.

This module observes and performs; it never decides. What to observe, whether the item may run
and what it came to are the core's (`core.person.verdicts`, ruled by the one authority
`core.ruling.path.rule_write`). An approved hub write goes out through the one send
path (authorized -> dispatched -> receipt, failed or stale) and the approved dispatch table only.
"""

from __future__ import annotations

import secrets
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace

from custodian_runtime.canon import (
    current_sha256,
    read_canon,
    readonly_reason,
    resolve_inside,
    write_canon,
)
from custodian_runtime.clock import new_nonce, utc_now
from custodian_runtime.core.approvals.items import ApprovalItem
from custodian_runtime.core.authority.origin import DecisionSite, HubOrigin
from custodian_runtime.core.authority.own_writes import OwnWrite
from custodian_runtime.core.authority.precondition import canon_target, writes_canon
from custodian_runtime.core.contract import DomainSummary, Task
from custodian_runtime.core.fold.api import Record
from custodian_runtime.core.journal.keys import approval_key, attempt_run_id
from custodian_runtime.core.journal.kinds import Authorized, Dispatched, Failed, Receipt
from custodian_runtime.core.operations.schema import MAX_CANON_CHARS
from custodian_runtime.core.person.verdicts import ObservedNow, SendResult, to_observe
from custodian_runtime.core.ruling.trace import executed_params
from custodian_runtime.core.standing.record import standing_of
from custodian_runtime.errors import ApprovalError, ConfigError, CustodianError
from custodian_runtime.journal.person.standing_store import StandingStore
from custodian_runtime.journal.run_journal import Journal
from custodian_runtime.journal.store import JournalStore
from custodian_runtime.packaged import PACKAGED
from custodian_runtime.settings import Settings
from custodian_runtime.statehub.client import StateHubClient
from custodian_runtime.statehub.connect import embedded_db, open_hub
from custodian_runtime.writes import (
    APPROVED_CALLS,
    bound,
    canon_identity,
    hub_location,
    read_summary,
    send,
    task_state,
)


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


def check_writable_canon(settings: Settings, item: ApprovalItem) -> None:
    """A canon write never goes into the packaged canon: ConfigError, the item stays pending."""
    if settings.canon_source == PACKAGED and canon_target(item.operation, item.params):
        raise ConfigError(
            f"{item.id} writes to the canon, and the canon in use is the packaged default, which "
            "is never changed: reject it, copy the canon with `custodian init DIR`, and point "
            "--canon (or CUSTODIAN_CANON_DIR) at the copy for future runs",
            setting="CUSTODIAN_CANON_DIR",
        )


def configured_hub(settings: Settings) -> HubOrigin | None:
    """The configured hub's identity, from GET /health (v1.2); None without a hub. An embedded
    hub not made yet is named by its database and not made by asking. A v1.1 hub is named by
    its URL, and stderr says so."""
    location = hub_location(settings)
    if settings.hub is None or location is None:
        return None
    if settings.hub.embedded and not embedded_db(settings.embedded_dir).exists():
        return HubOrigin(None, location)
    with hub_client(settings) as client:
        origin = client.hub_origin(location)
    notice = origin.notice()
    if notice is not None:
        sys.stderr.write(f"custodian: hub: {notice}\n")
    return origin


def needs_hub(item: ApprovalItem) -> bool:
    """True when deciding the item asks which hub is configured (every hub write)."""
    return not writes_canon(item.operation)


def decision_site(settings: Settings, item: ApprovalItem, hub: HubOrigin | None) -> DecisionSite:
    """Where the item would be decided: the hub (only a hub write needs it), canon, memory."""
    canon, memory = canon_identity(settings.canon_dir), str(settings.memory_dir)
    return DecisionSite(hub if needs_hub(item) else None, canon, memory)


def seen_for(
    settings: Settings,
    item: ApprovalItem,
    summary: DomainSummary | None,
    writes: Sequence[OwnWrite] | None = None,
    history: Sequence[Record] | None = None,
) -> ObservedNow:
    """What the ruling sees: the domain `summary` read now, or the canon file now, with the
    caps, Custodian's recent writes in the domain (`writes`) and a person's standing there
    (from the journal's `history`, with the decisions kept while a run had the domain's lock); None:
    read from the journal's checkpoint."""
    what = to_observe(item)
    if what == "nothing":
        return ObservedNow()
    if writes is None or history is None:
        opened = JournalStore(settings.memory_dir, seal_key=settings.seal_key).open(
            item.domain, repair=False
        )
        writes = opened.checkpoint.writes if writes is None else writes
        history = opened.history if history is None else history
    store = StandingStore(settings.memory_dir, settings.seal_key)
    standing = store.kept_standing(item.domain, standing_of(history))
    grounds = ObservedNow(limits=settings.limits, writes=tuple(writes), standing=standing)
    if what == "canon":
        seen = _canon_seen(settings, str(item.params["path"]))
        return replace(seen, limits=grounds.limits, standing=standing)
    return replace(grounds, summary=summary)


def observe(
    settings: Settings,
    item: ApprovalItem,
    writes: Sequence[OwnWrite] | None = None,
    history: Sequence[Record] | None = None,
) -> ObservedNow:
    """What the core asks to see before ruling: the domain on the hub now, or the canon file."""
    if to_observe(item) != "hub":
        return seen_for(settings, item, None, writes, history)
    with hub_client(settings) as client:
        return seen_for(settings, item, read_summary(client, item.domain), writes, history)


def _canon_seen(settings: Settings, path: str) -> ObservedNow:
    """The canon file's hash now, or why it cannot be written: a read-only canon, or a path
    made unsafe since (a symlink planted)."""
    readonly = readonly_reason(
        settings.canon_dir,
        flagged=settings.canon_readonly,
        packaged=settings.canon_source == "packaged",
    )
    if readonly is not None:
        return ObservedNow(canon_problem=readonly)
    try:
        resolve_inside(settings.canon_dir, path)
        return ObservedNow(canon_sha256=current_sha256(settings.canon_dir, path, strict=True))
    except ApprovalError as exc:
        return ObservedNow(canon_problem=exc.message)


def execute(
    settings: Settings,
    item: ApprovalItem,
    by: str,
    journal: Journal,
    run_id: str,
    observed_task: Task | None = None,
    hub: HubOrigin | None = None,
) -> SendResult:
    """authorized (by the person) -> dispatched -> receipt, failed or stale; the item's result.

    A status write is sent only on `observed_task`, the task as the approval observed it. This
    authorization draws its own nonce, so its key is new even for an equal proposal.
    """
    nonce = new_nonce()
    key = approval_key(item.id, item.fingerprint, nonce)
    params = executed_params(item.operation, dict(item.params), item.domain)
    # A status write keeps the version it carries as If-Match: what a probe of its key needs.
    planned = {"planned_on": task_state(observed_task)} if observed_task is not None else {}
    authorized = Authorized(index=0, operation=item.operation, params=params, nonce=nonce,
                            fingerprint=item.fingerprint, idempotency_key=key,
                            by=f"person:{by}", **bound(settings, hub), **planned)  # fmt: skip
    journal.write(authorized)
    if writes_canon(item.operation):
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


def _execute_canon(
    settings: Settings, item: ApprovalItem, key: str, journal: Journal
) -> SendResult:
    journal.write(Dispatched(index=0, idempotency_key=key))
    relative = str(item.params["path"])
    try:
        # The file as it was, kept on the item: what changed stays readable after the write.
        before = read_canon(settings.canon_dir, relative, MAX_CANON_CHARS * 4)
        path, sha = write_canon(settings.canon_dir, relative, str(item.params["content"]))
    except (CustodianError, OSError) as exc:
        journal.write(Failed(index=0, error=str(exc), status=None, code=None))
        return {"error": str(exc)}
    journal.write(
        Receipt(
            index=0,
            status_code=None,
            hub_id=None,
            replayed=False,
            response_sha256=sha,
            attempts=1,
            path=str(item.params["path"]),
        )
    )
    result: SendResult = {"path": relative, "sha256": sha, "file": path.name}
    if before is not None:
        result["before"] = before
    return result
