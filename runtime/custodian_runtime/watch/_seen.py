"""What the watch learned of each domain, kept across a restart so unchanged domains are not run.

A cache, never a truth: each entry carries the stamp of the domain's files when it was learned
(watch/_due.py), and a changed journal or guidance file makes the domain due, as within one
process. The file names what it was learned under (`key`: the settings a run journals and the
canon's stamps); a restart with other settings or another canon reads nothing from it, and every
domain is due once, as before the file existed. A file that cannot be read is the same as none.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from custodian_runtime.core.digest import canonical_json, sha256_hex
from custodian_runtime.files.atomic import atomic_write_text
from custodian_runtime.watch._due import Learned

FORMAT = 1
Stamp = tuple[int, int, int] | None


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    revision: int | None
    until: datetime | None
    waiting: str | None
    stamp: tuple[Stamp, Stamp]


class _Seen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    format: int
    key: str
    domains: dict[str, _Entry]


def seen_path(memory_dir: Path, shard: tuple[int, int] | None) -> Path:
    """Where one watch keeps what it saw: one file per shard, so shards on a volume share none."""
    name = "seen.json" if shard is None else f"seen-{shard[0]}-of-{shard[1]}.json"
    return memory_dir / "watch" / name


def seen_key(settings_view: Mapping[str, object], canon: object) -> str:
    """What the entries were learned under: the settings as journaled and the canon's stamps."""
    return sha256_hex(canonical_json({"format": FORMAT, "settings": settings_view,
                                      "canon": canon}))  # fmt: skip


def load_seen(path: Path, key: str) -> dict[str, Learned]:
    """The entries kept under `key`; none when the file is absent, unreadable or of another key."""
    try:
        kept = _Seen.model_validate_json(path.read_bytes())
    except (OSError, ValidationError):
        return {}
    if kept.format != FORMAT or kept.key != key:
        return {}
    return {
        name: Learned(e.revision, e.until, e.waiting, e.stamp) for name, e in kept.domains.items()
    }


def save_seen(path: Path, key: str, known: Mapping[str, Learned]) -> None:
    """Keep `known` under `key`, atomically (a reader sees the old file or the new one)."""
    entries = {
        name: _Entry(revision=k.revision, until=k.until, waiting=k.waiting, stamp=k.stamp)
        for name, k in known.items()
        if isinstance(k.stamp, tuple)
    }
    text = _Seen(format=FORMAT, key=key, domains=entries).model_dump_json()
    atomic_write_text(path, text)
