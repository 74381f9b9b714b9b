"""The canon's search index: SQLite FTS5 ranks library sections by BM25 (Python's own sqlite3).

An index is named by the digest of the library's files (`Canon.library_key`), so a changed canon
is a new name and an index can never answer for another canon: a run that finds no index of its
canon's name builds one in memory (tens of milliseconds for thousands of sections) and keeps a
copy in `<memory>/index/` for the next run, replacing any other. The copy is a cache: a copy
that cannot be written (a read-only memory directory, a dry run) or read is simply built again.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import sqlite3
from collections.abc import Callable, Collection, Sequence
from pathlib import Path

from custodian_runtime.core.canon.sections import CanonSection, SectionKey
from custodian_runtime.errors import ConfigError

VERSION = 1  # of the index's layout: a layout change is a new name too
FOLDER = "index"
_PREFIX = "canon-"
# The sections' text is kept in the index, so a run that finds its canon's index splits nothing.
_SCHEMA = (
    "CREATE VIRTUAL TABLE sections USING fts5(file UNINDEXED, place UNINDEXED, "
    "sha256 UNINDEXED, heading, body, tokenize = 'porter unicode61')",
    # Headings weigh twice the body: a section titled for a thing governs it.
    "INSERT INTO sections (sections, rank) VALUES ('rank', 'bm25(0.0, 0.0, 0.0, 2.0, 1.0)')",
    "CREATE TABLE files (file TEXT PRIMARY KEY, sections INTEGER NOT NULL)",
    "CREATE TABLE meta (key TEXT NOT NULL, version INTEGER NOT NULL)",
)
_RANK = (
    "SELECT rowid, file, place FROM sections WHERE sections MATCH ?{within} ORDER BY rank LIMIT ?"
)
# A scope of more files than this is applied after the query (fuse), not in it.
MOST_FILES_IN_QUERY = 500
_ROWS = "SELECT rowid, file, place, heading, body, sha256 FROM sections WHERE rowid IN ({rows})"


class CanonIndex:
    """An open index of the library's sections."""

    def __init__(self, connection: sqlite3.Connection, key: str) -> None:
        self.connection = connection
        self.key = key
        self._rows: dict[SectionKey, int] = {}  # of the sections ranked so far

    def counts(self) -> dict[str, int]:
        """How many sections each file of the library holds."""
        return {str(f): int(n) for f, n in self.connection.execute("SELECT * FROM files")}

    def rank(
        self, terms: Sequence[str], limit: int, within: Collection[str] | None = None
    ) -> tuple[SectionKey, ...]:
        """The sections that best match any of `terms`, best first, at most `limit`; of the
        files `within` only, when named (and not too many to name in one query)."""
        if not terms:
            return ()
        match = " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)
        files = sorted(within) if within and len(within) <= MOST_FILES_IN_QUERY else []
        scope = f" AND file IN ({', '.join('?' * len(files))})" if files else ""
        query = _RANK.format(within=scope)
        rows = self.connection.execute(query, (match, *files, limit)).fetchall()
        for rowid, file, place in rows:
            self._rows[(str(file), int(place))] = int(rowid)
        return tuple((str(file), int(place)) for _, file, place in rows)

    def sections(self, keys: Sequence[SectionKey]) -> tuple[CanonSection, ...]:
        """The sections named by `keys` (each ranked before), in that order, in one query."""
        rowids = [self._rows[key] for key in keys]
        found: dict[int, CanonSection] = {}
        for start in range(0, len(rowids), MOST_FILES_IN_QUERY):
            chunk = rowids[start : start + MOST_FILES_IN_QUERY]
            query = _ROWS.format(rows=", ".join("?" * len(chunk)))
            for rowid, file, place, heading, body, sha256 in self.connection.execute(query, chunk):
                found[int(rowid)] = CanonSection(file, heading, body, sha256, int(place))
        return tuple(found[rowid] for rowid in rowids)

    def close(self) -> None:
        """Close the connection."""
        self.connection.close()


def index_path(memory_dir: Path, key: str) -> Path:
    """Where the index of the library named `key` is kept."""
    return Path(memory_dir) / FOLDER / f"{_PREFIX}{key[:32]}-v{VERSION}.sqlite"


def open_index(
    memory_dir: Path | None, key: str, sections: Callable[[], Sequence[CanonSection]]
) -> CanonIndex:
    """The index of the library named `key`: read from `memory_dir` when kept there, else built
    of `sections()`, and kept there when `memory_dir` is given."""
    if memory_dir is not None:
        kept = _open_kept(index_path(memory_dir, key), key)
        if kept is not None:
            return kept
    index = CanonIndex(_build(key, sections()), key)
    if memory_dir is not None:
        _keep(index, index_path(memory_dir, key))
    return index


def _open_kept(path: Path, key: str) -> CanonIndex | None:
    if not path.is_file():
        return None
    try:
        connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        row = connection.execute("SELECT key, version FROM meta").fetchone()
    except sqlite3.Error:
        return None  # damaged or foreign: built again and replaced
    if row != (key, VERSION):
        connection.close()
        return None
    return CanonIndex(connection, key)


def require_fts5() -> None:
    """ConfigError saying what to do when this Python's sqlite3 has no FTS5."""
    _build("", ()).close()


def _build(key: str, sections: Sequence[CanonSection]) -> sqlite3.Connection:
    connection = sqlite3.connect(":memory:")
    try:
        connection.execute(_SCHEMA[0])
    except sqlite3.OperationalError as exc:
        connection.close()
        raise ConfigError(
            f"this Python's sqlite3 (SQLite {sqlite3.sqlite_version}) has no FTS5 ({exc}), which "
            "choosing canon sections needs: run with a Python whose SQLite has FTS5 (python.org "
            "and Debian builds, the project's image), or pin the canon's other files "
            "(`pin: true`) or move them out of the canon directory",
            setting="CUSTODIAN_CANON_DIR",
        ) from None
    for statement in _SCHEMA[1:]:
        connection.execute(statement)
    connection.executemany(
        "INSERT INTO sections (file, place, sha256, heading, body) VALUES (?, ?, ?, ?, ?)",
        [(s.file, s.order, s.sha256, s.heading, s.text) for s in sections],
    )
    counts: dict[str, int] = {}
    for section in sections:
        counts[section.file] = counts.get(section.file, 0) + 1
    connection.executemany("INSERT INTO files VALUES (?, ?)", sorted(counts.items()))
    connection.execute("INSERT INTO meta VALUES (?, ?)", (key, VERSION))
    connection.commit()
    return connection


def _keep(index: CanonIndex, path: Path) -> None:
    """Copy the index to `path` (temporary file, then rename) and remove the older ones."""
    temp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        target = sqlite3.connect(temp)
        try:
            index.connection.backup(target)
        finally:
            target.close()
        os.replace(temp, path)
    except (OSError, sqlite3.Error):
        with contextlib.suppress(OSError):
            temp.unlink()
        return  # a cache: the next run builds it again
    for older in path.parent.glob(f"{_PREFIX}*.sqlite"):
        if older.name != path.name:
            with contextlib.suppress(OSError):
                older.unlink()
