"""Verifying a journal window by window, in memory bounded by a window and the checkpoint.

A window is a run of whole runs (it is cut only before a run's first record). Each window is
checked against the checkpoint of everything before it: the chain continues the checkpoint's
head, and the spine rules hold over the checkpoint's records and the window. A write or a run is
only "unfinished" once the last window is checked: a later run may still close it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from custodian_runtime.core.fold.checkpoint import Checkpoint, fold, link_problems
from custodian_runtime.core.journal.records import RUN_FIRST_KINDS, Problem, Record
from custodian_runtime.core.ruling.spine import unfinished_items, verify_spine


def windows(records: Iterable[Record], size: int) -> Iterator[list[Record]]:
    """Records in lists of whole runs, each cut before a run's first record once past `size`."""
    batch: list[Record] = []
    for record in records:
        if len(batch) >= size and record.kind in RUN_FIRST_KINDS:
            yield batch
            batch = []
        batch.append(record)
    if batch:
        yield batch


def window_problems(
    checkpoint: Checkpoint, window: Sequence[Record], *, final: bool
) -> list[Problem]:
    """Chain and spine problems the window brings (unfinished writes only when `final`)."""
    found = link_problems(checkpoint.head, window, checkpoint.domain)
    context = [*checkpoint.records, *window]
    spine = verify_spine(context)
    if not final:
        open_at = {p.authorized_seq for p in unfinished_items(context)}
        spine = [p for p in spine if not _unfinished(p, open_at)]
    return [*found, *spine]


def _unfinished(problem: Problem, open_at: set[int]) -> bool:
    """A write or a run still open: a later run may close it, so only the last window says."""
    if problem.message.startswith("run has no finished record but a later run started"):
        return True
    return (
        problem.kind == "authorized"
        and problem.seq in open_at
        and "no receipt, failed or stale record" in problem.message
    )


def step(
    checkpoint: Checkpoint, window: Sequence[Record], *, final: bool
) -> tuple[Checkpoint, list[Problem]]:
    """The window's problems and the checkpoint after it."""
    return fold(checkpoint, window), window_problems(checkpoint, window, final=final)
