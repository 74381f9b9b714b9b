"""SQLite storage of the reference hub: schema, connections, and rows turned into contract JSON.

One connection writes, under a lock, inside `BEGIN IMMEDIATE`; reads use pooled connections and
WAL mode, so a write held open (a crash test's hook) never blocks a read.
"""

from __future__ import annotations

import json
import queue
import secrets
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from custodian_hub._wire import wire_timestamp

SCHEMA_VERSION = "3"

SCHEMA = """
BEGIN;
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS counters (kind TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS workstreams (
  seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, domain TEXT NOT NULL, title TEXT NOT NULL,
  status TEXT NOT NULL, owner TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS workstreams_domain ON workstreams (domain);
CREATE TABLE IF NOT EXISTS tasks (
  seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, workstream_id TEXT NOT NULL,
  title TEXT NOT NULL, description TEXT NOT NULL, status TEXT NOT NULL, assignee TEXT, due TEXT,
  created_at TEXT NOT NULL, updated_at TEXT NOT NULL, version INTEGER NOT NULL DEFAULT 1);
CREATE INDEX IF NOT EXISTS tasks_workstream ON tasks (workstream_id);
CREATE TABLE IF NOT EXISTS decisions (
  seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, domain TEXT NOT NULL, workstream_id TEXT,
  title TEXT NOT NULL, context TEXT NOT NULL, options TEXT NOT NULL, status TEXT NOT NULL,
  resolution TEXT, created_at TEXT NOT NULL, resolved_at TEXT);
CREATE INDEX IF NOT EXISTS decisions_domain ON decisions (domain);
CREATE TABLE IF NOT EXISTS events (
  seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, workstream_id TEXT NOT NULL, task_id TEXT,
  event_type TEXT NOT NULL, summary TEXT NOT NULL, source TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS events_workstream ON events (workstream_id, created_at);
CREATE TABLE IF NOT EXISTS flags (
  seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, workstream_id TEXT NOT NULL, task_id TEXT,
  note TEXT NOT NULL, status TEXT NOT NULL, raised_by TEXT NOT NULL, created_at TEXT NOT NULL,
  resolved_at TEXT);
CREATE INDEX IF NOT EXISTS flags_workstream ON flags (workstream_id);
CREATE TABLE IF NOT EXISTS idempotency (
  key TEXT PRIMARY KEY, method TEXT NOT NULL, path TEXT NOT NULL, body_sha256 TEXT NOT NULL,
  status INTEGER NOT NULL, response TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS idempotency_created ON idempotency (created_at);
CREATE TABLE IF NOT EXISTS revisions (domain TEXT PRIMARY KEY, value INTEGER NOT NULL);
COMMIT;
"""

RESOURCE_TABLES: tuple[str, ...] = ("workstreams", "tasks", "decisions", "events", "flags")
_TIMESTAMP_COLUMNS = ("created_at", "updated_at", "resolved_at")


# How long a write waits for another process that holds the database. Writes take milliseconds;
# past this the hub answers 503 with Retry-After, and the client's retry policy does the waiting,
# under its whole-request deadline and the run's stop flag.
BUSY_TIMEOUT_S = 2.0


def connect(db_path: Path) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit), WAL, rows by name."""
    conn = sqlite3.connect(
        db_path, isolation_level=None, check_same_thread=False, timeout=BUSY_TIMEOUT_S
    )
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_S * 1000)}")
    return conn


def is_busy(exc: sqlite3.OperationalError) -> bool:
    """SQLite gave up waiting for another connection's lock."""
    return "locked" in str(exc) or "busy" in str(exc)


def init_schema(conn: sqlite3.Connection) -> None:
    """Create the tables when missing, migrate schemas 1 and 2; refuse any other version."""
    conn.executescript(SCHEMA)
    if _current(conn):
        return  # nothing to write: a store in use by another writer opens without waiting
    conn.execute("BEGIN IMMEDIATE")
    try:
        _migrate(conn)
        # Made once, with the store: a copy or restore of the file keeps it (contract v1.2).
        conn.execute(
            "INSERT OR IGNORE INTO meta (key, value) VALUES ('hub_id', ?)",
            (f"hub-{secrets.token_hex(8)}",),
        )
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def _current(conn: sqlite3.Connection) -> bool:
    rows = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    return rows.get("schema_version") == SCHEMA_VERSION and "hub_id" in rows


def _migrate(conn: sqlite3.Connection) -> None:
    # Read again inside the write transaction: another process may have migrated meanwhile.
    row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    if row is None:
        conn.execute(
            "INSERT INTO meta (key, value) VALUES ('schema_version', ?)", (SCHEMA_VERSION,)
        )
        return
    version = row["value"]
    if version not in ("1", "2", SCHEMA_VERSION):
        raise RuntimeError(
            f"hub database has schema version {version}, this hub reads {SCHEMA_VERSION}"
        )
    if version == "1":
        # Schema 1 (contract v1) had no task versions: every stored task starts at version 1.
        conn.execute("ALTER TABLE tasks ADD COLUMN version INTEGER NOT NULL DEFAULT 1")
    # Schema 2 (contract v1.1) had no revisions table (made above) and no hub_id (made after):
    # its domains start at revision 0 and grow from their next write.
    conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (SCHEMA_VERSION,))


def hub_id(conn: sqlite3.Connection) -> str:
    """The store's hub_id (contract v1.2)."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'hub_id'").fetchone()
    return str(row["value"])


def revision(conn: sqlite3.Connection, domain: str) -> int:
    """The domain's revision: 0 until its first write in a store from before v1.2."""
    row = conn.execute("SELECT value FROM revisions WHERE domain = ?", (domain,)).fetchone()
    return 0 if row is None else int(row["value"])


def bump_revision(conn: sqlite3.Connection, domain: str) -> None:
    """One more change in `domain`, inside the caller's write transaction."""
    conn.execute(
        "INSERT INTO revisions (domain, value) VALUES (?, 1)"
        " ON CONFLICT (domain) DO UPDATE SET value = value + 1",
        (domain,),
    )


def is_empty(conn: sqlite3.Connection) -> bool:
    """True when no resource of any kind is stored."""
    return all(
        conn.execute(f"SELECT 1 FROM {table} LIMIT 1").fetchone() is None
        for table in RESOURCE_TABLES
    )


def record(row: sqlite3.Row) -> dict[str, Any]:
    """A stored row as the contract's JSON object (internal columns dropped)."""
    out = dict(zip(row.keys(), row, strict=True))
    out.pop("seq", None)
    for key in _TIMESTAMP_COLUMNS:
        if key in out:
            out[key] = wire_timestamp(out[key])
    if "options" in out:
        out["options"] = json.loads(out["options"])
    return out


class Store:
    """The hub's database: one locked writer connection and a pool of readers."""

    def __init__(self, db_path: Path) -> None:
        self.db_path = db_path
        db_path.parent.mkdir(parents=True, exist_ok=True)
        self._writer = connect(db_path)
        init_schema(self._writer)
        self.hub_id = hub_id(self._writer)
        self._write_lock = threading.Lock()
        self._readers: queue.SimpleQueue[sqlite3.Connection] = queue.SimpleQueue()
        self._closed = False

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One serialized write transaction: committed on success, rolled back on any error."""
        with self._write_lock:
            if self._closed:
                raise RuntimeError("the hub store is closed")
            conn = self._writer
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """A read transaction on a pooled connection: one consistent snapshot."""
        try:
            conn = self._readers.get_nowait()
        except queue.Empty:
            conn = connect(self.db_path)
        try:
            conn.execute("BEGIN")
            try:
                yield conn
            finally:
                conn.execute("COMMIT")
        finally:
            if self._closed:
                conn.close()
            else:
                self._readers.put(conn)

    def close(self) -> None:
        """Close every connection; later writes fail."""
        with self._write_lock:
            self._closed = True
            self._writer.close()
        while True:
            try:
                self._readers.get_nowait().close()
            except queue.Empty:
                break
