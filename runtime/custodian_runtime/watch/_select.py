"""Which domains one `custodian watch` looks after: a list, or all, cut to a shard by a stable hash.

A domain belongs to shard `I/N` when the first eight bytes of the SHA-256 of its name, read as a
big-endian integer, are `I` modulo `N`. The hash depends on the name alone (not on the order,
the other domains or the Python process), so N watchers given the same list split it completely
and without overlap, and a domain stays in its shard however the list grows.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from custodian_runtime.errors import ConfigError


@dataclass(frozen=True)
class Shard:
    """Shard `index` of `count` (0 <= index < count)."""

    index: int
    count: int

    def includes(self, domain: str) -> bool:
        """Whether `domain` falls in this shard."""
        return shard_of(domain, self.count) == self.index


def shard_of(domain: str, count: int) -> int:
    """The shard of `domain` among `count`: SHA-256 of its UTF-8 name, first 8 bytes, mod count."""
    digest = hashlib.sha256(domain.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % count


def parse_shard(text: str) -> Shard:
    """`--shard I/N`, e.g. `0/4`; a ConfigError that shows the form otherwise."""
    found = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
    if found is None or int(found[2]) < 1 or int(found[1]) >= int(found[2]):
        raise ConfigError(
            f"--shard {text!r}: give I/N with 0 <= I < N, e.g. 0/4 for the first of four",
            setting="--shard",
        )
    return Shard(int(found[1]), int(found[2]))


def parse_domains(text: str) -> tuple[str, ...]:
    """`--domains a,b,c`: the names, each once, in the order given; a ConfigError if none."""
    names = tuple(dict.fromkeys(n.strip() for n in text.split(",") if n.strip()))
    if not names:
        raise ConfigError(
            "--domains names no domain: give a comma-separated list", setting="--domains"
        )
    return names


def read_domains(path: Path) -> tuple[str, ...]:
    """`--domains-file PATH`: one domain a line (commas too; `#` starts a comment), each once,
    in order; a ConfigError that says what to fix when it cannot be read or names none."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "it is not UTF-8 text"
        raise ConfigError(
            f"--domains-file {path}: cannot be read ({reason}); give a file with one domain a line",
            setting="--domains-file",
        ) from None
    kept = (line.split("#", 1)[0] for line in text.splitlines())
    names = tuple(dict.fromkeys(n.strip() for line in kept for n in line.split(",") if n.strip()))
    if not names:
        raise ConfigError(
            f"--domains-file {path} names no domain: give one domain a line",
            setting="--domains-file",
        )
    return names


def chosen(
    on_hub: Iterable[str], listed: tuple[str, ...] | None, shard: Shard | None
) -> tuple[list[str], list[str]]:
    """(the domains to watch, the listed ones the hub does not know), in a stable order.

    `listed` None means every domain the hub lists (`--all-domains`).
    """
    known = list(dict.fromkeys(on_hub))
    if listed is None:
        return [n for n in known if shard is None or shard.includes(n)], []
    there = set(known)
    mine = [n for n in listed if shard is None or shard.includes(n)]
    return [n for n in mine if n in there], [n for n in mine if n not in there]
