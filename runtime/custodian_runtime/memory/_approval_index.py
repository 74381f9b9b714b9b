"""A domain's approval index: what a run needs of the queue, without reading every item file.

`approvals/index/<domain>.json` is derived data; the item files stay the record. It holds a stamp
(inode, ctime, mtime, size) of every item file in the queue, each file's domain, this domain's
items a run reads whole (pending, recently rejected) and a mark of each of its rejected items. A
run stats every file and reads only those whose stamp differs from the index (new, changed or
never seen), verifying each as the store does; an unchanged file was verified when it was
indexed. With a seal key the index is sealed as a whole and the items it holds keep their own
seals, checked again on every read: an edited, unsealed or foreign index is rebuilt from the
files, never trusted. It is written atomically, and only when something changed.
"""

from __future__ import annotations

import hmac
import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from custodian_runtime.core.approvals import (
    ApprovalItem,
    QueueView,
    RejectedMark,
    is_hot,
    rejected_mark,
)
from custodian_runtime.core.digest import canonical_json, strict_loads
from custodian_runtime.core.seals import SealKey, item_seal_problem
from custodian_runtime.errors import SealError
from custodian_runtime.memory._files import atomic_write_text

VERSION = 1
_INDEX_PREFIX = b"custodian approval index v1\n"

Stamp = tuple[int, int, int, int]


class Entry(BaseModel):
    """One item file as indexed: its stamp, its domain, and what a run needs of it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    stamp: tuple[int, int, int, int]
    domain: str
    item: ApprovalItem | None = None
    mark: RejectedMark | None = None


class IndexFile(BaseModel):
    """The index on disk."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: int
    domain: str
    files: dict[str, Entry]
    seal: str | None = None


@dataclass(frozen=True)
class Refreshed:
    """The view, and how many item files were read to make it (0: the index answered all)."""

    view: QueueView
    read: int
    rebuilt: str | None


def refresh(
    directory: Path,
    domain: str,
    now: datetime,
    read_item: Callable[[Path], ApprovalItem],
    key: SealKey | None,
    *,
    write: bool,
) -> Refreshed:
    """The domain's queue view from its index, bringing the index up to date with the files."""
    path = directory / "index" / f"{domain}.json"
    old, rebuilt = _load(path, domain, key)
    files: dict[str, Entry] = {}
    read = 0
    for name, stamp in _stamps(directory):
        entry = old.get(name)
        if entry is None or entry.stamp != stamp:
            entry = _entry(read_item(directory / name), stamp, domain, now)
            read += 1
        elif key is not None and entry.item is not None:
            _check_seal(key, directory / name, entry.item)
        files[name] = entry
    if write and (read or rebuilt or files.keys() != old.keys()):
        _save(path, domain, files, key)
    return Refreshed(_view(domain, files), read, rebuilt)


def _stamps(directory: Path) -> list[tuple[str, Stamp]]:
    if not directory.is_dir():
        return []
    found = []
    with os.scandir(directory) as entries:
        for e in entries:
            if e.name.endswith(".json") and e.is_file(follow_symlinks=False):
                st = e.stat(follow_symlinks=False)
                found.append((e.name, (st.st_ino, st.st_ctime_ns, st.st_mtime_ns, st.st_size)))
    return sorted(found)


def _entry(item: ApprovalItem, stamp: Stamp, domain: str, now: datetime) -> Entry:
    if item.domain != domain:
        return Entry(stamp=stamp, domain=item.domain)
    mark = rejected_mark(item) if item.status == "rejected" else None
    return Entry(stamp=stamp, domain=domain, item=item if is_hot(item, now) else None, mark=mark)


def _view(domain: str, files: dict[str, Entry]) -> QueueView:
    mine = [e for e in files.values() if e.domain == domain]
    items = sorted((e.item for e in mine if e.item is not None), key=lambda i: (i.created_at, i.id))
    return QueueView(domain, tuple(items), tuple(e.mark for e in mine if e.mark is not None))


def _check_seal(key: SealKey, path: Path, item: ApprovalItem) -> None:
    problem = item_seal_problem(key, item)
    if problem is None and path.stem != item.id:
        problem = f"it holds item {item.id!r} under another file name"
    if problem is not None:
        raise SealError(
            f"approval file {path.name} {problem} (as indexed). CUSTODIAN_SEAL_KEY is set, so "
            "every approval item must carry a valid seal; nothing was done. Move the file out "
            "of the queue (keep a copy) and run again",
            path=str(path),
        )


def _load(path: Path, domain: str, key: SealKey | None) -> tuple[dict[str, Entry], str | None]:
    """The index's entries, or none and why it is rebuilt (missing, damaged, unsealed)."""
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}, "missing"
    except OSError as exc:
        return {}, f"unreadable ({exc.strerror or exc})"
    try:
        index = IndexFile.model_validate(strict_loads(raw))
    except (ValidationError, ValueError):
        return {}, "damaged"
    if index.version != VERSION or index.domain != domain:
        return {}, "of another version or domain"
    if key is not None and not _seal_holds(key, index):
        return {}, "unsealed" if index.seal is None else "bad seal"
    return index.files, None


def _seal_of(key: SealKey, index: IndexFile) -> str:
    return key.mac(_INDEX_PREFIX, canonical_json(_dump(index, seal=False)))


def _seal_holds(key: SealKey, index: IndexFile) -> bool:
    want = _seal_of(key, index).encode("utf-8")
    return index.seal is not None and hmac.compare_digest(index.seal.encode("utf-8"), want)


def _dump(index: IndexFile, *, seal: bool = True) -> dict[str, Any]:
    return index.model_dump(mode="json", exclude=None if seal else {"seal"})


def _save(path: Path, domain: str, files: dict[str, Entry], key: SealKey | None) -> None:
    index = IndexFile(version=VERSION, domain=domain, files=files)
    if key is not None:
        index = index.model_copy(update={"seal": _seal_of(key, index)})
    atomic_write_text(path, canonical_json(_dump(index)) + "\n")
