"""Which old journal segments a prune may drop: a pure decision over what each segment holds."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from custodian_runtime.core.authority.own_writes import RETAIN
from custodian_runtime.core.journal.kinds import (
    GrantIssued,
    GrantUsed,
    RecordDataError,
    decode,
    earlier_run,
)
from custodian_runtime.core.journal.records import Record, parse_at

_KEEP = re.compile(r"^([1-9][0-9]{0,5})([hdw])$")
_UNITS = {"h": "hours", "d": "days", "w": "weeks"}


def parse_keep(text: str) -> timedelta:
    """`90d`, `12w` or `36h` as a timedelta; anything else raises ValueError saying the form."""
    match = _KEEP.match(text.strip())
    if match is None:
        raise ValueError(f"--keep {text!r}: give a count and a unit, h, d or w (e.g. 90d)")
    return timedelta(**{_UNITS[match.group(2)]: int(match.group(1))})


def keep_problem(keep: timedelta) -> str | None:
    """Why `keep` is too short: the authority reads Custodian's own writes of the last `RETAIN`.

    Deference (CUSTODIAN_DEFER_DAYS, at most 30 days), the rolling budgets (at most 720 h) and
    the checkpoint's own writes (31 days) must come out the same after a checkpoint rebuild, which
    reads only the segments a prune leaves.
    """
    if keep >= RETAIN:
        return None
    return (
        f"--keep {_span(keep)} is shorter than the {RETAIN.days} days of Custodian's own writes "
        "that deference (CUSTODIAN_DEFER_DAYS) and the rolling budgets read back: pruning them "
        f"would let a write a person reversed run again. Pass --keep {RETAIN.days}d or more"
    )


def _span(keep: timedelta) -> str:
    hours = int(keep.total_seconds() // 3600)
    return f"{hours}h" if hours % 24 else f"{hours // 24}d"


@dataclass
class SegmentFacts:
    """What one sealed segment holds, gathered in one pass over it."""

    first_seq: int
    last: Record | None = None
    runs: set[str] = field(default_factory=set)
    refers_to: set[str] = field(default_factory=set)

    def add(self, record: Record) -> None:
        """Take in one record of the segment."""
        self.last = record
        self.runs.add(record.run_id)
        value = earlier_run(record)
        if value is not None:
            self.refers_to.add(value)
        # A grant's uses refer to its grant_issued: an issue is never dropped before its uses
        # (a use of a grant the journal does not record is refused).
        grant = _grant_named(record)
        if grant is not None:
            (self.runs if record.kind == "grant_issued" else self.refers_to).add(grant)


def _grant_named(record: Record) -> str | None:
    if record.kind not in ("grant_issued", "grant_used"):
        return None
    try:
        entry = decode(record)
    except RecordDataError:
        return None
    if isinstance(entry, GrantIssued):
        value = (entry.grant or {}).get("id")
    else:
        value = entry.grant_id if isinstance(entry, GrantUsed) else None
    return f"grant:{value}" if isinstance(value, str) else None


@dataclass(frozen=True)
class PruneDecision:
    """How many of the oldest segments go; `refused` when an open write is among them."""

    drop: int
    reason: str
    refused: bool = False


def decide(
    segments: Sequence[SegmentFacts], cutoff: datetime, open_seqs: Sequence[int]
) -> PruneDecision:
    """The oldest segments, all older than `cutoff`, that nothing kept needs; never the newest.

    A write still open (its authorized seq) in a segment the cutoff would drop refuses the whole
    prune: reconcile it first. A segment also stays when a later one speaks of one of its runs
    (a run closed or reconciled later), so the chain and the spine of what is kept still verify.
    """
    aged = 0
    for facts in segments[:-1]:
        if facts.last is None or parse_at(facts.last.at) >= cutoff:
            break
        aged += 1
    if aged == 0:
        return PruneDecision(0, "no segment is older than the cutoff")
    end = segments[aged - 1].last
    assert end is not None
    held = sorted(seq for seq in open_seqs if seq <= end.seq)
    if held:
        return PruneDecision(0, f"record {held[0]} is a write still open", refused=True)
    for number in range(aged, 0, -1):
        dropped = set().union(*(f.runs for f in segments[:number]))
        later = set().union(*(f.runs | f.refers_to for f in segments[number:]))
        if not dropped & later:
            return PruneDecision(number, f"{number} segment(s) older than the cutoff")
    return PruneDecision(0, "every old segment contains a run a later segment refers to")


def droppable(segments: Sequence[SegmentFacts], kept_seqs: Iterable[int]) -> int:
    """How many of the oldest segments hold none of `kept_seqs` (a person's standing modes)."""
    first = min(kept_seqs, default=None)
    if first is None:
        return len(segments)
    return sum(1 for facts in segments if facts.last is not None and facts.last.seq < first)
