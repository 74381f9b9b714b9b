"""When a watched domain is due: what the watch learned of it after its last run here.

After each run the watch reads the domain's checkpoint (read-only) and keeps a `Learned`:
the revision the domain's last run saw, when time alone makes it due (the skip window, a
pending approval's expiry), the local work that makes it due at every pass (the same `LocalWork`
and `why_read` a run asks with: run/_unchanged.py, core/skip/unchanged.py) and the journal file's
stamp. It is kept across a restart as a cache (watch/_seen.py) that the stamps check; a domain
the watch knows nothing of is due, and the run itself decides (a 304 when nothing moved) under
its lock, from its journal.

A journal changed outside this watch makes the domain due, unless all that was appended is the
commit of runs (another `watch` on the same volume, a `custodian run`): then the watch learns
what those runs left, as after a run of its own (`relearned`), so two watches do not wake each
other with their own commits. A person's word journaled outside (a mode, a grant, a decision:
`PERSON_RUN_FIRST`), a journal rotated or rewritten, or a line it cannot read makes it due.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from custodian_runtime.canon.library import library_paths
from custodian_runtime.core.approvals.items import ApprovalItem
from custodian_runtime.core.fold import api as core_journal
from custodian_runtime.core.journal.records import PERSON_RUN_FIRST
from custodian_runtime.core.skip.unchanged import LocalWork, why_read
from custodian_runtime.errors import CustodianError
from custodian_runtime.journal.person.inbox import Inbox
from custodian_runtime.journal.person.queue import ApprovalStore
from custodian_runtime.journal.store import JournalStore, parse_line
from custodian_runtime.run import work_waiting
from custodian_runtime.settings import Settings

Stamp = tuple[int, int, int] | None  # (inode, mtime_ns, size) of a file; None when absent


@dataclass(frozen=True)
class Learned:
    """What the watch learned of a domain after its last run here."""

    revision: int | None  # the hub revision the domain's last run saw
    until: datetime | None  # when time alone makes it due (skip window, an approval expiring)
    waiting: str | None  # local work that makes it due at every pass; None when nothing waits
    stamp: object  # the domain's files (journal, guidance) when learned: a change makes it due


def due(
    known: Learned | None, revision: int | None, now: datetime, stamp: object, decided: bool
) -> str | None:
    """Why the domain runs in this pass, or None: the hub did not move it and nothing waits."""
    if known is None:
        return "not run since the watch started"
    if known.waiting is not None:
        return known.waiting
    if revision is None or known.revision is None:
        return "the hub names no revision (contract v1.1)"
    if revision != known.revision:
        return f"revision {known.revision} -> {revision}"
    if known.until is not None and now >= known.until:
        return "the skip window passed, or an approval expired"
    if stamp != known.stamp:
        return "its journal changed outside this watch"
    if decided:
        return "a person's decision waits to be carried out"
    return None


def stamp_of(path: Path | str) -> Stamp:
    """The file's identity and size now (one stat)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_size)


def canon_stamp(canon: Path) -> tuple[Stamp, ...]:
    """The canon's stamp: its directory, the constitution, the guidance folder and every other
    canon file (any of them may be shown to every domain: docs/canon.md)."""
    fixed = (canon, canon / "constitution.md", canon / "domains")
    return tuple(stamp_of(p) for p in (*fixed, *(canon / p for p in library_paths(canon))))


def runs_only(kinds: Sequence[str] | None) -> bool:
    """Whether records of these kinds, appended outside this watch, are runs' commits alone:
    no person's word among them (None: what was appended is unknown)."""
    return kinds is not None and not any(kind in PERSON_RUN_FIRST for kind in kinds)


def appended_kinds(path: Path, before: Stamp, after: Stamp) -> list[str] | None:
    """The kinds of the records appended to the journal file between two stamps of it; None
    when it is not the same file grown (rotated, rewritten, gone) or a line is unreadable."""
    if before is None or after is None or before[0] != after[0] or after[2] < before[2]:
        return None
    with open(path, "rb") as journal:
        journal.seek(before[2])
        added = journal.read(after[2] - before[2])
    records = [parse_line(line) for line in added.splitlines() if line.strip()]
    if (not added.endswith(b"\n") and added) or any(isinstance(r, str) for r in records):
        return None  # a line still being written, or damage: the run reads and says
    return [r.kind for r in records if not isinstance(r, str)]


def relearned(
    settings: Settings, domain: str, known: Learned | None, stamp: object, now: datetime
) -> Learned | None:
    """What the domain's journal says now, when since `known` only runs appended to it (and its
    guidance did not change); None otherwise: the pass decides with `known`."""
    if known is None or stamp == known.stamp:
        return None
    if not (isinstance(stamp, tuple) and isinstance(known.stamp, tuple)):
        return None
    (before, guidance_before), (after, guidance_after) = known.stamp, stamp
    if guidance_before != guidance_after:
        return None
    path = JournalStore(settings.memory_dir).path(domain)
    if not runs_only(appended_kinds(path, before, after)):
        return None
    return learn(settings, domain, now, None, stamp)[0]


def guidance_stamps(folder: Path) -> dict[str, Stamp]:
    """Each domain's guidance file (`<domain>.md`) in `folder`, stamped as `stamp_of` would:
    one listing for a pass, not one stat per domain (a domain without one is absent)."""
    try:
        entries = list(os.scandir(folder))
    except (FileNotFoundError, NotADirectoryError):
        return {}
    found: dict[str, Stamp] = {}
    for entry in entries:
        if entry.name.endswith(".md"):
            found[entry.name[:-3]] = stamp_of(entry.path)
    return found


def learn(
    settings: Settings, domain: str, now: datetime, handed_revision: int | None, stamp: object
) -> tuple[Learned, tuple[ApprovalItem, ...]]:
    """What the domain's checkpoint and queue say now (after a run): when it is next due, and
    the queue's hot items (from its index), which the domain's figures read too.

    `handed_revision`: the revision the run was handed when it exited 0 (it saw at least that);
    `stamp`: the domain's files, taken before this reads them, so a later change shows.
    """
    store = JournalStore(settings.memory_dir, seal_key=settings.seal_key)
    history = store.open(domain, repair=False).history
    queue = ApprovalStore(settings.memory_dir, settings.seal_key, write_index=False).view(
        domain, now
    )
    last = core_journal.last_completed_observation(list(history))
    window = timedelta(hours=settings.limits.skip_window_hours)
    if last is None:
        waiting = why_read(None, now, window, LocalWork())  # no completed run: it reads all
        return Learned(None, None, waiting, stamp), queue.items
    work = work_waiting(history, queue.items, last, now, decisions=0)
    revisions = [r for r in (last.revision, handed_revision) if r is not None]
    until = min([last.finished_at + window, *_expiries(queue.items, now)])
    known = Learned(max(revisions, default=None), until, why_read(last, now, window, work), stamp)
    return known, queue.items


def _expiries(items: tuple[ApprovalItem, ...], now: datetime) -> list[datetime]:
    return [i.expires_at for i in items if i.status == "pending" and i.expires_at > now]


def decisions_waiting(memory_dir: Path) -> Mapping[str, int]:
    """Per domain, the words a person kept while it was busy (a listing when there are none)."""
    inbox = Inbox(memory_dir)
    try:
        counts = {domain: inbox.count(domain) for domain in inbox.domains()}
    except (CustodianError, OSError):
        return {}  # an unreadable inbox: the domain's next run reads it and says why
    return {domain: n for domain, n in counts.items() if n}
