"""What `policy` and `grants` do: validate in the core, journal through the standing store.

Nothing here decides: whether a mode or a grant may be set is core/standing/modes.py and
core/standing/grants.py.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import timedelta
from typing import TextIO

from custodian_runtime.clock import utc_now
from custodian_runtime.core.inert import for_terminal, for_terminal_json
from custodian_runtime.core.journal.kinds import GrantIssued, GrantRevoked, PolicySet
from custodian_runtime.core.journal.prune import parse_keep
from custodian_runtime.core.standing.agreement import agreement
from custodian_runtime.core.standing.grants import Grant, grant_problem, where_problem
from custodian_runtime.core.standing.modes import mode_problem, person_problem
from custodian_runtime.errors import ConfigError
from custodian_runtime.memory.approvals import ApprovalStore
from custodian_runtime.memory.journal_store import JournalStore
from custodian_runtime.memory.standing_store import StandingStore
from custodian_runtime.settings import Settings


@dataclass(frozen=True)
class Issue:
    """`grants issue`, as given."""

    domain: str
    operation: str
    where: dict[str, str]
    max_uses: int
    expires: str
    by: str
    reason: str
    grant_id: str


def write_json(data: object, out: TextIO) -> None:
    """JSON for a terminal (inert)."""
    out.write(for_terminal_json(json.loads(json.dumps(data, default=str)), indent=2) + "\n")


def _store(settings: Settings) -> StandingStore:
    return StandingStore(settings.memory_dir, settings.seal_key)


def _recorded(domain: str, holder: str | None, what: str) -> str:
    if holder is None:
        return f"{what}: journaled"
    return (
        f"{what}: recorded; the domain {domain} is busy (held by {holder}), so it is journaled "
        "as soon as that ends (a revoke binds the running run already)"
    )


def set_mode(
    settings: Settings, domain: str, op: str, mode: str, by: str, reason: str, out: TextIO
) -> int:
    """`policy set`: exit 2 when the mode would widen what runs without a person."""
    problem = mode_problem(op, mode) or person_problem(by, reason)
    if problem is not None:
        raise ConfigError(f"policy set: {problem}", setting="--mode")
    store = _store(settings)
    store.carry_out(domain)
    holder = store.record(domain, PolicySet(operation=op, mode=mode, by=by, reason=reason))
    out.write(for_terminal(_recorded(domain, holder, f"{op} set to {mode} by {by}")) + "\n")
    return 0


def show(settings: Settings, domain: str, as_json: bool, out: TextIO) -> int:
    """`policy show`: every operation's mode, and who set it."""
    modes = _store(settings).standing(domain).modes
    if as_json:
        write_json({"domain": domain, "modes": modes.as_record()}, out)
        return 0
    for op, mode in modes.as_record().items():
        setting = modes.settings.get(op)
        who = "" if setting is None else f"  (set by {setting.by}: {setting.reason})"
        out.write(for_terminal(f"{op}: {mode}{who}") + "\n")
    return 0


def report(settings: Settings, domain: str, days: int, as_json: bool, out: TextIO) -> int:
    """`policy report`: per operation, how often a person approved in the window."""
    items = ApprovalStore(settings.memory_dir, settings.seal_key).all(domain, verify=False)
    rows = agreement(items, utc_now(), days)
    if as_json:
        write_json(
            {"domain": domain, "days": days, "operations": [r.as_json(domain) for r in rows]}, out
        )
        return 0
    if not rows:
        out.write(f"no proposals in {domain} in the last {days} days\n")
    for row in rows:
        out.write(for_terminal(row.line()) + "\n")
        suggestion = row.suggestion(domain)
        if suggestion is not None:
            out.write(for_terminal(f"  suggested: {suggestion}") + "\n")
    return 0


def issue(settings: Settings, request: Issue, as_json: bool, out: TextIO, err: TextIO) -> int:
    """`grants issue`: the report first (stderr), then the grant, bound to the hub's id."""
    from custodian_runtime.approvals import configured_hub

    expires_in = _checked(request)
    report(settings, request.domain, 30, False, err)
    hub = configured_hub(settings)
    if hub is None or hub.identity is None:
        raise ConfigError("grants issue: the hub has no identity; pass --hub URL", setting="--hub")
    now = utc_now()
    grant = Grant(
        id=request.grant_id, domain=request.domain, operation=request.operation,
        where=request.where, max_uses=request.max_uses, expires_at=now + expires_in,
        by=request.by, reason=request.reason, hub_id=hub.identity, issued_at=now,
    )  # fmt: skip
    store = _store(settings)
    store.carry_out(request.domain)
    holder = store.record(request.domain, GrantIssued(grant=grant.model_dump(mode="json")))
    if holder is not None:
        err.write(for_terminal(_recorded(request.domain, holder, grant.id)) + "\n")
    if as_json:
        write_json({**grant.model_dump(mode="json"), "journaled": holder is None}, out)
    else:
        out.write(grant.id + "\n")
    return 0


def _checked(request: Issue) -> timedelta:
    """How long the grant lasts; exit 2 when it may not be issued as given."""
    try:
        expires_in = parse_keep(request.expires)
    except ValueError:
        raise ConfigError(
            f"--expires {request.expires!r}: give a count and a unit, h, d or w, of at most 30 "
            "days (e.g. 7d or 36h)",
            setting="--expires",
        ) from None
    problem = (
        grant_problem(request.operation, request.max_uses, expires_in)
        or where_problem(request.operation, request.where)
        or person_problem(request.by, request.reason)
    )
    if problem is not None:
        raise ConfigError(f"grants issue: {problem}", setting="--operation")
    return expires_in


def _domains(settings: Settings, domain: str | None) -> list[str]:
    if domain is not None:
        return [domain]
    return JournalStore(settings.memory_dir, seal_key=settings.seal_key).domains()


def list_grants(settings: Settings, domain: str | None, as_json: bool, out: TextIO) -> int:
    """`grants list`: each grant's uses, what is left, expiry and state."""
    now, store = utc_now(), _store(settings)
    # A revoke kept while the domain is busy binds already: the list says so.
    rows = [
        row
        for d in _domains(settings, domain)
        for row in store.standing(d).revoking(store.waiting_revokes(d)).listing(now)
    ]
    if as_json:
        write_json(rows, out)
        return 0
    if not rows:
        out.write("no grants\n")
    for r in rows:
        where = " ".join(f"{k}={v}" for k, v in dict(r["where"]).items()) or "any params"  # type: ignore[call-overload]
        line = (
            f"{r['id']} {r['state']} {r['domain']} {r['operation']} ({where}): "
            f"{r['uses']} used, {r['left']} left, expires {r['expires_at']}; by {r['by']}"
        )
        out.write(for_terminal(line) + "\n")
    return 0


def revoke(settings: Settings, grant_id: str, by: str, reason: str, out: TextIO) -> int:
    """`grants revoke`: takes effect at once (journaled, or kept and read by the running run)."""
    problem = person_problem(by, reason)
    if problem is not None:
        raise ConfigError(f"grants revoke: {problem}", setting="--by")
    store = _store(settings)
    domain = _domain_of(settings, store, grant_id)
    if domain is None:
        raise ConfigError(
            f"grants revoke: no journal records grant {grant_id}; "
            "list them with `custodian grants list`",
            setting="ID",
        )
    store.carry_out(domain)
    holder = store.record(domain, GrantRevoked(grant_id=grant_id, by=by, reason=reason))
    out.write(for_terminal(_recorded(domain, holder, f"{grant_id} revoked")) + "\n")
    return 0


def _domain_of(settings: Settings, store: StandingStore, grant_id: str) -> str | None:
    """The domain whose journal records the grant, or that keeps it while busy (None: none)."""
    for domain in _domains(settings, None):
        if store.standing(domain).grant(grant_id) is not None:
            return domain
    for kept in store.waiting():
        issued = GrantIssued.model_validate(kept.fields) if kept.kind == "grant_issued" else None
        if issued is not None and (issued.grant or {}).get("id") == grant_id:
            return kept.domain
    return None
