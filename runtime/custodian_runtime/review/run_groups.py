"""The queue as runs: each run's pending items together, in the order its plan proposed them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from custodian_runtime.core.journal.api import Record
from custodian_runtime.core.journal.kinds import Queued, RecordDataError, decode
from custodian_runtime.errors import CustodianError
from custodian_runtime.journal.store import JournalStore
from custodian_runtime.review.pending import PendingView
from custodian_runtime.settings import Settings


@dataclass(frozen=True)
class RunGroup:
    """One run's pending items, in its plan's order, and the card after the group (or "")."""

    run_id: str
    views: tuple[PendingView, ...]
    after: str = ""

    def following(self, index: int) -> str:
        """The id of the card after card `index`: the reviewer's place once it is decided."""
        rest = self.views[index + 1 :]
        return rest[0].item.id if rest else self.after


def queued_order(records: Iterable[Record]) -> dict[str, int]:
    """Approval id -> its index in the plan that queued it, from the journal's `queued` records."""
    found = {}
    for record in records:
        if record.kind != Queued.KIND:
            continue
        try:
            entry = decode(record)
        except RecordDataError:
            continue  # `custodian inspect` names a damaged record; the queue still shows
        if isinstance(entry, Queued) and entry.approval_id and str(entry.index).isdigit():
            found[entry.approval_id] = int(str(entry.index))
    return found


def plan_order(settings: Settings, domains: Iterable[str]) -> dict[str, int]:
    """Each queued item's plan index, read from the journals of `domains` ({} if unreadable)."""
    store = JournalStore(settings.memory_dir)
    found: dict[str, int] = {}
    for domain in sorted(set(domains)):
        try:
            found.update(queued_order(store.scan(domain).records))
        except CustodianError:
            continue
    return found


def by_run(views: Sequence[PendingView], order: Mapping[str, int]) -> list[RunGroup]:
    """The views grouped by run, runs in the queue's order (oldest first), items by plan index."""
    runs: dict[str, list[PendingView]] = {}
    for view in views:
        runs.setdefault(view.item.run_id, []).append(view)
    groups = []
    for run_id, found in runs.items():
        ranked = sorted(found, key=lambda v: (order.get(v.item.id, 1 << 30), v.item.id))
        groups.append(RunGroup(run_id, tuple(ranked)))
    firsts = [g.views[0].item.id for g in groups[1:]] + [""] if groups else []
    return [RunGroup(g.run_id, g.views, after) for g, after in zip(groups, firsts, strict=True)]
