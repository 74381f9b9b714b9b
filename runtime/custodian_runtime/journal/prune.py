"""`custodian journal prune`: drop a domain's old segments and the content only they referred to.

Under the domain's run lock: the journal is opened (and so verified) as a run opens it, each
segment is read once, the core decides how many of the oldest go (core/fold/prune.py), the
anchor (seq and hash of the last dropped record) is written before anything is removed, and
snapshots and prompts that no kept record or the checkpoint names are removed after.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from pathlib import Path

from custodian_runtime.core.digest import canonical_json
from custodian_runtime.core.fold import api as core_journal
from custodian_runtime.core.fold.prune import (
    PruneDecision,
    SegmentFacts,
    decide,
    droppable,
    keep_problem,
)
from custodian_runtime.core.journal.kinds import content_named
from custodian_runtime.core.journal.seals import SealKey
from custodian_runtime.core.standing.record import mode_seqs
from custodian_runtime.errors import PruneRefused
from custodian_runtime.files.atomic import atomic_write_bytes, fsync_directory
from custodian_runtime.journal._checkpoint import Anchor, sealed
from custodian_runtime.journal._index import refresh
from custodian_runtime.journal._segments import Segment, lines_from
from custodian_runtime.journal.lock import RunLock
from custodian_runtime.journal.person.queue import ApprovalStore
from custodian_runtime.journal.snapshots import ContentStore
from custodian_runtime.journal.store import JournalStore, parse_line


@dataclass(frozen=True)
class Pruned:
    """What a prune did."""

    domain: str
    segments: int
    anchor: Anchor | None
    removed: dict[str, int]
    reason: str
    approvals: int = 0  # decided approval items removed (core.approvals.items.prunable)

    def text(self) -> str:
        """One line for a person."""
        items = f"; removed {self.approvals} decided approval item(s)" if self.approvals else ""
        if self.anchor is None:
            return f"{self.domain}: nothing pruned ({self.reason}){items}"
        removed = ", ".join(f"{n} {kind}" for kind, n in self.removed.items())
        return (
            f"{self.domain}: dropped {self.segments} segment(s), records up to {self.anchor.seq}; "
            f"the chain now starts after {self.anchor.seq} ({self.anchor.hash[:12]}); "
            f"removed {removed}{items}"
        )


def _facts(segment: Segment) -> tuple[SegmentFacts, set[str]]:
    """What the segment holds, and the content digests its records name."""
    facts = SegmentFacts(first_seq=segment.first_seq or 0)
    named: set[str] = set()
    for _, raw in lines_from(segment.path):
        record = parse_line(raw.rstrip(b"\n"))
        if isinstance(record, str):
            continue  # opening the journal already refused damage; a torn tail is set aside
        facts.add(record)
        named |= _content_of(record)
    return facts, named


def _content_of(record: core_journal.Record) -> set[str]:
    value = content_named(record)
    return {value} if value is not None else set()


def prune(
    memory_dir: Path, domain: str, keep: timedelta, now: datetime, key: SealKey | None = None
) -> Pruned:
    """Drop old segments (below), then the domain's decided approval items past their windows.

    `keep` is at least 31 days: what the authority reads back must survive (core/fold/prune).
    """
    too_short = keep_problem(keep)
    if too_short is not None:
        raise PruneRefused(f"not pruning {domain}: {too_short}", domain=domain)
    done = prune_segments(memory_dir, domain, keep, now, key)
    with RunLock(memory_dir, domain, run_id=f"prune-{now.strftime('%Y%m%dT%H%M%SZ')}"):
        gone = ApprovalStore(memory_dir, key).prune(domain, now, keep)
    return replace(done, approvals=gone)


def prune_segments(
    memory_dir: Path, domain: str, keep: timedelta, now: datetime, key: SealKey | None = None
) -> Pruned:
    """Drop the segments older than `now - keep` that no kept record needs."""
    store = JournalStore(memory_dir, seal_key=key)
    with RunLock(memory_dir, domain, run_id=f"prune-{now.strftime('%Y%m%dT%H%M%SZ')}"):
        opened = store.open(domain)
        layout = store.layout(domain)
        segments = layout.segments()
        gathered = [_facts(s) for s in segments]
        open_seqs = [p.authorized_seq for p in core_journal.unfinished_items(opened.history)]
        decision = decide([f for f, _ in gathered], now - keep, open_seqs)
        if decision.refused:
            raise PruneRefused(
                f"not pruning {domain}: {decision.reason} in a segment older than the cutoff. "
                "Let the next run reconcile it (or `custodian inspect --domain "
                f"{domain}` to see it), then prune again",
                domain=domain,
            )
        # A mode a person set stays in the journal: a rebuilt checkpoint must still hold it.
        current = mode_seqs(opened.checkpoint.records)
        decision = _held_back(decision, droppable([f for f, _ in gathered], current))
        if decision.drop == 0:
            return Pruned(domain, 0, None, {}, decision.reason)
        last = gathered[decision.drop - 1][0].last
        assert last is not None
        # The inbox's high-water mark survives the prune (a word put back stays journaled once).
        mark = opened.checkpoint.arrival
        anchor = sealed(
            key, Anchor(domain=domain, seq=last.seq, hash=last.hash, at=last.at, arrival=mark)
        )
        atomic_write_bytes(layout.anchor, canonical_json(anchor.model_dump()).encode("utf-8"))
        for segment in segments[: decision.drop]:
            os.unlink(segment.path)
        fsync_directory(layout.sealed_dir)
        refresh(layout, parse_line)  # the runs index, rebuilt from the segments left
        named = set().union(*(n for _, n in gathered[decision.drop :]))
        named |= set().union(set(), *(_content_of(r) for r in opened.checkpoint.records))
        removed = {
            folder: _remove_unnamed(ContentStore(memory_dir, folder), domain, named)
            for folder in ("snapshots", "prompts")
        }
        return Pruned(domain, decision.drop, anchor, removed, decision.reason)


def _held_back(decision: PruneDecision, most: int) -> PruneDecision:
    """The decision, dropping no segment that holds a mode a person set."""
    if decision.drop <= most:
        return decision
    return PruneDecision(most, f"{most} segment(s): later ones contain a mode a person set")


def _remove_unnamed(content: ContentStore, domain: str, named: set[str]) -> int:
    """Remove the domain's stored content no kept record names; return how many files went."""
    gone = 0
    for digest in sorted(content.digests(domain) - named):
        os.unlink(content.path(domain, digest))
        gone += 1
    return gone
