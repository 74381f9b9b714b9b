"""Setting a torn last line aside: keep its bytes in a file of their own, then truncate."""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from custodian_runtime.errors import JournalError
from custodian_runtime.files.atomic import atomic_write_bytes


def aside_path(path: Path, now: datetime) -> Path:
    """`<file>.torn-<UTC time>`, with a counter if that name is taken."""
    stamp = now.astimezone(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    aside = path.with_name(f"{path.name}.torn-{stamp}")
    suffix = 1
    while aside.exists():
        suffix += 1
        aside = path.with_name(f"{path.name}.torn-{stamp}-{suffix}")
    return aside


def set_aside(
    path: Path,
    torn: bytes,
    expected: int,
    good_end: int,
    clock: Callable[[], datetime],
    fsync: Callable[[int], None],
) -> Path:
    """Keep `torn` (durably) aside, then cut `path` from `expected` bytes back to `good_end`."""
    aside = aside_path(path, clock())
    atomic_write_bytes(aside, torn)
    fd = os.open(path, os.O_WRONLY)
    try:
        if os.fstat(fd).st_size != expected:
            raise JournalError(
                f"journal {path.name} grew while its torn tail was being set aside: "
                "another process writes it without taking the run lock",
                path=str(path),
            )
        os.ftruncate(fd, good_end)
        fsync(fd)
    except OSError as exc:
        raise JournalError(f"could not truncate the torn tail of {path}: {exc}") from exc
    finally:
        os.close(fd)
    return aside
