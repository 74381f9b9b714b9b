"""What the pages read from memory/: runs per domain, one note, one court record.

Runs are read through the journal's runs index (`journal/reader.py`: the index and the tail
after it, read-only, never repaired), so a page costs the rows it shows; a court record is
printed by `custodian inspect` itself.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from custodian_runtime.audit.inspection import EXIT_NOT_FOUND, inspect_command
from custodian_runtime.clock import utc_now
from custodian_runtime.core.approvals.ledger import Ledger
from custodian_runtime.core.fold.run_index import UseRow
from custodian_runtime.core.inert import for_prose
from custodian_runtime.core.journal.cited import citation
from custodian_runtime.core.journal.continuity import PROSE_END, PROSE_START
from custodian_runtime.core.journal.kinds import PromptRecord, of_kind
from custodian_runtime.core.journal.records import parse_at
from custodian_runtime.core.presentation.note_outcomes import Became, queued_ids, with_outcomes
from custodian_runtime.core.presentation.note_outcomes import became as became_of
from custodian_runtime.errors import CustodianError
from custodian_runtime.journal.person.queue import ApprovalStore
from custodian_runtime.journal.reader import JournalReader
from custodian_runtime.person.derived import journal_ledger
from custodian_runtime.review.chart import Chart, build_chart
from custodian_runtime.review.markdown import render_markdown, split_front_matter
from custodian_runtime.review.runs import DayTotal, RunRow, day_totals, page_count, page_of, row_of
from custodian_runtime.review.standing_history import GrantUse
from custodian_runtime.settings import Settings

NOTE_NAME = re.compile(r"^\d{8}T\d{6}Z-[a-z0-9-]+(\.\d+)?\.md$")


@dataclass(frozen=True)
class DomainRuns:
    """One domain's runs on one page, newest first, its chart and totals per day; a person's
    decisions carried out (an approval's own run in the journal) apart, newest first."""

    domain: str
    runs: tuple[RunRow, ...]
    chart: Chart
    problems: tuple[str, ...]
    days: tuple[DayTotal, ...] = ()
    pages: int = 1
    granted: Mapping[str, tuple[GrantUse, ...]] = field(default_factory=dict)  # by run id
    decisions: tuple[RunRow, ...] = ()  # on page 1 only, at most MAX_DECISIONS
    decided: int = 0  # how many in all


MAX_DECISIONS = 20


@dataclass(frozen=True)
class Note:
    """A session note: its file name, front matter as text, and its body as inert HTML."""

    name: str
    front_matter: str
    html: str


def domain_runs(settings: Settings, page: int = 1) -> list[DomainRuns]:
    """Every domain with a journal, each with page `page` of its runs (1 = newest), its chart."""
    reader = JournalReader(settings.memory_dir)
    found = []
    for domain in reader.domains():
        # The rows of the runs index, newest first: a person's decisions are listed apart from
        # the runs, so the runs are paged after the two are told apart.
        shown = reader.every_run(domain)
        digests = list(shown.rows)
        every = [row_of(d) for d in digests]
        newest = [r for r in every if not r.approval]
        decisions = [r for r in every if r.approval]
        rows = page_of(newest, page)
        scheduled = list(reversed(rows))
        chart = build_chart(scheduled, [parse_at(r.started_at) for r in scheduled])
        days = tuple(day_totals(rows))
        on_page = {r.run_id for r in rows}
        uses = (_use(u) for d in digests if d.run_id in on_page for u in d.uses)
        granted = _by_run(sorted(uses, key=_use_order))
        decided = tuple(decisions[:MAX_DECISIONS]) if page == 1 else ()
        found.append(
            DomainRuns(domain, tuple(rows), chart, shown.problems, days, page_count(newest),
                       granted, decided, len(decisions))
        )  # fmt: skip
    return found


def _use(use: UseRow) -> GrantUse:
    return GrantUse(
        domain=use.domain, run_id=use.run_id, index=use.index, at=parse_at(use.at),
        operation=use.operation, params=dict(use.params), grant_id=use.grant_id,
        outcome=use.outcome,
    )  # fmt: skip


def _use_order(use: GrantUse) -> tuple[datetime, str, int]:
    return (use.at, use.run_id, use.index)


def _by_run(uses: list[GrantUse]) -> dict[str, tuple[GrantUse, ...]]:
    found: dict[str, list[GrantUse]] = {}
    for use in uses:
        found.setdefault(use.run_id, []).append(use)
    return {run_id: tuple(found_) for run_id, found_ in found.items()}


def granted(settings: Settings, run_id: str | None = None) -> list[GrantUse]:
    """Every write run under a grant, in every domain (or in run `run_id`), newest first."""
    reader = JournalReader(settings.memory_dir)
    uses = [_use(u) for d in reader.domains() for u in reader.grant_uses(d)]
    chosen = [u for u in uses if run_id in (None, u.run_id)]
    return sorted(chosen, key=lambda u: u.at, reverse=True)


def note_run(settings: Settings, name: str) -> str | None:
    """The run whose session note is `name`, if a journal says so."""
    return next((run for run, note in run_notes(settings).items() if note == name), None)


def run_notes(settings: Settings, domains: Iterable[str] | None = None) -> dict[str, str]:
    """Run id -> its note's file name, for every run of every domain (or of `domains`)."""
    reader = JournalReader(settings.memory_dir)
    chosen = reader.domains() if domains is None else sorted(set(domains))
    return {run: note for domain in chosen for run, note in reader.notes(domain).items()}


def court_record(settings: Settings, run_id: str) -> str | None:
    """The court record of `run_id`, printed by `custodian inspect` itself; None if unknown."""
    out = io.StringIO()
    code = inspect_command(settings.memory_dir, run_id, None, out, settings.seal_key)
    return None if code == EXIT_NOT_FOUND else out.getvalue()


def canon_shown(settings: Settings, run_id: str) -> tuple[str, ...]:
    """What of the canon the run's prompt showed, one piece a line (empty: none recorded)."""
    reader = JournalReader(settings.memory_dir, seal_key=settings.seal_key)
    domain = reader.find_run(run_id)
    records = reader.run_records(domain, run_id) if domain is not None else []
    prompt = next((entry for _, entry in of_kind(records, PromptRecord)), None)
    return tuple(citation(c) for c in prompt.canon or ()) if prompt is not None else ()


def note(settings: Settings, name: str) -> Note | None:
    """The note `memory/working/<name>` rendered, each item it queued with what became of it,
    or None when there is no such note."""
    if not NOTE_NAME.match(name):
        return None
    path = Path(settings.memory_dir) / "working" / name
    if not path.is_file():
        return None
    text = for_prose(path.read_text(encoding="utf-8", errors="replace"))
    run_id = note_run(settings, name)
    if run_id is not None:  # what became of the items it queued, as the journal says now
        text = with_outcomes(text, became(settings, run_id, queued_ids(text)))
    front, body = split_front_matter(text)
    # The prose markers are HTML comments for machines; with raw HTML off they would show.
    body = body.replace(PROSE_START, "").replace(PROSE_END, "")
    return Note(name, front, render_markdown(body))


def became(settings: Settings, run_id: str, ids: list[str]) -> dict[str, Became]:
    """What became of each item of `ids` that run `run_id` queued: the status the journal says
    (its checkpoint's ledger), else the item's own (pending, or expired), in a sentence."""
    store, now = ApprovalStore(settings.memory_dir, settings.seal_key), utc_now()
    ledgers: dict[str, Ledger] = {}
    found = {}
    for approval_id in ids:
        try:
            item = store.get(approval_id, verify=False)
        except CustodianError:
            item = None
        if item is None or item.run_id != run_id:
            continue
        if item.domain not in ledgers:
            ledgers[item.domain] = _ledger(settings, item.domain)
        found[approval_id] = became_of(item, ledgers[item.domain].status_of(item.id), now)
    return found


def _ledger(settings: Settings, domain: str) -> Ledger:
    try:
        return journal_ledger(settings.memory_dir, settings.seal_key, domain)
    except CustodianError:
        return Ledger()  # an unreadable journal: `custodian inspect` names it; the files speak
