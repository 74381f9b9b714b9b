"""Does showing the review page's runs cost the same on a long journal as on a short one?

For journals of 100 and 20,000 records (runs of 10 records each: observed, model answer,
rulings, a note, as a run writes them, and committed as a run commits them), it times the runs
page's read, `review.pages.domain_runs` (page 1: the newest 50 runs, their chart, day totals and
grant uses), the two journals read in turn each round in one process, and prints the medians
and the median of the paired ratios; and the same for 10 rows of each (`JournalReader.runs`), as
many as the short journal holds. Beside them, the page read the old way: every record scanned.
Nothing here asserts a target.

    python bench/runs_page.py
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from statistics import median

from custodian_runtime.core.fold.run_index import digests_of
from custodian_runtime.journal.reader import JournalReader
from custodian_runtime.journal.store import JournalStore
from custodian_runtime.review.pages import domain_runs
from custodian_runtime.review.runs import page_of, row_of
from custodian_runtime.settings import Settings, load_settings

HISTORIES = (100, 20_000)
PER_RUN = 10
ROUNDS = 30
SCAN_ROUNDS = 2  # the old way takes seconds on the long journal
SAME = 10  # rows: as many as the short journal has runs


class Clock:
    """A clock that moves a minute a read: a journal of months in a moment."""

    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(minutes=1)
        return self.now


def history(memory: Path, records: int) -> None:
    """A journal of `records` records: finished runs of PER_RUN records each."""
    journals, clock = JournalStore(memory, fsync=lambda fd: None), Clock()
    overview = {"domains": [{"domain": "website", "open_flags": 2}]}
    usage = {"input_tokens": 6120, "output_tokens": 412}
    for run in range(records // PER_RUN):
        writer = journals.writer("website", f"r-{run:06d}", clock, journals.open("website"))
        writer.append("run_started", {"model_spec": "offline"})
        writer.append("observed", {"state_digest": f"s{run}", "overview": overview})
        writer.append("model_response", {"provider": "offline", "model": "rules", "usage": usage})
        for index in range(PER_RUN - 5):
            writer.append("ruling", {"index": index, "outcome": "deny"})
        writer.append("note_written", {"path": f"n-{run}.md", "status": "completed"})
        counts = {"executed": 0, "queued": 0, "denied": PER_RUN - 5, "failed": 0}
        writer.append("finished", {"status": "completed", "exit_code": 0, "counts": counts})
        journals.commit(writer)


def settings_of(memory: Path) -> Settings:
    """The settings `custodian review --memory M` resolves to."""
    flags = {"memory": str(memory)}
    return load_settings(flags, {}, memory, domain_required=False, hub_required=False)


def paired(reads: Sequence[Callable[[], object]], rounds: int) -> list[list[float]]:
    """Milliseconds of each read, the reads taken in turn each round (one round first, to warm
    up), so a busy machine weighs on both alike."""
    times: list[list[float]] = [[] for _ in reads]
    for round_ in range(rounds + 1):
        for read, found in zip(reads, times, strict=True):
            started = time.perf_counter()
            read()
            if round_:
                found.append((time.perf_counter() - started) * 1000)
    return times


def scanned(memory: Path) -> None:
    """The same page read without the index: every record scanned and folded into its run's row."""
    records = JournalStore(memory).scan("website").records
    page_of([row_of(d) for d in reversed(digests_of(records))], 1)


def main() -> None:
    """Print the figures."""
    with tempfile.TemporaryDirectory() as tmp:
        memories = [Path(tmp) / f"memory-{records}" for records in HISTORIES]
        for memory, records in zip(memories, HISTORIES, strict=True):
            history(memory, records)
        settings = [settings_of(memory) for memory in memories]
        pages = [partial(domain_runs, s, 1) for s in settings]
        same = [partial(JournalReader(m).runs, "website", 1, SAME) for m in memories]
        page_ms = paired(pages, ROUNDS)
        same_ms = paired(same, ROUNDS)
        scan_ms = paired([partial(scanned, m) for m in memories], SCAN_ROUNDS)
        for n, records in enumerate(HISTORIES):
            shown = len(domain_runs(settings[n], 1)[0].runs)
            print(
                f"journal of {records:>6} records ({records // PER_RUN:>4} runs): runs page "
                f"{median(page_ms[n]):6.2f} ms ({shown} rows); {SAME} rows "
                f"{median(same_ms[n]):5.2f} ms; scanned whole {median(scan_ms[n]):8.1f} ms"
            )
        ratio = [long / short for short, long in zip(*page_ms, strict=True)]
        same_ratio = [long / short for short, long in zip(*same_ms, strict=True)]
        print(
            f"{HISTORIES[1]} records / {HISTORIES[0]}, paired: runs page {median(ratio):.2f}x "
            f"(50 rows against 10); {SAME} rows each {median(same_ratio):.2f}x"
        )


if __name__ == "__main__":
    main()
