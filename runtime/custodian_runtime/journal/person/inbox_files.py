"""The inbox's files, listed: how many words wait for a domain, with no word read.

Light on purpose (no pydantic): a skip checks that nothing waits before it decides
(run/_quick.py), and `custodian run` carries nothing out when nothing does.
"""

from __future__ import annotations

import re
from pathlib import Path

WORD_NAME = re.compile(r"^(\d{1,30})\.(json|done)$")
DECISIONS, STANDING = "decisions", "standing"  # the side stores of an earlier release


def word_files(directory: Path) -> list[Path]:
    """The words kept in one domain's inbox directory, in arrival order."""
    if not directory.is_dir():
        return []
    kept = [(int(m[1]), p) for p in directory.glob("*.json") if (m := WORD_NAME.match(p.name))]
    return [path for _, path in sorted(kept)]


def legacy_files(memory_dir: Path) -> list[Path]:
    """The files of the old side stores still there (one listing each)."""
    found: list[Path] = []
    for name in (DECISIONS, STANDING):
        directory = Path(memory_dir) / name
        if directory.is_dir():
            found += sorted(directory.glob("*.json"))
    return found


def words_waiting(memory_dir: Path, domain: str) -> int:
    """How many words wait for `domain` (one listing; an old side store's file counts)."""
    inbox = Path(memory_dir) / "inbox" / domain
    return len(word_files(inbox)) + len(legacy_files(memory_dir))
