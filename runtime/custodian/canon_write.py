"""The one way an approved proposal writes to the canon: inside the canon directory, atomically."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path, PurePosixPath

from custodian.errors import ApprovalError
from custodian.memory.files import atomic_write_text


def resolve_inside(canon_dir: Path, relative: str) -> Path:
    """The target path, or ApprovalError if it is absolute, has `..`, or a symlink leads out."""
    pure = PurePosixPath(relative)
    if not relative or "\\" in relative or "\x00" in relative:
        raise ApprovalError(f"canon path {relative!r} is not a plain relative path")
    if pure.is_absolute():
        raise ApprovalError(f"canon path {relative!r} is absolute; canon writes stay in the canon")
    if any(part in ("..", "") for part in pure.parts):
        raise ApprovalError(f"canon path {relative!r} has a '..' component")
    root = Path(os.path.realpath(canon_dir))
    target = root.joinpath(*pure.parts)
    # realpath follows every symlink on the way, including one planted after the proposal.
    resolved = Path(os.path.realpath(target))
    if resolved != target or root not in resolved.parents:
        raise ApprovalError(
            f"canon path {relative!r} leads outside the canon directory (to {resolved})"
        )
    return target


def current_sha256(canon_dir: Path, relative: str) -> str | None:
    """SHA-256 of the canon file now, or None if it does not exist (or the path is unsafe)."""
    try:
        target = resolve_inside(canon_dir, relative)
    except ApprovalError:
        return None
    if not target.is_file():
        return None
    return hashlib.sha256(target.read_bytes()).hexdigest()


def write_canon(canon_dir: Path, relative: str, content: str) -> tuple[Path, str]:
    """Write the file inside the canon after the path checks; return its path and SHA-256."""
    target = resolve_inside(canon_dir, relative)
    atomic_write_text(target, content)
    return target, hashlib.sha256(content.encode("utf-8")).hexdigest()
