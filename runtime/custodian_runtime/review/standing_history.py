"""What the journal says of a domain's standing, for the page (pure): the writes run under a
grant, and each mode a person set (who, when, what, why)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from custodian_runtime.core.fold.api import Record, parse_at, trace_items
from custodian_runtime.core.journal.kinds import (
    GrantIssued,
    GrantRevoked,
    PolicySet,
    RecordDataError,
    RefusalSaid,
    decode,
)
from custodian_runtime.core.standing.grants import Grant
from custodian_runtime.core.standing.record import said_no_of

# How the record that closed a write reads, after "executed (grant …)"'s verb.
_CLOSED = {"receipt": "executed", "failed": "failed", "stale": "stale"}


@dataclass(frozen=True)
class GrantUse:
    """One write authorized under a grant, and what became of it."""

    domain: str
    run_id: str
    index: int
    at: datetime
    operation: str
    params: dict[str, Any]
    grant_id: str
    outcome: str  # executed, failed, stale, closed by hand, or open (no answer yet)

    @property
    def text(self) -> str:
        """`executed (grant grant-…)`: the outcome as the note and `--json` say it."""
        return f"{self.outcome} (grant {self.grant_id})"


@dataclass(frozen=True)
class Change:
    """A person's policy change: a mode set, a grant issued or revoked."""

    at: datetime
    by: str
    what: str
    reason: str
    grant_id: str | None = None


def grant_uses(records: Sequence[Record]) -> list[GrantUse]:
    """Every write the records authorized under a grant, oldest first."""
    found = []
    for (run_id, index), item in trace_items(records).items():
        by = str(item.grant.by or "")
        if not by.startswith("grant:") or not isinstance(index, int):
            continue
        closed = item.outcome
        outcome = "open" if closed is None else _CLOSED.get(closed.kind, "closed by hand")
        use = GrantUse(
            domain=item.authorized.domain, run_id=run_id, index=index,
            at=parse_at(item.authorized.at), operation=str(item.grant.operation),
            params=dict(item.grant.params or {}), grant_id=by.removeprefix("grant:"),
            outcome=outcome,
        )  # fmt: skip
        found.append(use)
    return sorted(found, key=lambda u: (u.at, u.run_id, u.index))


def changes(records: Iterable[Record]) -> list[Change]:
    """Each mode set and grant issued or revoked, newest first."""
    found: list[Change] = []
    for r in records:
        if r.kind not in ("policy_set", "grant_issued", "grant_revoked", "refusal_said"):
            continue
        try:
            change = _change(r)
        except (RecordDataError, ValidationError):
            continue  # `inspect` reports a record that does not fit its kind
        if change is not None:
            found.append(change)
    return sorted(found, key=lambda c: c.at, reverse=True)


def _change(r: Record) -> Change | None:
    entry, at = decode(r), parse_at(r.at)
    if isinstance(entry, PolicySet):
        what = f"set {entry.operation} to {entry.mode}"
        return Change(at, str(entry.by), what, str(entry.reason))
    if isinstance(entry, GrantIssued):
        grant = Grant.model_validate(entry.grant or {})
        what = f"issued {grant.id}: {grant_sentence(grant)}"
        return Change(at, grant.by, what, grant.reason, grant.id)
    if isinstance(entry, GrantRevoked):
        what = f"revoked {entry.grant_id}"
        return Change(at, str(entry.by), what, str(entry.reason), str(entry.grant_id))
    if isinstance(entry, RefusalSaid):
        said = said_no_of(at, entry)
        what = f"{'lifted the standing no on' if said.lifted else 'said a standing no on'} "
        return Change(at, said.by, what + said.label(), said.reason)
    return None


def doing(operation: str) -> str:
    """`create tasks` for create_task: the operation as a plural verb phrase."""
    verb, _, rest = operation.partition("_")
    words = rest.replace("_", " ")
    if not words:
        return verb
    return f"{verb} {words}es" if words.endswith("s") else f"{verb} {words}s"


def where_clause(where: dict[str, str]) -> str:
    """`where workstream_id=web-ws-2 and status=blocked`, or "" for any params."""
    pairs = " and ".join(f"{k}={v}" for k, v in sorted(where.items()))
    return f"where {pairs}" if pairs else ""


def grant_sentence(grant: Grant) -> str:
    """What a grant lets Custodian do, in one sentence."""
    return issue_sentence(
        grant.operation, grant.domain, grant.where, grant.max_uses, grant.expires_at, grant.hub_id
    )


def issue_sentence(
    operation: str, domain: str, where: dict[str, str], max_uses: int, until: datetime, hub: str
) -> str:
    """ "Let Custodian create tasks in website without a card, at most 10 times, until …"."""
    narrowed = where_clause(where)
    times = "once" if max_uses == 1 else f"{max_uses} times"
    return (
        f"Let Custodian {doing(operation)} ({operation}) in {domain} without a card"
        f"{', ' + narrowed if narrowed else ''}, at most {times}, "
        f"until {until.strftime('%Y-%m-%d %H:%M')} UTC, on hub {hub}"
    )
