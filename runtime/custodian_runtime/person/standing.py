"""What `policy` and `grants` do: validate in the core, journal through the standing store.

Nothing here decides: whether a mode or a grant may be set is core/standing/modes.py and
core/standing/grants.py.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TextIO

from custodian_runtime.clock import utc_now
from custodian_runtime.core.authority.origin import EMBEDDED_PREFIX
from custodian_runtime.core.authority.scope import scope_label, scope_problem
from custodian_runtime.core.fold.prune import parse_keep
from custodian_runtime.core.inert import for_terminal, for_terminal_json
from custodian_runtime.core.journal.kinds import GrantIssued, GrantRevoked, PolicySet
from custodian_runtime.core.standing.agreement import Agreement, agreement
from custodian_runtime.core.standing.commands import Asking
from custodian_runtime.core.standing.grants import (
    Grant,
    evidence_problem,
    grant_problem,
    skew_problem,
    where_problem,
)
from custodian_runtime.core.standing.live import Live
from custodian_runtime.core.standing.modes import known_operations, mode_problem, person_problem
from custodian_runtime.core.standing.shadow import shadow_counts
from custodian_runtime.core.standing.suggestions import Suggested
from custodian_runtime.errors import ConfigError
from custodian_runtime.journal.person.queue import ApprovalStore
from custodian_runtime.journal.person.shadow_log import held_count, shadow_log, standing_nos
from custodian_runtime.journal.person.standing_store import StandingStore
from custodian_runtime.journal.store import JournalStore
from custodian_runtime.person.said_no import SayNo as SayNo
from custodian_runtime.person.said_no import report_lines
from custodian_runtime.person.said_no import say_no as _say_no
from custodian_runtime.settings import Settings
from custodian_runtime.writes import hub_location

# `policy set --operation all`: every registered operation at once.
ALL = "all"


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
    # `--evidence newer`: it covers only a write citing a person's newer event (grants.py).
    evidence: str | None = None
    # `--on KEY=VALUE`: facts of the target it covers (core/authority/scope.py).
    on: dict[str, str] = field(default_factory=dict)


def write_json(data: object, out: TextIO) -> None:
    """JSON for a terminal (inert)."""
    out.write(for_terminal_json(json.loads(json.dumps(data, default=str)), indent=2) + "\n")


def _store(settings: Settings) -> StandingStore:
    return StandingStore(settings.memory_dir, settings.seal_key)


def _absorb(settings: Settings, domain: str) -> None:
    """Absorb the words kept while `domain` was busy first, so a new one comes after them."""
    from custodian_runtime.person._approvals import carry_out_recorded_decisions

    for done in carry_out_recorded_decisions(settings, domain):
        sys.stderr.write(for_terminal(f"custodian: kept decision: {done.message}") + "\n")


def _recorded(domain: str, holder: str | None, what: str) -> str:
    if holder is None:
        return f"{what}: journaled"
    return (
        f"{what}: kept; the domain {domain} is busy (locked by {holder}), so it is journaled "
        "as soon as that ends, in the order it came (a mode or a revoke binds the running run "
        "from its next write)"
    )


def set_mode(
    settings: Settings, domain: str, op: str, mode: str, by: str, reason: str, out: TextIO
) -> int:
    """`policy set`: exit 2 when the mode would widen what runs without a person.

    `--operation all` sets every operation's mode at once (e.g. `ask`: queue everything while
    onboarding); `auto` for all is refused, as for any approvable operation.
    """
    ops = known_operations() if op == ALL else (op,)
    for one in ops:
        problem = mode_problem(one, mode) or person_problem(by, reason)
        if problem is not None:
            raise ConfigError(f"policy set: {problem}", setting="--mode")
    store = _store(settings)
    _absorb(settings, domain)
    entries = [PolicySet(operation=one, mode=mode, by=by, reason=reason) for one in ops]
    holder = store.record(domain, *entries)
    if holder is None:
        _absorb(settings, domain)  # kept after words that came first: journaled now
    what = f"{'every operation' if op == ALL else op} set to {mode} by {by}"
    out.write(for_terminal(_recorded(domain, holder, what)) + "\n")
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


def agreement_rows(
    settings: Settings, domain: str, days: int, now: datetime | None = None
) -> list[Agreement]:
    """The agreement report's rows, shadow items included: what `policy report` and the
    review page show."""
    now = now or utc_now()
    since = now - timedelta(days=days)
    items = ApprovalStore(settings.memory_dir, settings.seal_key).all(domain, verify=False)
    shadows = shadow_counts(shadow_log(settings.memory_dir, domain, since), since)
    return agreement(items, now, days, shadows)


def _hub_flag(settings: Settings, domain: str) -> str | None:
    """What a suggested `grants issue` passes as `--hub`: the configured hub, else the one the
    domain's newest item was observed on (`embedded`, or its URL)."""
    if settings.hub is not None:
        return "embedded" if settings.hub.embedded else hub_location(settings)
    items = ApprovalStore(settings.memory_dir, settings.seal_key).all(domain, verify=False)
    for item in sorted(items, key=lambda i: i.created_at, reverse=True):
        if item.hub_at is not None:
            return "embedded" if item.hub_at.startswith(EMBEDDED_PREFIX) else item.hub_at
    return None


def suggested(
    settings: Settings,
    domain: str,
    rows: list[Agreement],
    by: str | None = None,
    now: datetime | None = None,
) -> dict[str, Suggested]:
    """Per operation, what `policy report` suggests and why (the review page shows the same):
    commands that run as printed, knowing the modes set and the grants live now."""
    now = now or utc_now()
    standing = _store(settings).standing(domain)
    asking = Asking(domain, str(settings.memory_dir), _hub_flag(settings, domain), by or "")
    live = Live(standing.grants, standing.uses, now, suspended=standing.narrowed.suspended,
                reversed_on=standing.narrowed.reversed_on)  # fmt: skip
    return {r.operation: r.suggested(asking, standing.modes.of(r.operation), live) for r in rows}


def report(
    settings: Settings,
    domain: str,
    days: int,
    as_json: bool,
    out: TextIO,
    now: datetime | None = None,
    by: str | None = None,
) -> int:
    """`policy report`: per operation, how often a person agreed in the window, what a person
    may run (one command a line, starting with `custodian`) and why, or why nothing."""
    rows = agreement_rows(settings, domain, days, now)
    found = suggested(settings, domain, rows, by, now)
    since = (now or utc_now()) - timedelta(days=days)
    held = held_count(settings.memory_dir, domain, since)
    nos = standing_nos(settings.memory_dir, domain, since)
    if as_json:
        listed = [r.as_json(domain, suggested=found[r.operation]) for r in rows]
        every = [s.as_json() for r in rows for s in found[r.operation].suggestions]
        standing_no = [{"class": k, "held": n, "last": t} for k, (n, t) in sorted(nos.items())]
        data = {"domain": domain, "days": days, "operations": listed, "suggestions": every,
                "held_deference": held, "standing_no": standing_no}  # fmt: skip
        write_json(data, out)
        return 0
    if not rows:
        out.write(f"no proposals in {domain} in the last {days} days\n")
    for row in rows:
        out.write(for_terminal(row.line()) + "\n")
        said = found[row.operation]
        for one in said.suggestions:
            out.write(for_terminal(f"  suggested ({one.why}):") + "\n")
            out.write(for_terminal(one.command) + "\n")
        if said.none_because is not None:
            out.write(for_terminal(f"  no suggestion: {said.none_because}") + "\n")
    if held:
        out.write(
            f"held in deference to a person: {held} in the last {days} days (a person decided "
            "the task's status; a newer event of theirs that supports the change lets it go)\n"
        )
    nos_said = _store(settings).standing(domain).said_nos
    memory = str(settings.memory_dir)
    for line in report_lines(domain, memory, nos, nos_said, now or utc_now(), days):
        out.write(for_terminal(line) + "\n")
    return 0


def say_no(settings: Settings, request: SayNo, out: TextIO) -> int:
    """`policy no`: the words kept while the domain was busy first, then this one."""
    _absorb(settings, request.domain)
    return _say_no(settings, request, out)


def expiry(request: Issue) -> timedelta:
    """How long the grant lasts; a ConfigError saying the fix when it may not be issued."""
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
        or evidence_problem(request.operation, request.evidence)
        or scope_problem(request.on)
        or person_problem(request.by, request.reason)
    )
    if problem is not None:
        raise ConfigError(f"grants issue: {problem}", setting="--operation")
    return expires_in


@dataclass(frozen=True)
class Issued:
    """A grant issued: journaled, or kept while `holder` (a run) holds its domain."""

    grant: Grant
    holder: str | None


def issue_grant(settings: Settings, request: Issue, expect_hub: str | None = None) -> Issued:
    """Issue a grant bound to the configured hub's id (`expect_hub`: refused if it is another)."""
    from custodian_runtime.person._execute import configured_hub

    expires_in = expiry(request)
    hub = configured_hub(settings)
    if hub is None:
        raise ConfigError(
            "grants issue: no hub is configured to bind the grant to: pass --hub embedded (the "
            "demo's) or --hub URL, or set STATE_HUB_URL",
            setting="--hub",
        )
    if expect_hub is not None and hub.identity != expect_hub:
        raise ConfigError(
            f"grants issue: the hub is now {hub.identity}, not {expect_hub}; issue it again",
            setting="--hub",
        )
    now = hub_now(settings)
    grant = Grant(
        id=request.grant_id, domain=request.domain, operation=request.operation,
        where=request.where, max_uses=request.max_uses, expires_at=now + expires_in,
        by=request.by, reason=request.reason, hub_id=hub.identity, issued_at=now,
        evidence=request.evidence, on=request.on,
    )  # fmt: skip
    store = _store(settings)
    _absorb(settings, request.domain)
    holder = store.record(request.domain, GrantIssued(grant=grant.model_dump(mode="json")))
    if holder is None:
        _absorb(settings, request.domain)
    return Issued(grant, holder)


def hub_now(settings: Settings) -> datetime:
    """The hub's clock, which every host shares: a grant's issue time, and its expiry from it.

    `generated_at` of GET /state/summary (an embedded hub runs on this process's clock); a
    ConfigError when this host's clock differs from it by more than MAX_SKEW.
    """
    from custodian_runtime.person._execute import hub_client

    if settings.hub is not None and settings.hub.embedded:
        return utc_now()
    with hub_client(settings) as client:
        at = client.state_summary().generated_at
    at = at.replace(tzinfo=UTC) if at.tzinfo is None else at.astimezone(UTC)  # the hub speaks UTC
    problem = skew_problem(utc_now(), at)
    if problem is not None:
        raise ConfigError(f"grants issue: {problem}", setting="--hub")
    return at


def issue(settings: Settings, request: Issue, as_json: bool, out: TextIO, err: TextIO) -> int:
    """`grants issue`: the report first (stderr), then the grant, bound to the hub's id."""
    expiry(request)
    report(settings, request.domain, 30, False, err)
    issued = issue_grant(settings, request)
    grant, holder = issued.grant, issued.holder
    if holder is not None:
        err.write(for_terminal(_recorded(request.domain, holder, grant.id)) + "\n")
    if as_json:
        write_json({**grant.model_dump(mode="json"), "journaled": holder is None}, out)
    else:
        out.write(grant.id + "\n")
    return 0


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
        on = scope_label(dict(r.get("on") or {}))  # type: ignore[call-overload]
        where += f"; on {on}" if on else ""
        line = (
            f"{r['id']} {r['state']} {r['domain']} {r['operation']} ({where}): "
            f"{r['uses']} used, {r['left']} left, expires {r['expires_at']}; by {r['by']}"
        )
        out.write(for_terminal(line) + "\n")
    return 0


@dataclass(frozen=True)
class Revoked:
    """A grant revoked in `domain`: journaled, or kept while `holder` (a run) holds it."""

    domain: str
    holder: str | None


def revoke_grant(settings: Settings, grant_id: str, by: str, reason: str) -> Revoked:
    """Revoke a grant at once: journaled, or kept (and binding the running run) while busy."""
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
    _absorb(settings, domain)
    holder = store.record(domain, GrantRevoked(grant_id=grant_id, by=by, reason=reason))
    if holder is None:
        _absorb(settings, domain)
    return Revoked(domain, holder)


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


def revoke(settings: Settings, grant_id: str, by: str, reason: str, out: TextIO) -> int:
    """`grants revoke`: takes effect at once (journaled, or kept and read by the running run)."""
    done = revoke_grant(settings, grant_id, by, reason)
    out.write(for_terminal(_recorded(done.domain, done.holder, f"{grant_id} revoked")) + "\n")
    return 0
