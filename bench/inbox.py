"""Does absorbing a person's kept words cost the same on a long journal as on a short one?

For journals of 100 and 20,000 records, it keeps 50 words in the domain's inbox and absorbs them
(one lock, "already journaled?" read from the checkpoint), then absorbs them again as if every file
came back (nothing is journaled twice). It also times `kept_standing` with an empty inbox (one
directory listing). It prints the figures; nothing here asserts a target.

    python bench/inbox.py
"""

from __future__ import annotations

import statistics
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from custodian_runtime.clock import utc_now
from custodian_runtime.core.journal.kinds import PolicySet
from custodian_runtime.core.journal.words import Word, standing_word
from custodian_runtime.core.standing.record import Standing
from custodian_runtime.journal.person.inbox import Inbox, new_word_id
from custodian_runtime.journal.person.standing_store import StandingStore
from custodian_runtime.journal.store import JournalStore

HISTORIES = (100, 20_000)
WORDS = 50


def history(memory: Path, records: int) -> None:
    """A journal of `records` records: finished runs of 100 records each."""
    journals = JournalStore(memory, fsync=lambda fd: None)
    for run in range(records // 100):
        writer = journals.writer("website", f"r-{run}", utc_now, journals.open("website"))
        writer.append("run_started", {})
        for n in range(98):
            writer.append("note_written", {"path": f"note-{n}.md", "status": "completed"})
        writer.append("finished", {"status": "completed", "exit_code": 0})
        journals.commit(writer)


def kept(memory: Path) -> list[Word]:
    """WORDS mode changes kept while the domain was busy."""
    inbox = Inbox(memory)
    for n in range(WORDS):
        entry = PolicySet(operation="create_task", mode="ask", by="ana", reason=str(n))
        inbox.append(standing_word("website", entry, datetime.now(UTC), new_word_id()))
    return inbox.waiting("website")


def measure(records: int) -> tuple[float, float, int]:
    """Seconds to absorb WORDS words, to absorb them again (put back), and how many were new."""
    with tempfile.TemporaryDirectory() as tmp:
        memory = Path(tmp) / "memory"
        history(memory, records)
        words, store = kept(memory), StandingStore(memory)
        started = time.perf_counter()
        store.journal_words("website", words)
        first = time.perf_counter() - started
        started = time.perf_counter()
        again = store.journal_words("website", words)  # every file came back
        return first, time.perf_counter() - started, again


def empty_listing() -> float:
    """Microseconds of `kept_standing` when nothing waits."""
    with tempfile.TemporaryDirectory() as tmp:
        store = StandingStore(Path(tmp))
        times = []
        for _ in range(2000):
            started = time.perf_counter()
            store.kept_standing("website", Standing())
            times.append(time.perf_counter() - started)
        return statistics.median(times) * 1e6


def main() -> None:
    """Print the figures."""
    for records in HISTORIES:
        first, again, new = measure(records)
        print(
            f"journal of {records:>6} records: {WORDS} words absorbed in {first * 1000:.1f} ms; "
            f"absorbed again in {again * 1000:.1f} ms, {new} journaled twice"
        )
    print(f"kept_standing with an empty inbox: {empty_listing():.1f} us (median of 2000)")


if __name__ == "__main__":
    main()
