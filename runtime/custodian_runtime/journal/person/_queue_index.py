"""A domain's approval index: what a run needs of the queue, without reading every item file.

`approvals/index/<domain>.json` is derived data; the item files stay the record. It holds the
stamp (inode, ctime, mtime) of the queue's directory, a stamp (inode, ctime, mtime, size) and the
domain of every item file, this domain's items a run reads whole (pending, recently rejected) and
a mark of each of its rejected items. When the directory's stamp is unchanged (no item file was
added, removed or replaced: every save is a rename into it), a run stats only the files it reads
whole; otherwise it stats every file and reads and verifies only those whose stamp changed. An
unchanged file was verified when it was indexed. With a seal key the index is sealed as a whole
(an HMAC of its JSON line, on the line after it) and the items it holds keep their own seals,
checked again on every read: an edited, unsealed or foreign index is rebuilt from the files, never
trusted. It is written atomically, and only when something changed.
"""

from __future__ import annotations

import hmac
import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from custodian_runtime.core.approvals.history import DecidedMark
from custodian_runtime.core.approvals.items import (
    ApprovalItem,
    QueueView,
    RejectedMark,
    is_hot,
    rejected_mark,
    said_of,
)
from custodian_runtime.core.approvals.seals import item_seal_problem
from custodian_runtime.core.digest import canonical_json
from custodian_runtime.core.journal.seals import SealKey
from custodian_runtime.errors import SealError
from custodian_runtime.files.atomic import atomic_write_text

VERSION = 4  # 3: a rejected mark keeps when it was rejected; 4: what a person said of each
_INDEX_PREFIX = b"custodian approval index v2\n"


@dataclass(frozen=True)
class IndexEntry:
    """One item file as indexed: its stamp, its domain, and what a run needs of it."""

    stamp: str
    domain: str
    item: ApprovalItem | None = None
    mark: RejectedMark | None = None
    said: DecidedMark | None = None  # a decided item: what a person said (a standing "no" reads it)


@dataclass(frozen=True)
class ApprovalIndex:
    """The index as read: the directory's stamp, the entries a run uses, the other stamps."""

    directory: str
    used: dict[str, IndexEntry]  # this domain's files with an item kept whole or a rejected mark
    stamps: str  # every file's `name/stamp/domain`, separated by NUL: parsed only on a rescan

    def files(self) -> dict[str, IndexEntry]:
        """Every file's entry."""
        found = {}
        for line in filter(None, self.stamps.split("\0")):
            name, stamp, owner = line.split("/")
            kept = self.used.get(name)
            found[name] = (
                IndexEntry(stamp, owner, kept.item, kept.mark, kept.said)
                if kept
                else IndexEntry(stamp, owner)
            )
        return found


@dataclass(frozen=True)
class Refreshed:
    """The view, how many item files were read to make it, and why the index was rebuilt."""

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
    seen = _stamp(directory, directory=True)  # before the scan: a later change shows next time
    old, rebuilt = _load(path, domain, key)
    if old is not None and old.directory == seen and _hot_unchanged(directory, old, key):
        return Refreshed(_view(domain, old.used), 0, None)
    known = _known(old)
    files: dict[str, IndexEntry] = {}
    read = 0
    for name, stamp in _stamps(directory):
        entry = known.get(name)
        if entry is None or entry.stamp != stamp:
            entry = _entry(read_item(directory / name), stamp, domain, now)
            read += 1
        elif key is not None and entry.item is not None:
            _check_seal(key, directory / name, entry.item)
        files[name] = entry
    if write:
        _save(path, domain, seen, files, key)
    return Refreshed(_view(domain, files), read, rebuilt)


def _known(index: ApprovalIndex | None) -> dict[str, IndexEntry]:
    """The indexed files' entries; none when their stamps do not parse (the index is rebuilt)."""
    try:
        return {} if index is None else index.files()
    except ValueError:
        return {}


def _stamp(path: Path, *, directory: bool = False) -> str:
    try:
        st = path.stat()
    except FileNotFoundError:
        return "-"
    size = "" if directory else f":{st.st_size}"
    return f"{st.st_ino}:{st.st_ctime_ns}:{st.st_mtime_ns}{size}"


def _hot_unchanged(directory: Path, index: ApprovalIndex, key: SealKey | None) -> bool:
    """Whether every file the run reads whole is as indexed (its seal checked again)."""
    for name, entry in index.used.items():
        if entry.item is None:
            continue
        if _stamp(directory / name) != entry.stamp:
            return False
        if key is not None:
            _check_seal(key, directory / name, entry.item)
    return True


def _stamps(directory: Path) -> Iterator[tuple[str, str]]:
    if not directory.is_dir():
        return
    with os.scandir(directory) as entries:
        for e in sorted(entries, key=lambda e: e.name):
            if e.name.endswith(".json") and e.is_file(follow_symlinks=False):
                st = e.stat(follow_symlinks=False)
                yield e.name, f"{st.st_ino}:{st.st_ctime_ns}:{st.st_mtime_ns}:{st.st_size}"


def _entry(item: ApprovalItem, stamp: str, domain: str, now: datetime) -> IndexEntry:
    if item.domain != domain:
        return IndexEntry(stamp, item.domain)
    mark = rejected_mark(item) if item.status == "rejected" else None
    return IndexEntry(stamp, domain, item if is_hot(item, now) else None, mark, said_of(item))


def _view(domain: str, files: dict[str, IndexEntry]) -> QueueView:
    mine = [e for e in files.values() if e.domain == domain]
    items = sorted((e.item for e in mine if e.item is not None), key=lambda i: (i.created_at, i.id))
    marks = tuple(e.mark for e in mine if e.mark is not None)
    return QueueView(domain, tuple(items), marks, tuple(e.said for e in mine if e.said is not None))


def _check_seal(key: SealKey, path: Path, item: ApprovalItem) -> None:
    problem = item_seal_problem(key, item)
    if problem is None and path.stem != item.id:
        problem = f"it contains item {item.id!r} under another file name"
    if problem is not None:
        raise SealError(
            f"approval file {path.name} {problem} (as indexed). CUSTODIAN_SEAL_KEY is set, so "
            "every approval item must carry a valid seal; nothing was done. Move the file out "
            "of the queue (keep a copy) and run again",
            path=str(path),
        )


def _load(path: Path, domain: str, key: SealKey | None) -> tuple[ApprovalIndex | None, str | None]:
    """The index, or None and why it is rebuilt (missing, damaged, unsealed)."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None, "missing"
    except OSError as exc:
        return None, f"unreadable ({exc.strerror or exc})"
    body, _, seal = raw.rstrip(b"\n").rpartition(b"\n")
    if key is not None and not _seal_holds(key, body, seal):
        return None, "unsealed" if seal in (b"", b"-") else "bad seal"
    try:
        return _parse(json.loads(body), domain)
    except (ValidationError, ValueError, TypeError, KeyError, AttributeError):
        return None, "damaged"


def _parse(data: dict[str, Any], domain: str) -> tuple[ApprovalIndex | None, str | None]:
    """The index's JSON: the entries a run uses are parsed, the other stamps kept as text."""
    if data["version"] != VERSION or data["domain"] != domain:
        return None, "of another version or domain"
    used = {}
    for name, (stamp, item, mark, said) in data["used"].items():
        whole = None if item is None else ApprovalItem.model_validate(item)
        marked = None if mark is None else RejectedMark(*map(_text, mark))
        spoken = None if said is None else DecidedMark.from_record(said)
        used[name] = IndexEntry(_text(stamp), domain, whole, marked, spoken)
    return ApprovalIndex(_text(data["directory"]), used, _text(data["files"])), None


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise TypeError("not a string")
    return value


def _used(entry: IndexEntry) -> list[Any]:
    item = None if entry.item is None else entry.item.model_dump(mode="json")
    m = entry.mark
    mark = None if m is None else [m.fingerprint, m.text, m.why, m.at]
    said = None if entry.said is None else entry.said.as_record()
    return [entry.stamp, item, mark, said]


def _seal_holds(key: SealKey, body: bytes, seal: bytes) -> bool:
    want = key.mac(_INDEX_PREFIX, body.decode("utf-8", "replace")).encode("utf-8")
    return hmac.compare_digest(seal, want)


def _save(
    path: Path, domain: str, directory: str, files: dict[str, IndexEntry], key: SealKey | None
) -> None:
    data = {
        "version": VERSION,
        "domain": domain,
        "directory": directory,
        "files": "".join(f"{n}/{e.stamp}/{e.domain}\0" for n, e in files.items()),
        "used": {n: _used(e) for n, e in files.items() if e.item or e.mark or e.said},
    }
    body = canonical_json(data)
    seal = "-" if key is None else key.mac(_INDEX_PREFIX, body)
    atomic_write_text(path, f"{body}\n{seal}\n")
