"""Idempotency keys: a write's answer is stored with its key, in the same transaction as the write.

Only successful writes are recorded; a refused write changed nothing, so repeating it with the
same key simply tries again. Records older than 24 hours (by the hub's clock) are forgotten.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from custodian_hub._wire import ApiError, db_timestamp

WINDOW = timedelta(hours=24)
MAX_KEY_LENGTH = 255


@dataclass(frozen=True)
class Replay:
    """The stored answer to an earlier write with the same key."""

    status: int
    body: dict[str, Any]


def check_key(key: str | None) -> str | None:
    """The key when it is 1-255 printable ASCII characters; raise 400 otherwise."""
    if key is None:
        return None
    if not 1 <= len(key) <= MAX_KEY_LENGTH:
        raise ApiError(400, f"Idempotency-Key must be 1-{MAX_KEY_LENGTH} characters long")
    if any(not " " <= char <= "~" for char in key):
        raise ApiError(400, "Idempotency-Key must contain printable ASCII characters only")
    return key


def lookup(
    conn: sqlite3.Connection, key: str, method: str, path: str, body_sha256: str, now: datetime
) -> Replay | None:
    """The earlier answer for this key, None for a fresh key, 422 for a key reused differently."""
    conn.execute("DELETE FROM idempotency WHERE created_at < ?", (db_timestamp(now - WINDOW),))
    row = conn.execute("SELECT * FROM idempotency WHERE key = ?", (key,)).fetchone()
    if row is None:
        return None
    if (row["method"], row["path"], row["body_sha256"]) != (method, path, body_sha256):
        raise ApiError(
            422,
            f"Idempotency-Key {key!r} was already used for {row['method']} {row['path']}"
            " with another body; use a new key for a new request",
            code="idempotency_mismatch",
        )
    return Replay(status=int(row["status"]), body=json.loads(row["response"]))


def remember(
    conn: sqlite3.Connection,
    key: str,
    method: str,
    path: str,
    body_sha256: str,
    answer: tuple[int, dict[str, Any]],
    now: datetime,
) -> None:
    """Store a write's answer under its key."""
    status, body = answer
    conn.execute(
        "INSERT INTO idempotency (key, method, path, body_sha256, status, response, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            key,
            method,
            path,
            body_sha256,
            status,
            json.dumps(body, ensure_ascii=False),
            db_timestamp(now),
        ),
    )
