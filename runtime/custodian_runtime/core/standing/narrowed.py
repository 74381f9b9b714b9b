"""Authority that narrows itself: what a person setting back Custodian's write takes away.

When the hub shows a task set back to the status it had before a status write of Custodian's,
by someone other than Custodian within `REVERSAL_WINDOW` of it, that write was reversed by a
person (a set-back later is the work moving on, and deference already leaves it to a person):

- made under a grant: the grant is suspended (`grant_suspended`), and covers nothing more. A
  person restores it by issuing a grant again (`custodian grants issue`); the suspended one stays
  suspended, so its record shows what happened.
- made on its own: that class of writes, the operation with the reversed write's task and
  status, needs a person for `NARROWED_FOR` (`class_held`); never the whole operation for one
  reversal. A person's approval of such an item still runs.

A change Custodian made itself is never a person's reversal: when the task is as a later status
write of Custodian's own left it (its status, version or time, as the receipt kept them), nobody
else set it back. Both are found by `reversals` (pure, from the checkpoint's own writes and the
observed domain), journaled by the run once each (by the reversed write's run and item), and
folded by `narrowed_of` from the records: what `grants list`, the note and `policy report` read.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from types import MappingProxyType
from typing import Any

from custodian_runtime.core.authority.evidence import stamp
from custodian_runtime.core.authority.own_writes import OwnWrite, moved_since
from custodian_runtime.core.contract import Task
from custodian_runtime.core.journal.kinds import ClassHeld, GrantSuspended, of_kind
from custodian_runtime.core.journal.records import Record, parse_at
from custodian_runtime.core.view import View

# How long a class of writes needs a person after a person set back one of them.
NARROWED_FOR = timedelta(days=14)
# A set-back within this time of Custodian's write is a person correcting it; one later is the
# work moving on (a blocker cleared, new facts), which deference already leaves to the person.
REVERSAL_WINDOW = timedelta(days=2)
NARROWED_KINDS = frozenset({GrantSuspended.KIND, ClassHeld.KIND})


@dataclass(frozen=True)
class NarrowedClass:
    """A class of writes that needs a person until `until`, and why."""

    operation: str
    params: Mapping[str, str]
    until: datetime
    reason: str

    def covers(self, operation: str, params: Mapping[str, Any], now: datetime) -> bool:
        """Whether a write of `operation` with `params` falls in the class, at `now`."""
        if operation != self.operation or now >= self.until:
            return False
        return all(str(params.get(k)) == v for k, v in self.params.items())

    def clause(self) -> str:
        """What a person reads of it on a card or in the note."""
        return f"{self.reason}; until {stamp(self.until)} such a write needs a person"


@dataclass(frozen=True)
class Narrowed:
    """The grants suspended (id -> why), the classes narrowed, and the reversed writes seen."""

    suspended: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    classes: tuple[NarrowedClass, ...] = ()
    seen: frozenset[tuple[str, str]] = frozenset()
    # The facts of the write whose reversal suspended each grant (its workstream and owner,
    # where recorded): what `policy report` leaves out of a grant narrowed past it; not kept in
    # the plan record, which the ruling reads.
    reversed_on: Mapping[str, Mapping[str, str]] = field(
        default_factory=lambda: MappingProxyType({})
    )

    def class_of(
        self, operation: str, params: Mapping[str, Any], now: datetime
    ) -> NarrowedClass | None:
        """The narrowed class a write of `operation` with `params` falls in at `now`, if any."""
        return next((h for h in self.classes if h.covers(operation, params, now)), None)

    def as_record(self) -> dict[str, Any]:
        """What the plan record keeps of it, so that replay rules with the same."""
        classes = [
            {"operation": h.operation, "params": dict(h.params), "until": h.until.isoformat(),
             "reason": h.reason}
            for h in self.classes
        ]  # fmt: skip
        # "holds": the key every plan record written so far carries (replay reads them).
        return {"suspended": dict(self.suspended), "holds": classes}

    @classmethod
    def from_record(cls, data: Mapping[str, Any] | None) -> Narrowed:
        """What a plan record kept (nothing kept: nothing narrowed)."""
        if not data:
            return cls()
        classes = tuple(
            NarrowedClass(
                str(h["operation"]),
                {str(k): str(v) for k, v in dict(h["params"]).items()},
                datetime.fromisoformat(str(h["until"])),
                str(h["reason"]),
            )
            for h in data.get("holds") or ()
        )
        suspended = {str(k): str(v) for k, v in dict(data.get("suspended") or {}).items()}
        return cls(MappingProxyType(suspended), classes)

    def __bool__(self) -> bool:
        return bool(self.suspended or self.classes)


def narrowed_of(records: Iterable[Record]) -> Narrowed:
    """The suspensions and narrowed classes the records give, in journal order: what `policy
    report`, `grants list` and the ruling read."""
    suspended: dict[str, str] = {}
    facts: dict[str, Mapping[str, str]] = {}
    classes: list[NarrowedClass] = []
    seen: set[tuple[str, str]] = set()
    found = list(records)
    for _, s in of_kind(found, GrantSuspended):
        if s.grant_id is not None:
            suspended.setdefault(s.grant_id, str(s.reason))
            kept = {"workstream": s.workstream_id, "owner": s.owner}
            if s.workstream_id:
                facts.setdefault(s.grant_id, {k: v for k, v in kept.items() if v})
        seen.add((str(s.run), str(s.index)))
    for _, h in of_kind(found, ClassHeld):
        if h.operation is not None and h.until is not None:
            params = {str(k): str(v) for k, v in dict(h.params or {}).items()}
            classes.append(NarrowedClass(h.operation, params, parse_at(h.until), str(h.reason)))
        seen.add((str(h.run), str(h.index)))
    return Narrowed(MappingProxyType(suspended), tuple(classes), frozenset(seen),
                    MappingProxyType(facts))  # fmt: skip


def reversals(
    writes: Sequence[OwnWrite], view: View, narrowed: Narrowed, now: datetime
) -> list[GrantSuspended | ClassHeld]:
    """The records to journal for each status write of Custodian's (on its own or under a
    grant) that the hub shows set back, not journaled before."""
    found: list[GrantSuspended | ClassHeld] = []
    for w in writes:
        task = view.tasks.get(w.task_id or "")
        key = (w.run_id, str(w.index))
        if task is None or w.by_person or key in narrowed.seen or w.before is None:
            continue
        if task.status != w.before or task.status == w.status or not _soon(w, task.updated_at):
            continue
        if _left_by_custodian(w, writes, task):
            continue  # Custodian's own later write set it back: no one else's reversal
        when = "" if task.updated_at is None else f" at {stamp(task.updated_at)}"
        reason = (
            f"a person set task {w.task_id} back from {w.status} to {w.before}{when}, after "
            f"Custodian's {w.operation} of run {w.run_id}"
        )
        if w.by.startswith("grant:"):
            grant = w.by.removeprefix("grant:")
            ws = view.workstreams.get(task.workstream_id)
            owner = str(ws.owner) if ws is not None and ws.owner else None
            found.append(GrantSuspended(grant_id=grant, run=w.run_id, index=w.index,
                                        task_id=w.task_id, reason=reason,
                                        workstream_id=task.workstream_id, owner=owner))  # fmt: skip
        else:
            params = {"task_id": str(w.task_id), "status": str(w.status)}
            until = (now + NARROWED_FOR).isoformat()
            found.append(ClassHeld(operation=w.operation, params=params, until=until,
                                   run=w.run_id, index=w.index, reason=reason))  # fmt: skip
    return found


def _left_by_custodian(write: OwnWrite, writes: Sequence[OwnWrite], task: Task) -> bool:
    """Whether the task is as a later status write of Custodian's own left it (on its own, under
    a grant, or approved by a person: Custodian made it), so that nobody else changed it since."""
    later = [
        w
        for w in writes
        if w.task_id == write.task_id
        and w.status is not None
        and parse_at(w.at) > parse_at(write.at)
    ]
    if not later:
        return False
    return not moved_since(max(later, key=lambda w: parse_at(w.at)), task)


def _soon(write: OwnWrite, changed: datetime | None) -> bool:
    """Whether the set-back came within REVERSAL_WINDOW of the write (unknown time: it did)."""
    return changed is None or changed - parse_at(write.at) <= REVERSAL_WINDOW


def narrowed_line(entry: GrantSuspended | ClassHeld) -> str:
    """What a person reads in the note of one grant suspended or class narrowed."""
    if isinstance(entry, GrantSuspended):
        return (
            f"grant {entry.grant_id} is suspended: {entry.reason}; a person restores it by "
            "issuing a grant again (`custodian grants issue`)"
        )
    params = ", ".join(f"{k}={v}" for k, v in sorted((entry.params or {}).items()))
    until = stamp(parse_at(str(entry.until)))
    return f"{entry.operation} with {params} needs a person until {until}: {entry.reason}"
