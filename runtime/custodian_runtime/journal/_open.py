"""Open a domain's journal for a run: checkpoint plus tail, or one full scan that rebuilds it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from custodian_runtime.core.fold.checkpoint import Checkpoint, fold, link_problems
from custodian_runtime.core.journal.records import Record
from custodian_runtime.core.journal.seals import SealKey
from custodian_runtime.errors import JournalError
from custodian_runtime.journal._checkpoint import (
    CheckpointFile,
    Opened,
    Parse,
    Position,
    Torn,
    chunks,
    head_line,
    iter_records,
    later_segments,
    load_checkpoint,
    refuse,
    start_of,
)
from custodian_runtime.journal._segments import Layout

CheckRecords = Callable[[Sequence[Record]], None]
SetAside = Callable[[Torn], str]


@dataclass(frozen=True)
class Access:
    """How to read: the line parser, the seal check, and what to do with a torn tail."""

    parse: Parse
    check: CheckRecords
    set_aside: SetAside | None  # None: read-only, a torn tail is only reported
    key: SealKey | None = None  # with a key, the checkpoint and the anchor must carry seals


def open_journal(layout: Layout, access: Access) -> Opened:
    """The journal from its checkpoint and tail, or rebuilt by one verified full scan."""
    saved, why = load_checkpoint(layout, access.key)
    if saved is not None:
        opened = _resume(layout, saved, access)
        if opened is not None:
            return opened
        why = "the checkpoint does not match the journal"
    if not layout.exists():
        return Opened(start_of(layout, access.key), None, None)
    return _rebuild(layout, saved, why, access)


def _resume(layout: Layout, saved: CheckpointFile, access: Access) -> Opened | None:
    head = head_line(layout, saved, access.parse)
    if head is None:
        return None
    segments = later_segments(layout, saved.position.segment)
    torn = Torn()
    where = [saved.position.segment, saved.position.head_start, saved.position.offset]
    tail = list(iter_records(segments, saved.position.offset, access.parse, torn, where))
    if link_problems(saved.checkpoint.head, tail, layout.domain):
        return None  # the full scan names the break and fails closed
    relied_on = {r.seq: r for r in [*saved.checkpoint.records, head, *tail]}
    access.check([relied_on[seq] for seq in sorted(relied_on)])
    checkpoint = fold(saved.checkpoint, tail)
    return Opened(
        checkpoint,
        tail[-1] if tail else head,
        Position(segment=where[0], head_start=where[1], offset=where[2]),
        tail=len(tail),
        torn=_torn(torn, access),
    )


def _rebuild(layout: Layout, witness: CheckpointFile | None, why: str, access: Access) -> Opened:
    checkpoint = start_of(layout, access.key)
    torn, where = Torn(), [0, 0, 0]
    last: Record | None = None
    records = iter_records(layout.segments(), 0, access.parse, torn, where)
    for batch in chunks(records):
        refuse(link_problems(checkpoint.head, batch, layout.domain), "")
        access.check(batch)
        _against_witness(witness, batch)
        checkpoint, last = fold(checkpoint, batch), batch[-1]
    _not_truncated(witness, checkpoint)
    position = Position(segment=where[0], head_start=where[1], offset=where[2]) if last else None
    return Opened(checkpoint, last, position, rebuilt=why, torn=_torn(torn, access))


def _against_witness(witness: CheckpointFile | None, batch: Sequence[Record]) -> None:
    if witness is None:
        return
    head = witness.checkpoint.head
    for r in batch:
        if r.seq == head.seq and r.hash != head.hash:
            raise JournalError(
                f"record {r.seq} is not the one the checkpoint recorded: the journal was "
                "rewritten after the checkpoint; nothing was done. Keep a copy and "
                "`custodian inspect` it",
                seq=r.seq,
            )


def _not_truncated(witness: CheckpointFile | None, checkpoint: Checkpoint) -> None:
    if witness is not None and witness.checkpoint.head.seq > checkpoint.head.seq:
        raise JournalError(
            f"the journal ends at record {checkpoint.head.seq}, but its checkpoint saw record "
            f"{witness.checkpoint.head.seq}: records were removed (truncated); nothing was done. "
            "Keep a copy and `custodian inspect` it",
            seq=checkpoint.head.seq,
        )


def _torn(torn: Torn, access: Access) -> str | None:
    if torn.at is None:
        return None
    if access.set_aside is None:
        return f"torn tail at byte {torn.at}, {len(torn.raw)} byte(s), {torn.reason}"
    return access.set_aside(torn)
