"""Session notes under `memory/working/`: written once, found by name, their prose read back."""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

from custodian_runtime.core.journal.continuity import prose_of
from custodian_runtime.files.atomic import atomic_write_text


def note_path(working_dir: Path, domain: str, started_at: datetime) -> Path:
    """`memory/working/<UTC timestamp>-<domain>.md`, unique within the directory."""
    stamp = started_at.strftime("%Y%m%dT%H%M%SZ")
    path = working_dir / f"{stamp}-{domain}.md"
    counter = 2
    while path.exists():
        path = working_dir / f"{stamp}-{domain}.{counter}.md"
        counter += 1
    return path


def write_note(working_dir: Path, domain: str, started_at: datetime, text: str) -> Path:
    """Write a rendered note atomically under a name of its own; return its path."""
    path = note_path(working_dir, domain, started_at)
    atomic_write_text(path, text)
    return path


def note_text(working_dir: Path, file: str) -> str | None:
    """A note's text, by its file name in `working_dir`; None if there is no such file."""
    path = working_dir / Path(file).name
    if not path.is_file():
        return None
    return path.read_text(encoding="utf-8", errors="replace")


def note_prose(working_dir: Path, file: str) -> str | None:
    """The reasoning a note holds, by its file name in `working_dir`; None if absent or empty."""
    path = working_dir / Path(file).name
    if not path.is_file():
        return None
    return prose_of(path.read_text(encoding="utf-8", errors="replace"))


def last_note_prose(working_dir: Path, domain: str) -> str | None:
    """The reasoning of the newest note for `domain` by its name's time and counter.

    Only for a journal that names no note (core/journal/continuity.py chooses by the run's start
    time).
    """
    if not working_dir.is_dir():
        return None
    named = [(_note_order(p.name, domain), p) for p in working_dir.glob(f"*-{domain}*.md")]
    notes = sorted((order, p) for order, p in named if order is not None)
    for _, path in reversed(notes):
        prose = prose_of(path.read_text(encoding="utf-8", errors="replace"))
        if prose is not None:
            return prose
    return None


def _note_order(name: str, domain: str) -> tuple[str, int] | None:
    match = re.match(r"^(?P<stamp>\d{8}T\d{6}Z)-(?P<domain>[a-z0-9-]+?)(\.(?P<n>\d+))?\.md$", name)
    if match is None or match.group("domain") != domain:
        return None
    return (match.group("stamp"), int(match.group("n") or 1))
