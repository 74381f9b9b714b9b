"""Verify a whole domain journal for `inspect`: streaming, segment by segment, window by window.

Memory stays bounded by one window of whole runs (two, with the look-ahead that lets a run's
summary see the `finished` record a later run closed it with) and the checkpoint. Damage and a
torn tail are reported, never repaired.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace

from custodian_runtime.core.approvals.ledger import Ledger, fold_ledger
from custodian_runtime.core.fold.api import unfinished_items
from custodian_runtime.core.fold.checkpoint import Checkpoint
from custodian_runtime.core.fold.render import seal_summary
from custodian_runtime.core.fold.runs import RunSummary, run_summaries
from custodian_runtime.core.fold.settle import open_write_lines
from custodian_runtime.core.fold.stream import step, windows
from custodian_runtime.core.journal.kinds import Finished, read_as
from custodian_runtime.core.journal.records import Problem, Record
from custodian_runtime.core.journal.seals import SealKey, seals_seen, verify_seals
from custodian_runtime.journal._checkpoint import start_of
from custodian_runtime.journal._segments import Layout, Segment, lines_from
from custodian_runtime.journal.store import parse_line

WINDOW = 2048


@dataclass
class DomainReport:
    """What a full verification of one domain found."""

    domain: str
    records: int = 0
    last: str = "-"
    damage: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    summaries: list[RunSummary] = field(default_factory=list)
    deferred: dict[str, RunSummary] = field(default_factory=dict)
    context: list[Record] | None = None  # the records around one run, for its court record
    seal_key: SealKey | None = None
    sealed: int = 0
    bad_seals: list[Problem] = field(default_factory=list)
    # The writes still open after the last record, listed with the id `journal settle` takes.
    open_writes: list[str] = field(default_factory=list)
    # What the journal says of each approval item (core/approvals/ledger.py).
    ledger: Ledger = field(default_factory=Ledger)
    # The ids of the last words the journal absorbed from the inbox, and the highest arrival
    # number it absorbed (core/fold/checkpoint.py).
    words: frozenset[str] = frozenset()
    arrival: int = 0

    def seal_lines(self) -> list[str]:
        """The court record's `seals` line for the whole domain."""
        return seal_summary(
            self.records, self.sealed, self.bad_seals, keyed=self.seal_key is not None
        )

    def problem_lines(self) -> list[str]:
        """Damage first, then every broken rule in journal order, each once."""
        seen: set[str] = set()
        lines = list(self.damage)
        for problem in sorted(self.problems, key=lambda p: p.seq):
            text = str(problem)
            if text not in seen:
                seen.add(text)
                lines.append(text)
        return lines


def _records(layout: Layout, report: DomainReport) -> Iterator[Record]:
    """Every parseable record; bad lines become damage (a bad last line is a torn tail)."""
    segments = layout.segments()
    for number, segment in enumerate(segments):
        count = 0
        for _, raw in lines_from(segment.path):
            count += 1
            last = number == len(segments) - 1
            parsed = parse_line(raw.rstrip(b"\n")) if raw.endswith(b"\n") else None
            if isinstance(parsed, Record):
                yield parsed
                continue
            report.damage.append(_damage(segment, count, raw, parsed, last))


def _damage(segment: Segment, line: int, raw: bytes, why: str | None, last: bool) -> str:
    name = segment.path.name
    if not segment.active:
        name = f"{segment.path.parent.name}/{name}"
    reason = "no trailing newline" if why is None else why
    if last and segment.active and why is None:
        reason = f"torn tail, {len(raw)} byte(s), {reason} (the next run sets it aside)"
    return f"{name} line {line}: {reason}"


def verify_domain(
    layout: Layout, run_id: str | None = None, seal_key: SealKey | None = None
) -> DomainReport:
    """Check every record of the domain (and its seal, with a key); keep `run_id`'s context."""
    report = DomainReport(layout.domain, seal_key=seal_key)
    checkpoint = start_of(layout, seal_key)
    previous: list[Record] | None = None
    for window in windows(_records(layout, report), WINDOW):
        if previous is not None:
            checkpoint = _check(report, checkpoint, previous, window, run_id)
        previous = window
    if previous is not None:
        _check(report, checkpoint, previous, [], run_id, final=True)
    return report


def _check(
    report: DomainReport,
    checkpoint: Checkpoint,
    window: Sequence[Record],
    following: Sequence[Record],
    run_id: str | None,
    *,
    final: bool = False,
) -> Checkpoint:
    """Check one window against the checkpoint before it; return the checkpoint after it."""
    after, problems = step(checkpoint, window, final=final)
    report.problems.extend(problems)
    report.sealed += seals_seen(window)
    if report.seal_key is not None:
        bad = verify_seals(window, report.seal_key)
        report.bad_seals.extend(bad)
        report.problems.extend(bad)
    report.records += len(window)
    report.ledger = fold_ledger(report.ledger, window)
    report.last = window[-1].ref
    starts = _runs_begun(window)
    _close_deferred(report, window)
    for summary in run_summaries(window):
        if summary.run_id not in starts:
            continue
        if summary.status == "no finished record" and not final:
            report.deferred[summary.run_id] = summary  # a later run may close it
        else:
            report.summaries.append(summary)
    if final:
        report.words = frozenset(after.words)
        report.arrival = after.arrival
        report.open_writes = open_write_lines(report.domain, unfinished_items(after.records))
        report.summaries.extend(report.deferred.values())
        report.summaries.sort(key=lambda s: s.first_seq)
    if run_id is not None and report.context is None and run_id in starts:
        report.context = [*checkpoint.records, *window, *following]
    return after


def _close_deferred(report: DomainReport, window: Sequence[Record]) -> None:
    """A run that began in an earlier window, closed (as interrupted) by a run in this one."""
    for r in window:
        summary = report.deferred.pop(r.run_id, None) if r.kind == "finished" else None
        if summary is None:
            continue
        ended = read_as(r, Finished)
        report.summaries.append(
            replace(
                summary,
                status=str(ended.status),
                exit_code=ended.exit_code,
                counts=dict(ended.counts or {}),
                last_seq=r.seq,
                records=summary.records + 1,
            )
        )


def _runs_begun(window: Sequence[Record]) -> set[str]:
    """Runs whose first record is in the window (not those a `finished` here only closes)."""
    first: dict[str, Record] = {}
    for r in window:
        first.setdefault(r.run_id, r)
    return {run for run, r in first.items() if r.kind != "finished"}
