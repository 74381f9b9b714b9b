"""Atomic file writes: a reader sees the old file or the new one, never half of either."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path


def atomic_write_text(path: Path, text: str) -> None:
    """Write `text` to `path` via a temporary file, fsync, rename, then fsync the directory."""
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write `data` to `path` atomically and durably (POSIX rename, then a directory fsync)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp_name = _written_aside(path, data)
    try:
        os.replace(tmp_name, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise
    fsync_directory(path.parent)


def create_whole(path: Path, data: bytes) -> bool:
    """Create `path` whole and durable, only if no file has that name (False: one has)."""
    tmp_name = _written_aside(path, data)
    try:
        os.link(tmp_name, path)  # fails if the name is taken: the first writer keeps it
    except FileExistsError:
        return False
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
    fsync_directory(path.parent)
    return True


def _written_aside(path: Path, data: bytes) -> str:
    """A temporary file beside `path` holding `data`, flushed to disk; its name."""
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise
    return tmp_name


def fsync_directory(directory: Path) -> None:
    """Make a rename or a new file in `directory` durable (fsync(2) does not cover the entry)."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def replace_lines(path: Path, change: Callable[[bytes], bytes]) -> None:
    """Rewrite `path` line by line through `change`, atomically, keeping its mode."""
    mode = os.stat(path).st_mode & 0o777
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out, path.open("rb") as source:
            os.fchmod(out.fileno(), mode)
            for raw in source:
                out.write(change(raw))
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp_name, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise
    fsync_directory(path.parent)
