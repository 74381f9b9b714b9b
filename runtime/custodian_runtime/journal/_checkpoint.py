"""Open a domain's journal for a run from its checkpoint and tail, never the whole journal.

The checkpoint file holds the folded checkpoint (core/fold/checkpoint.py) and where its head ends on
disk. Opening reads the head's line there and checks its hash, reads the records after it (the
tail a killed run left), checks that they continue the chain, and folds them in. A missing or
inconsistent checkpoint costs one full streaming scan that rebuilds it; that scan verifies every
record, so a tampered or truncated journal fails closed with JournalError.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from custodian_runtime.core.digest import canonical_json, strict_loads
from custodian_runtime.core.fold.checkpoint import VERSION, Checkpoint, Head, empty, own_problems
from custodian_runtime.core.journal.records import Problem, Record, record_hash
from custodian_runtime.core.journal.seals import Sealer, SealKey
from custodian_runtime.errors import JournalError
from custodian_runtime.files.atomic import atomic_write_bytes
from custodian_runtime.journal._segments import Layout, Segment, lines_from, read_range

CHUNK = 1024


class Position(BaseModel):
    """Where the checkpoint's head record lies: its segment (by first seq) and byte range."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    segment: int = Field(ge=1)
    head_start: int = Field(ge=0)
    offset: int = Field(ge=1)


class Anchor(BaseModel):
    """What a prune leaves: the last dropped record's seq and hash, where the chain resumes."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    domain: str
    seq: int = Field(ge=1)
    hash: str
    at: str | None = None
    # The highest inbox arrival number the dropped records absorbed: a word's file put back
    # after the prune is still never journaled again (None: an anchor written before it).
    arrival: int | None = Field(default=None, ge=0)
    seal: str | None = None

    def head(self) -> Head:
        """The anchor as the head the kept records continue from."""
        return Head(seq=self.seq, hash=self.hash, at=self.at)

    def sealed_fields(self) -> dict[str, object]:
        """What its seal covers: every field but the seal (an older anchor's, as written)."""
        skip = {"seal"} if self.arrival is not None else {"seal", "arrival"}
        return self.model_dump(mode="json", exclude=skip)


class CheckpointFile(BaseModel):
    """The checkpoint file on disk."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    checkpoint: Checkpoint
    position: Position
    seal: str | None = None


@dataclass(frozen=True)
class Opened:
    """A domain's journal as a run needs it: the folded checkpoint and where its head lies."""

    checkpoint: Checkpoint
    head: Record | None
    position: Position | None
    tail: int = 0
    rebuilt: str | None = None
    torn: str | None = None

    @property
    def history(self) -> list[Record]:
        """The records a run's views read (the checkpoint's, with the tail folded in)."""
        return list(self.checkpoint.records)


Parse = Callable[[bytes], "Record | str"]


_CHECKPOINT_PREFIX = b"custodian journal checkpoint v1\n"
_ANCHOR_PREFIX = b"custodian journal anchor v1\n"


Sealable = TypeVar("Sealable", "CheckpointFile", "Anchor")


def _unsealed(value: BaseModel) -> dict[str, object]:
    if isinstance(value, Anchor):
        return value.sealed_fields()
    return value.model_dump(mode="json", exclude={"seal"})


def file_seal(key: SealKey, prefix: bytes, value: BaseModel) -> str:
    """HMAC of a file's canonical JSON without its seal."""
    return key.mac(prefix, canonical_json(_unsealed(value)))


def sealed(key: SealKey | None, value: Sealable) -> Sealable:
    """The file with its seal set (unchanged without a key)."""
    if key is None:
        return value
    prefix = _ANCHOR_PREFIX if isinstance(value, Anchor) else _CHECKPOINT_PREFIX
    return value.model_copy(update={"seal": file_seal(key, prefix, value)})


def file_sealer(key: SealKey, value: CheckpointFile | Anchor) -> Sealer | None:
    """Which key sealed the checkpoint or anchor file (None: neither, or no seal)."""
    prefix = _ANCHOR_PREFIX if isinstance(value, Anchor) else _CHECKPOINT_PREFIX
    return key.sealer(prefix, canonical_json(_unsealed(value)), value.seal)


def _seal_holds(key: SealKey | None, value: CheckpointFile | Anchor) -> bool:
    return key is None or file_sealer(key, value) is not None


def load_anchor(layout: Layout, key: SealKey | None = None) -> Anchor | None:
    """The anchor of a pruned journal, or None; an unreadable or unsealed anchor fails closed."""
    if not layout.anchor.exists():
        return None
    try:
        anchor = Anchor.model_validate(strict_loads(layout.anchor.read_bytes()))
    except (ValueError, ValidationError) as exc:
        raise JournalError(
            f"the anchor {layout.anchor.name} cannot be read ({exc}); the chain has no start",
            path=str(layout.anchor),
        ) from exc
    if not _seal_holds(key, anchor):
        raise JournalError(
            f"the anchor {layout.anchor.name} carries no valid seal: CUSTODIAN_SEAL_KEY is set, "
            "and someone without it may have moved the chain's start; nothing was done",
            path=str(layout.anchor),
        )
    return anchor


def load_checkpoint(
    layout: Layout, key: SealKey | None = None
) -> tuple[CheckpointFile | None, str]:
    """The checkpoint file, or None and why it cannot be used."""
    if not layout.checkpoint.exists():
        return None, "no checkpoint"
    try:
        saved = CheckpointFile.model_validate(strict_loads(layout.checkpoint.read_bytes()))
    except (OSError, ValueError, ValidationError) as exc:
        return None, f"checkpoint unreadable ({str(exc).splitlines()[0]})"
    if saved.checkpoint.v != VERSION:
        return None, f"checkpoint is of version {saved.checkpoint.v}, not {VERSION}"
    if saved.checkpoint.domain != layout.domain:
        return None, f"checkpoint is of domain {saved.checkpoint.domain!r}"
    problems = own_problems(saved.checkpoint)
    if problems:
        return None, f"checkpoint inconsistent ({problems[0]})"
    if not _seal_holds(key, saved):
        return None, "checkpoint carries no valid seal"
    return saved, ""


def save_checkpoint(layout: Layout, saved: CheckpointFile) -> None:
    """Write the checkpoint file atomically."""
    atomic_write_bytes(layout.checkpoint, canonical_json(saved.model_dump(mode="json")).encode())


def segment_of(layout: Layout, first_seq: int) -> Segment | None:
    """The segment whose first record has `first_seq`."""
    return next((s for s in layout.segments() if s.first_seq == first_seq), None)


@dataclass
class Torn:
    """A torn last line of the active file: where it starts, its bytes, and why it is torn."""

    at: int | None = None
    raw: bytes = b""
    reason: str = ""
    line_start: int = 0


def iter_records(
    segments: Sequence[Segment], start: int, parse: Parse, torn: Torn, where: list[int]
) -> Iterator[Record]:
    """Every record from byte `start` of the first segment on, one line at a time.

    A bad last line of the active file is torn (kept in `torn`); damage anywhere else raises
    JournalError. `where` holds the segment's first seq and the start and end of the last record.
    """
    for number, segment in enumerate(segments):
        for at, raw in lines_from(segment.path, start if number == 0 else 0):
            parsed = parse(raw.rstrip(b"\n")) if raw.endswith(b"\n") else "no trailing newline"
            if torn.at is not None:
                _damaged(segment, torn.at, torn.reason)
            if isinstance(parsed, Record):
                where[:] = [segment.first_seq or parsed.seq, at, at + len(raw)]
                yield parsed
            elif segment.active:
                torn.at, torn.raw, torn.reason = at, raw, parsed
            else:
                _damaged(segment, at, parsed)


def _damaged(segment: Segment, at: int, reason: str) -> None:
    raise JournalError(
        f"journal {segment.path.name} is damaged at byte {at}: {reason}; records after it "
        "cannot be trusted. Run `custodian inspect` and move the file aside by hand to start a "
        "new journal",
        path=str(segment.path),
    )


def chunks(records: Iterator[Record], size: int = CHUNK) -> Iterator[list[Record]]:
    """Records in lists of at most `size`."""
    batch: list[Record] = []
    for record in records:
        batch.append(record)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def refuse(problems: Sequence[Problem], what: str) -> None:
    """Fail closed on the first broken link."""
    if problems:
        first = problems[0]
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise JournalError(
            f"the journal does not verify ({first}{more}){what}; nothing was done. "
            "`custodian inspect --domain D` shows where it breaks; keep a copy of the journal "
            "before repairing it",
            seq=first.seq,
        )


def start_of(layout: Layout, key: SealKey | None = None) -> Checkpoint:
    """The checkpoint a full scan starts from: empty, or the anchor of a pruned journal."""
    anchor = load_anchor(layout, key)
    base = empty(layout.domain)
    if anchor is None:
        return base
    return base.model_copy(update={"head": anchor.head(), "arrival": anchor.arrival or 0})


def head_line(layout: Layout, saved: CheckpointFile, parse: Parse) -> Record | None:
    """The checkpoint's head record, read where the checkpoint says it ends (None if not there)."""
    segment = segment_of(layout, saved.position.segment)
    if segment is None:
        return None
    raw = read_range(segment.path, saved.position.head_start, saved.position.offset)
    if not raw.endswith(b"\n"):
        return None
    record = parse(raw[:-1])
    head = saved.checkpoint.head
    if not isinstance(record, Record) or (record.seq, record.hash) != (head.seq, head.hash):
        return None
    return record if record_hash(record) == record.hash else None


def later_segments(layout: Layout, first_seq: int) -> list[Segment]:
    """The segment starting at `first_seq` and every one after it."""
    found = layout.segments()
    at = next((i for i, s in enumerate(found) if s.first_seq == first_seq), None)
    return [] if at is None else found[at:]
