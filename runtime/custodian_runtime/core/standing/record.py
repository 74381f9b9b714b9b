"""A domain's standing decisions, folded from its journal: the modes and the grants with uses.

A person's `policy_set`, `grant_issued` and `grant_revoked` records are the only source; a
grant's uses are its `grant_used` records, so a replay of the journal re-derives them. A record
of these kinds that does not decode is damage (RecordDataError, exit 6, naming `<domain>:<seq>`):
a person's word that cannot be read is never skipped, nor guessed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from types import MappingProxyType
from typing import Any, cast

from pydantic import ValidationError

from custodian_runtime.core.journal.kinds import (
    DAMAGE_ADVICE,
    MODELS,
    Entry,
    GrantIssued,
    GrantRevoked,
    GrantUsed,
    PolicySet,
    RecordDataError,
    RefusalSaid,
    decode,
    of_kind,
)
from custodian_runtime.core.journal.records import Record, parse_at
from custodian_runtime.core.journal.words import Word
from custodian_runtime.core.standing.grants import Grant, state_of
from custodian_runtime.core.standing.modes import Mode, Modes, ModeSetting, mode_problem
from custodian_runtime.core.standing.narrowed import NARROWED_KINDS, Narrowed, narrowed_of
from custodian_runtime.core.standing.said_no import SaidNo, latest

# With what narrowed the authority since (core/standing/narrowed.py): kept as they are.
STANDING_KINDS = frozenset(
    {"policy_set", "grant_issued", "grant_revoked", "grant_used", "refusal_said", *NARROWED_KINDS}
)


@dataclass(frozen=True)
class Standing:
    """The modes a person set, the grants they issued (revoked ones marked), and uses of each."""

    modes: Modes = field(default_factory=Modes)
    grants: tuple[Grant, ...] = ()
    uses: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    # Revokes of grants not seen yet: each grant is revoked as soon as it is issued.
    pending_revokes: frozenset[str] = frozenset()
    # The grants a person's reversal suspended, the classes it held (core/standing/narrowed.py).
    narrowed: Narrowed = field(default_factory=Narrowed)
    # The standing nos a person said or lifted, newest per class (core/standing/said_no.py).
    said_nos: tuple[SaidNo, ...] = ()

    def grant(self, grant_id: str) -> Grant | None:
        """The grant with `grant_id`, if the journal records it."""
        return next((g for g in self.grants if g.id == grant_id), None)

    def as_record(self) -> dict[str, Any]:
        """What the plan record keeps of it, so that replay rules with the same standing."""
        modes = {
            op: {"mode": m.mode, "by": m.by, "reason": m.reason, "at": m.at.isoformat()}
            for op, m in sorted(self.modes.settings.items())
        }
        grants = [g.model_dump(mode="json", exclude_none=True) for g in self.grants]
        kept: dict[str, Any] = {"modes": modes, "grants": grants, "uses": dict(self.uses)}
        if self.said_nos:
            kept["said_nos"] = [_said_record(n) for n in self.said_nos]
        return {**kept, "narrowed": self.narrowed.as_record()} if self.narrowed else kept

    @classmethod
    def from_record(cls, data: Mapping[str, Any] | None) -> Standing:
        """The standing a plan record kept (none kept: the defaults, no grants)."""
        if not data:
            return cls()
        modes = Modes()
        for op, m in sorted(dict(data.get("modes") or {}).items()):
            at = datetime.fromisoformat(str(m["at"]))
            modes = modes.with_setting(ModeSetting(op, m["mode"], m["by"], m["reason"], at))
        grants = tuple(Grant.model_validate(g) for g in data.get("grants") or ())
        uses = {str(k): int(v) for k, v in dict(data.get("uses") or {}).items()}
        narrowed = Narrowed.from_record(data.get("narrowed"))
        said = tuple(_said_of(n) for n in data.get("said_nos") or ())
        return cls(modes, grants, MappingProxyType(uses), narrowed=narrowed, said_nos=said)

    def fingerprint(self) -> dict[str, Any] | None:
        """What a run's skip compares: the modes set and each grant's state (None: no standing).

        A grant's uses are left out: they move only by the runs' own writes, which move the hub.
        """
        modes = {op: s.mode for op, s in sorted(self.modes.settings.items())}
        grants = sorted((g.id, g.revoked) for g in self.grants)
        if not modes and not grants:
            return None
        return {"modes": modes, "grants": [list(g) for g in grants]}

    def revoking(self, grant_ids: Iterable[str]) -> Standing:
        """These decisions with the grants `grant_ids` revoked (a revoke kept while busy)."""
        gone = frozenset(grant_ids)
        grants = tuple(
            g.model_copy(update={"revoked": True}) if g.id in gone else g for g in self.grants
        )
        pending = self.pending_revokes | (gone - {g.id for g in self.grants})
        return Standing(self.modes, grants, self.uses, pending, self.narrowed, self.said_nos)

    def listing(self, now: datetime) -> list[dict[str, object]]:
        """Each grant with its uses, what is left, and its state, for `grants list`."""
        rows: list[dict[str, object]] = []
        for g in self.grants:
            used = self.uses.get(g.id, 0)
            row = g.model_dump(mode="json")
            left = max(0, g.max_uses - used)
            state = state_of(g, used, now)
            if state == "live" and g.id in self.narrowed.suspended:
                state = f"suspended: {self.narrowed.suspended[g.id]}"
            rows.append({**row, "uses": used, "left": left, "state": state})
        return rows


def standing_of(records: Iterable[Record]) -> Standing:
    """The standing decisions the records hold, in journal order (a later one wins)."""
    fold = _Fold()
    mine = [r for r in records if r.kind in STANDING_KINDS]
    for r in mine:
        if r.kind in NARROWED_KINDS:
            continue
        entry = decoded(r)
        grant = grant_of(r, entry) if isinstance(entry, GrantIssued) else None
        fold.apply(r.domain, parse_at(r.at), entry, grant)
    return replace(fold.standing(), narrowed=narrowed_of(mine))


def _said_record(said: SaidNo) -> dict[str, Any]:
    return {
        "operation": said.operation, "status": said.status, "cites": said.cites,
        "workstream": said.workstream, "owner": said.owner, "by": said.by,
        "reason": said.reason, "at": said.at.isoformat(),
        "expires_at": said.expires_at.isoformat(), "lifted": said.lifted, "fact": said.fact,
    }  # fmt: skip


def _said_of(data: Mapping[str, Any]) -> SaidNo:
    return SaidNo(
        str(data["operation"]), str(data["status"]), str(data["cites"]),
        str(data["workstream"]), str(data["owner"]), str(data["by"]), str(data["reason"]),
        datetime.fromisoformat(str(data["at"])), datetime.fromisoformat(str(data["expires_at"])),
        data.get("lifted") is True, str(data.get("fact") or ""),
    )  # fmt: skip


def said_no_of(at: datetime, entry: RefusalSaid) -> SaidNo:
    """The standing no a `refusal_said` record says (made at `at`)."""
    return SaidNo(
        str(entry.operation or ""), entry.status or "", entry.cites or "",
        entry.workstream or "", entry.owner or "", str(entry.by or ""), str(entry.reason or ""),
        at, datetime.fromisoformat(str(entry.expires_at)) if entry.expires_at else at,
        entry.lifted, entry.fact or "",
    )  # fmt: skip


# A person's word on the standing, or a use of a grant: what `with_words` folds.
StandingWord = PolicySet | GrantIssued | GrantRevoked | GrantUsed | RefusalSaid


def with_words(standing: Standing, entries: Iterable[tuple[StandingWord, datetime]]) -> Standing:
    """`standing` with each entry (and when it was made) applied in the order given.

    A later mode of an operation wins; a revoke of a grant not seen yet is kept, and binds the
    grant when it comes; each `grant_used` is one use. The journal's records are checked
    before they come here (`decoded`, `grant_of`: damage otherwise).
    """
    fold = _Fold.of(standing)
    for entry, at in entries:
        grant = _grant(entry) if isinstance(entry, GrantIssued) else None
        fold.apply(grant.domain if grant is not None else "", at, entry, grant)
    return fold.standing()


def with_kept(standing: Standing, words: Iterable[Word]) -> Standing:
    """`standing` with the standing words kept in the inbox applied, in arrival order."""
    fold = _Fold.of(standing)
    for word in words:
        if word.standing:
            entry = MODELS[word.kind].model_validate(word.fields)
            issued = entry.grant if isinstance(entry, GrantIssued) else None
            grant = None if issued is None else Grant.model_validate(issued)
            fold.apply(word.domain, word.at, entry, grant)
    return fold.standing()


@dataclass
class _Fold:
    """The standing as it is folded: a revoke of a grant not seen yet waits for the grant."""

    modes: Modes = field(default_factory=Modes)
    grants: dict[str, Grant] = field(default_factory=dict)
    uses: dict[str, int] = field(default_factory=dict)
    pending: set[str] = field(default_factory=set)
    narrowed: Narrowed = field(default_factory=Narrowed)
    said: list[SaidNo] = field(default_factory=list)

    @classmethod
    def of(cls, standing: Standing) -> _Fold:
        """The fold that continues from `standing`."""
        grants = {g.id: g for g in standing.grants}
        fold = cls(standing.modes, grants, dict(standing.uses), set(standing.pending_revokes))
        fold.narrowed = standing.narrowed
        fold.said = list(standing.said_nos)
        return fold

    def apply(self, domain: str, at: datetime, entry: Entry, grant: Grant | None) -> None:
        """Fold in one decision of `domain`, made (as its record says) at `at`."""
        if isinstance(entry, PolicySet):
            if mode_problem(str(entry.operation), str(entry.mode)) is None:
                self.modes = self.modes.with_setting(_setting(at, entry))
        elif grant is not None:
            if grant.domain == domain:
                revoked = grant.revoked or grant.id in self.pending
                self.grants[grant.id] = grant.model_copy(update={"revoked": revoked})
                self.pending.discard(grant.id)
        elif isinstance(entry, GrantRevoked) and entry.grant_id is not None:
            if entry.grant_id in self.grants:
                gone = self.grants[entry.grant_id].model_copy(update={"revoked": True})
                self.grants[entry.grant_id] = gone
            else:  # never dropped: the grant is revoked as soon as it comes
                self.pending.add(entry.grant_id)
        elif isinstance(entry, GrantUsed) and entry.grant_id is not None:
            self.uses[entry.grant_id] = self.uses.get(entry.grant_id, 0) + 1
        elif isinstance(entry, RefusalSaid) and entry.operation:
            self.said = list(latest([*self.said, said_no_of(at, entry)]))

    def standing(self) -> Standing:
        """The standing folded so far."""
        return Standing(
            self.modes, tuple(self.grants.values()), MappingProxyType(dict(self.uses)),
            frozenset(self.pending), self.narrowed, tuple(self.said),
        )  # fmt: skip


def decoded(r: Record) -> Entry:
    """A record of the standing as its kind's model; RecordDataError (exit 6) naming it if it
    does not decode, or lacks what its kind must say (which operation's mode; which grant)."""
    try:
        entry = decode(r)
    except RecordDataError as exc:
        raise damage(r, _first(exc.__cause__) or str(exc)) from None
    lacking = {
        PolicySet: ("operation", "mode"),
        GrantRevoked: ("grant_id",),
        GrantUsed: ("grant_id",),
    }.get(type(entry), ())
    missing = [name for name in lacking if getattr(entry, name) is None]
    if missing:
        raise damage(r, f"{missing[0]}: Field required")
    return entry


def damage(r: Record, detail: str) -> RecordDataError:
    """The error a record of a person's mode or grant that cannot be read is (exit 6)."""
    return RecordDataError(
        f"journal record {r.ref} ({r.kind}) does not decode as a person's mode or grant "
        f"({detail}): it is damage, and nothing is ruled on a guess of it. {DAMAGE_ADVICE}; "
        "then set the mode or issue the grant again",
        domain=r.domain,
        seq=r.seq,
    )


def _first(exc: BaseException | None) -> str | None:
    """A validation error's first problem, as `where: what`."""
    if not isinstance(exc, ValidationError):
        return None
    first = exc.errors()[0]
    return f"{'.'.join(str(p) for p in first['loc'])}: {first['msg']}"


def _setting(at: datetime, entry: PolicySet) -> ModeSetting:
    return ModeSetting(
        operation=str(entry.operation),
        mode=cast(Mode, entry.mode),
        by=str(entry.by),
        reason=str(entry.reason),
        at=at,
    )


def grant_of(r: Record, entry: GrantIssued) -> Grant:
    """The grant as issued; a record that does not hold a whole grant is damage."""
    try:
        return Grant.model_validate(entry.grant or {})
    except ValidationError as exc:
        raise damage(r, f"grant.{_first(exc)}") from None


def mode_seqs(records: Iterable[Record]) -> list[int]:
    """The seq of each operation's latest `policy_set`: the records a prune must keep."""
    latest: dict[str, int] = {}
    for r, entry in of_kind(records, PolicySet):
        latest[str(entry.operation)] = r.seq
    return sorted(latest.values())


def _grant(entry: GrantIssued) -> Grant | None:
    """The grant a word holds; one that does not hold a whole grant grants nothing."""
    try:
        return Grant.model_validate(entry.grant or {})
    except ValidationError:
        return None
