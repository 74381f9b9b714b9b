"""The checkpoint: what a run needs from a domain's journal, folded from its records.

A run needs the chain head, the runs left unfinished (with what they counted), the last completed
run's observation, the writes still open with every record that proves them, the writes closed
without being sent in the last 7 days (core/fold/late_landings.py), the shadow items of the
last 7 days not matched yet (core/standing/shadow.py), the records of the newest
run, the notes the next prompt feeds forward (core/journal/continuity.py), and the first and
`finished` records of the newest run and of the newest successful one (core/journal/totals.py,
read by core/metrics.py). `compact(records)` keeps exactly those records, so the journal's pure
views (`unfinished_items`, `interrupted_runs`, `last_completed_observation`, ...) answer the same on
the compact list as on the whole journal. `fold(checkpoint, records)` is `compact` over the
checkpoint's records followed by the new ones: folding in chunks equals folding all at once.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from custodian_runtime.core.approvals.ledger import Ledger, fold_ledger
from custodian_runtime.core.approvals.ledger import retained as ledger_retained
from custodian_runtime.core.authority.own_writes import OwnWrite, retained, writes_in
from custodian_runtime.core.fold.late_landings import closed_item_records
from custodian_runtime.core.journal.continuity import note_records
from custodian_runtime.core.journal.kinds import (
    Finished,
    NoticeReceipt,
    NoticeSent,
    absorbed_arrival,
    absorbed_word,
    decode,
    item_of,
    read_as,
)
from custodian_runtime.core.journal.records import (
    GENESIS,
    PERSON_RUN_FIRST,
    Problem,
    Record,
    record_hash,
)
from custodian_runtime.core.journal.totals import Totals, add, run_index
from custodian_runtime.core.standing.record import STANDING_KINDS
from custodian_runtime.core.standing.shadow import SHADOW_KINDS, shadow_records

# Kinds a run's views read. The prompt, the model's answer and the plan are for people and replay.
KEPT_KINDS = frozenset(
    {
        "run_started",
        "approval_decided",
        "observed",
        "ruling",
        "queued",
        "authorized",
        "dispatched",
        "reconciled",
        "receipt",
        "failed",
        "stale",
        "unknown",
        "settled_by_hand",
        # A closed write's probe and its finding (core/fold/late_landings.py).
        "landing_probe",
        "same_value",
        "note_written",
        "finished",
        *STANDING_KINDS,
        *SHADOW_KINDS,
    }
)
OUTCOME_KINDS = frozenset({"receipt", "failed", "stale", "settled_by_hand"})
STEP_KINDS = frozenset({"dispatched", "reconciled", "unknown", *OUTCOME_KINDS})

ItemKey = tuple[str, Any]


class Head(BaseModel):
    """The last record of the chain: seq 0 and the genesis hash for an empty journal."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    seq: int = Field(ge=0)
    hash: str
    at: str | None = None


EMPTY_HEAD = Head(seq=0, hash=GENESIS)


# 2: the checkpoint keeps Custodian's own writes; 3: and the domain's running totals
# (core/journal/totals.py); 4: and what the journal says of each approval item, and the highest
# arrival number absorbed from the inbox. An older file is rebuilt by one full scan, which
# counts every record.
VERSION = 4
# How many of the last absorbed words' ids the checkpoint keeps: a word at or below the
# high-water mark whose id is among them was journaled (a crash before its file was removed);
# one whose id is not was put back or renumbered, and is damage (journal/person/inbox.py).
RECENT_WORDS = 64


class Checkpoint(BaseModel):
    """A domain's journal folded: its head, the records a run reads (see `compact`),
    Custodian's own writes of the last 31 days (core/authority/own_writes.py), and the running
    totals of runs, writes and cost the metrics' counters report (core/journal/totals.py)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    v: int = VERSION
    domain: str
    head: Head = EMPTY_HEAD
    records: tuple[Record, ...] = ()
    writes: tuple[OwnWrite, ...] = ()
    totals: Totals = Totals()
    # The ids of the last `RECENT_WORDS` words journaled from the domain's inbox
    # (core/journal/words.py), and the highest arrival number absorbed: a word's file at or
    # below it is never journaled again. A prune's anchor carries the mark (journal/prune.py).
    words: tuple[str, ...] = ()
    arrival: int = Field(default=0, ge=0)
    # What the journal says of each approval item (core/approvals/ledger.py): the status a
    # command acts on; an item file is a view of it.
    ledger: Ledger = Ledger()
    # The digest of the waiting set the last notice told (core/approvals/notice.py): a run
    # sends a notice only for another set. "" before any, or after a send that failed.
    notice: str = ""


def empty(domain: str) -> Checkpoint:
    """The checkpoint of a journal with no records."""
    return Checkpoint(domain=domain)


def fold(checkpoint: Checkpoint, records: Iterable[Record]) -> Checkpoint:
    """The checkpoint after `records`, which continue the chain from `checkpoint.head`."""
    new = list(records)
    if not new:
        return checkpoint
    last = new[-1]
    head = Head(seq=last.seq, hash=last.hash, at=last.at)
    kept = compact([*checkpoint.records, *(r for r in new if r.kind in KEPT_KINDS)])
    writes = retained([*checkpoint.writes, *writes_in(checkpoint.records, new)], last.at)
    totals = add(checkpoint.totals, checkpoint.records, new)
    words = (*checkpoint.words, *(w for w in map(absorbed_word, new) if w is not None))
    arrival = max([checkpoint.arrival, *(a for a in map(absorbed_arrival, new) if a)])
    ledger = ledger_retained(fold_ledger(checkpoint.ledger, new), last.at)
    return Checkpoint(
        domain=checkpoint.domain, head=head, records=kept, writes=writes, totals=totals,
        words=words[-RECENT_WORDS:], arrival=arrival, ledger=ledger,
        notice=last_notice(checkpoint.notice, new),
    )  # fmt: skip


def last_notice(before: str, records: Iterable[Record]) -> str:
    """The digest of the set the last notice told, after `records`: a `notice` record sets it,
    its receipt saying `failed` unsets it (the set is told again)."""
    found = before
    for r in records:
        if r.kind not in (NoticeSent.KIND, NoticeReceipt.KIND):
            continue
        entry = decode(r)
        if isinstance(entry, NoticeSent):
            found = entry.digest or ""
        elif isinstance(entry, NoticeReceipt) and entry.outcome == "failed":
            found = "" if entry.digest == found else found
    return found


def already_absorbed(checkpoint: Checkpoint, word_id: str, arrival: int | None) -> bool | None:
    """Whether a kept word was journaled: True (its id is among the last absorbed), False (its
    arrival is above the mark: new), None (at or below the mark, id unknown: put back)."""
    if word_id in checkpoint.words:
        return True
    if arrival is None or arrival > checkpoint.arrival:
        return False
    return None


def compact(records: Sequence[Record]) -> tuple[Record, ...]:
    """The records a run's views need, in journal order (see the module docstring)."""
    firsts: dict[str, Record] = {}
    finished: dict[str, list[Record]] = {}
    for r in records:
        firsts.setdefault(r.run_id, r)
        if r.kind == "finished":
            finished.setdefault(r.run_id, []).append(r)
    # Whole runs: scheduled runs not finished yet, and the newest run if it is an approval (which
    # has no finished record; its ruling must stay until its authorized record arrives).
    newest = records[-1].run_id if records else None
    whole = {
        run
        for run, first in firsts.items()
        if (run not in finished and (first.kind not in PERSON_RUN_FIRST or run == newest))
    }
    keep = {r.seq: r for r in records if r.kind in KEPT_KINDS and r.run_id in whole}
    for r in [*_open_item_records(records), *closed_item_records(records)]:
        keep[r.seq] = r
    for r in _last_completed(records, finished):
        keep[r.seq] = r
    for r in note_records(
        records
    ):  # the notes the next prompt feeds forward (core/journal/continuity)
        keep[r.seq] = r
    for r in run_index(records):  # the last run and the last success (core/metrics, `status`)
        keep[r.seq] = r
    # A person's standing decisions, and the shadow items a later observation may still match.
    for r in [*_standing_records(records), *shadow_records(records)]:
        keep[r.seq] = r
    for run in {r.run_id for r in keep.values()}:
        for r in [firsts[run], *finished.get(run, [])]:
            keep[r.seq] = r
    return tuple(keep[seq] for seq in sorted(keep))


def _standing_records(records: Sequence[Record]) -> list[Record]:
    """A person's modes and grants, and each grant's uses (core/standing/record.py): kept."""
    return [r for r in records if r.kind in STANDING_KINDS]


def _origin(r: Record) -> ItemKey | None:
    """The item (authorizing run, index) a spine record speaks of."""
    return item_of(r)


def _open_item_records(records: Sequence[Record]) -> list[Record]:
    """Every record about a write that was authorized and not yet closed."""
    rulings: dict[ItemKey, list[Record]] = {}
    approvals: dict[str, list[Record]] = {}
    items: dict[ItemKey, list[Record]] = {}
    for r in records:
        if r.kind == "approval_decided":
            approvals.setdefault(r.run_id, []).append(r)
        key = _origin(r)
        if key is None:
            continue
        if r.kind == "ruling":
            rulings.setdefault(key, []).append(r)
        elif r.kind == "authorized":
            items.setdefault(key, []).append(r)
        elif r.kind in STEP_KINDS and key in items:
            items[key].append(r)
            if r.kind in OUTCOME_KINDS:
                del items[key]
    found: list[Record] = []
    for key, steps in items.items():
        found.extend([*rulings.get(key, []), *approvals.get(key[0], []), *steps])
    return found


def _last_completed(records: Sequence[Record], finished: dict[str, list[Record]]) -> list[Record]:
    """The last completed run's finished record and its last observation."""
    for r in reversed(records):
        if r.kind == "finished" and read_as(r, Finished).status == "completed":
            observed = [o for o in records if o.kind == "observed" and o.run_id == r.run_id]
            return [r, *observed[-1:], *finished.get(r.run_id, [])]
    return []


def link_problems(head: Head, records: Iterable[Record], domain: str) -> list[Problem]:
    """Seq, prev and hash of `records`, which must continue the chain from `head`."""
    problems: list[Problem] = []
    seq, prev = head.seq, head.hash
    for r in records:
        after = f"record {seq}" if seq else "the start of the journal"
        if r.seq != seq + 1:
            problems.append(Problem.of(r, f"seq {r.seq} follows {after}, expected {seq + 1}"))
        if r.prev != prev:
            what = f"the hash of record {seq}" if seq else "the genesis value"
            problems.append(Problem.of(r, f"prev does not match {what}"))
        if r.domain != domain:
            problems.append(Problem.of(r, f"domain {r.domain!r} in a {domain!r} journal"))
        if record_hash(r) != r.hash:
            problems.append(
                Problem.of(r, "hash mismatch (the record was changed after it was written)")
            )
        seq, prev = r.seq, r.hash
    return problems


def own_problems(checkpoint: Checkpoint) -> list[str]:
    """Why a checkpoint cannot be trusted as it stands (empty when it can)."""
    found = []
    for r in checkpoint.records:
        if record_hash(r) != r.hash:
            found.append(f"record {r.seq}: hash mismatch")
        if r.domain != checkpoint.domain:
            found.append(f"record {r.seq}: domain {r.domain!r}")
        if r.seq > checkpoint.head.seq:
            found.append(f"record {r.seq} is after the head {checkpoint.head.seq}")
    last = checkpoint.records[-1] if checkpoint.records else None
    if last is not None and last.seq == checkpoint.head.seq and last.hash != checkpoint.head.hash:
        found.append("the head's hash differs from its record")
    return found
