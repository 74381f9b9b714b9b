"""A standing no a person says in words (`custodian policy no`), or lifts.

The runtime holds a class a person rejected 3 times and never approved on its own
(core/authority/refusals.py); `policy report` then prints the command that makes that "no" the
person's own, and the one that lifts it. A said "no" holds every proposal of its class that
would be asked (queued): the operation, the status it sets, what it cites (if named), in one
workstream, across one owner's, or wherever a fact of the proposal has one value (`fact`, as
`KEY=VALUE`: the workstream's status, who wrote the task's newest word of a person, whether it
is asked whatever would carry it, or what it cites, across every workstream: the facts a
standing no is found by, core/authority/refusals.py); it never runs anything, and lasts until it
expires (at most 30 days) or is lifted. A lift asks again: the rejections of the class decided
before it no longer make a standing no (three newer ones do). The newest word on a class wins.
Pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from custodian_runtime.core._timestamps import utc
from custodian_runtime.core.approvals.history import ApprovalHistory, DecidedMark
from custodian_runtime.core.authority.refusals import OF_FACT
from custodian_runtime.core.authority.scope import CITES as CITES_FACT
from custodian_runtime.core.view import View

MAX_LIFE = timedelta(days=30)
CITES = ("none", "other", "newer")


@dataclass(frozen=True)
class SaidNo:
    """One class a person said a standing no of (or lifted, `lifted`), who, why, until when."""

    operation: str
    status: str
    cites: str
    workstream: str
    owner: str
    by: str
    reason: str
    at: datetime
    expires_at: datetime
    lifted: bool = False
    fact: str = ""  # `KEY=VALUE`: said of a fact of the proposal, in every workstream

    @property
    def key(self) -> tuple[str, str, str, str, str, str]:
        """The class it is said of: a newer word on the same class replaces it."""
        return (self.operation, self.status, self.cites, self.workstream, self.owner, self.fact)

    def scope(self) -> str:
        """`workstream ws-1`, `the workstreams of mia`, or a fact's own words (`tasks whose
        newest word of a person is lena's`)."""
        if self.fact:
            key, value = split_fact(self.fact)
            return OF_FACT[key].format(value)
        return (
            f"workstream {self.workstream}"
            if self.workstream
            else f"the workstreams of {self.owner}"
        )

    def label(self) -> str:
        """As a standing no's label reads (core/authority/refusals.py `Refusal.label`)."""
        where = f" status={self.status}" if self.status else ""
        cites = f" citing {self.cites}" if self.cites else ""
        return f"{self.operation}{where}{cites} in {self.scope()}"

    def live(self, now: datetime) -> bool:
        """Whether it holds at `now` (a lift holds nothing; it is read by `lifts`)."""
        return not self.lifted and utc(self.at) <= utc(now) < utc(self.expires_at)

    def holds(self, operation: str, status: str, facts: Mapping[str, str] | None) -> bool:
        """Whether it holds a proposal of `operation` setting `status`, with `facts` observed
        (core/authority/scope.py); an unobserved fact holds nothing."""
        if facts is None or (operation, status) != (self.operation, self.status):
            return False
        if self.cites and facts.get("cites") != self.cites:
            return False
        if self.fact:
            key, value = split_fact(self.fact)
            return facts.get(key) == value
        if self.workstream:
            return facts.get("workstream") == self.workstream
        return bool(self.owner) and facts.get("owner") == self.owner

    def clause(self) -> str:
        """What a person reads of a proposal it holds."""
        return (
            f"held: a standing no said by {self.by} on {self.label()} ({self.reason}), until "
            f"{utc(self.expires_at):%Y-%m-%d %H:%M} UTC; lifted with `custodian policy no "
            "... --lift`"
        )


def split_fact(fact: str) -> tuple[str, str]:
    """`last_by=lena` as (`last_by`, `lena`)."""
    key, _, value = fact.partition("=")
    return key.strip(), value.strip()


def said_problem(
    operation: str,
    status: str,
    cites: str,
    workstream: str,
    owner: str,
    life: timedelta,
    fact: str = "",
) -> str | None:
    """Why a person may not say such a no (None: they may)."""
    if sum(map(bool, (workstream, owner, fact))) != 1:
        return "name its scope: --workstream ID, --owner NAME or --on FACT=VALUE (one of them)"
    if fact:
        key, value = split_fact(fact)
        if key not in OF_FACT or not value:
            return f"--on {fact}: give FACT=VALUE, FACT one of {', '.join(sorted(OF_FACT))}"
        if key == CITES_FACT and value not in CITES:
            return f"--on {fact}: what it cites is one of {', '.join(CITES)}"
    if cites and cites not in CITES:
        return f"--cites {cites}: give one of {', '.join(CITES)}"
    if not operation:
        return "--operation: name the operation"
    if not timedelta(0) < life <= MAX_LIFE:
        return "--expires: a standing no lasts at most 30 days (e.g. 30d or 14d)"
    return None


def latest(words: Sequence[SaidNo]) -> tuple[SaidNo, ...]:
    """The newest word on each class, in the order they were said."""
    found: dict[tuple[str, str, str, str, str, str], SaidNo] = {}
    for word in words:
        found.pop(word.key, None)
        found[word.key] = word
    return tuple(found.values())


def holding(
    said: Sequence[SaidNo], operation: str, status: str, facts: Mapping[str, str] | None,
    now: datetime,
) -> SaidNo | None:  # fmt: skip
    """The live standing no a person said that holds this proposal (None: none)."""
    return next((s for s in said if s.live(now) and s.holds(operation, status, facts)), None)


def lifted_history(history: ApprovalHistory, said: Sequence[SaidNo], view: View) -> ApprovalHistory:
    """`history` without the decisions a person's lift set aside: those of a lifted class
    decided at or before the lift, which then make no standing no (the newer ones still do)."""
    lifts = [s for s in said if s.lifted]
    if not lifts:
        return history
    kept = tuple(d for d in history.said if not any(_lifts(s, d, view) for s in lifts))
    return replace(history, said=kept)


def _lifts(lift: SaidNo, mark: DecidedMark, view: View) -> bool:
    if (mark.operation, mark.status) != (lift.operation, lift.status) or not mark.at:
        return False
    if lift.cites and mark.cites != lift.cites:
        return False
    if utc(datetime.fromisoformat(mark.at)) > utc(lift.at):
        return False
    if lift.fact:
        key, value = split_fact(lift.fact)
        return (mark.cites if key == CITES_FACT else mark.fact(key)) == value
    task = view.tasks.get(mark.task)
    ws = mark.workstream or (task.workstream_id if task is not None else "")
    if lift.workstream:
        return ws == lift.workstream
    found = view.workstreams.get(ws)
    return found is not None and bool(found.owner) and str(found.owner) == lift.owner
