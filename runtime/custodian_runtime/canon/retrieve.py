"""A run's canon: what is shown whole, and the library's sections ranked for the run's state.

Reads the canon directory (canon/library.py), opens the index named by the library's content
(canon/index.py), asks it each of the run's queries (core/context/queries.py) and merges the
rankings (core/context/choose.py). Which of the ranked sections fit is the prompt's to decide.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from custodian_runtime.canon.index import open_index
from custodian_runtime.canon.library import Canon, read_canon_dir
from custodian_runtime.core.canon.sections import (
    CanonFile,
    CanonSection,
    in_scope,
    pinned_for,
    split,
)
from custodian_runtime.core.context.choose import fuse

# Per query: the rows read from the index (before the domain's scope), and the sections kept.
ROWS = 24
DEPTH = 3


@dataclass(frozen=True)
class RunCanon:
    """The canon as one run of one domain uses it."""

    constitution: CanonFile
    guidance: CanonFile | None
    pinned: tuple[CanonFile, ...] = ()
    ranked: tuple[CanonSection, ...] = ()  # best first
    sections: int = 0  # the library sections this domain could be shown


def run_canon(
    canon_dir: Path,
    domain: str,
    queries: Sequence[Sequence[str]],
    memory_dir: Path | None,
    canon: Canon | None = None,
) -> RunCanon:
    """Read the canon (unless given) and rank its library's sections for `queries`; the index
    is kept in `memory_dir` (None: built in memory only, as a dry run does)."""
    canon = canon or read_canon_dir(canon_dir)
    files = canon.files.values()
    base = RunCanon(canon.constitution, canon.guidance(domain), pinned_for(files, domain))
    key = canon.library_key
    scoped = {file.path for file in canon.library if in_scope(file, domain)}
    if not scoped or key is None:
        return base
    index = open_index(memory_dir, key, lambda: [s for f in canon.library for s in split(f)])
    try:
        count = sum(n for path, n in index.counts().items() if path in scoped)
        # Files out of this domain's scope are left out in the query itself, so that another
        # domain's records cannot fill a query's rows.
        within = scoped if len(scoped) < len(canon.library) else None
        rankings = [index.rank(query, ROWS, within) for query in queries]
        ranked = index.sections(fuse(rankings, scoped, DEPTH))
    finally:
        index.close()
    return RunCanon(base.constitution, base.guidance, base.pinned, ranked, count)
