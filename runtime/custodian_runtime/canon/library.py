"""The canon read from disk for a run: every Markdown file, its front matter read, its digest.

Hidden files and folders (a write's temporary file, `.git`) are not canon. What the files mean
(which are pinned, which are split and retrieved) is decided in core/canon/sections.py.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from custodian_runtime.core.canon.sections import (
    CONSTITUTION,
    CanonFile,
    canon_key,
    guidance_path,
    is_library,
    parse_file,
)
from custodian_runtime.core.digest import sha256_hex
from custodian_runtime.errors import ConfigError

MAX_FILE_BYTES = 4 << 20  # one canon file; a larger one is refused, naming it


@dataclass(frozen=True)
class Canon:
    """The canon's files by path, and the SHA-256 of each file's bytes."""

    files: Mapping[str, CanonFile]
    digests: Mapping[str, str]

    @property
    def constitution(self) -> CanonFile:
        """The constitution (read_canon_dir refuses a canon without one)."""
        return self.files[CONSTITUTION]

    def guidance(self, domain: str) -> CanonFile | None:
        """The domain's own guidance, if the canon has any."""
        return self.files.get(guidance_path(domain))

    @property
    def library(self) -> tuple[CanonFile, ...]:
        """The files that are neither the constitution nor a domain's guidance, by path."""
        return tuple(f for path, f in sorted(self.files.items()) if is_library(path))

    @property
    def library_key(self) -> str | None:
        """One digest of the library's files (None when there is none): the index's name."""
        pairs = [(path, self.digests[path]) for path in sorted(self.files) if is_library(path)]
        return canon_key(pairs) if pairs else None


def read_canon_dir(canon_dir: Path) -> Canon:
    """Every `*.md` file under `canon_dir`; ConfigError when the constitution is missing or a
    file cannot be read as canon."""
    constitution = canon_dir / CONSTITUTION
    if not constitution.is_file():
        raise ConfigError(
            f"no constitution at {constitution}: point CUSTODIAN_CANON_DIR (or --canon) at "
            "the canon directory that contains constitution.md",
            setting="CUSTODIAN_CANON_DIR",
        )
    files: dict[str, CanonFile] = {}
    digests: dict[str, str] = {}
    for relative in _markdown(str(canon_dir)):
        data = _read(os.path.join(canon_dir, relative), relative)
        digests[relative] = sha256_hex(data)
        text = data.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")
        files[relative] = parse_file(relative, text)  # newlines as text mode reads them
    return Canon(files, digests)


def library_digest(canon_dir: Path) -> str | None:
    """The digest the library's index is named by, read without parsing (None: no library)."""
    pairs = [
        (relative, sha256_hex(_read(os.path.join(canon_dir, relative), relative)))
        for relative in _markdown(str(canon_dir))
        if is_library(relative)
    ]
    return canon_key(pairs) if pairs else None


def library_paths(canon_dir: Path) -> list[str]:
    """The library's files (not the constitution, not a domain's guidance), relative, sorted;
    none when the directory cannot be listed."""
    try:
        return [path for path in _markdown(str(canon_dir)) if is_library(path)]
    except OSError:
        return []


def _markdown(root: str, folder: str = "") -> list[str]:
    """The relative paths of the `*.md` files under `root`, hidden ones left out, sorted."""
    found: list[str] = []
    with os.scandir(os.path.join(root, folder)) as entries:
        for entry in sorted(entries, key=lambda e: e.name):
            if entry.name.startswith("."):
                continue
            relative = f"{folder}/{entry.name}" if folder else entry.name
            if entry.is_dir(follow_symlinks=False):
                found += _markdown(root, relative)
            elif entry.name.endswith(".md"):
                found.append(relative)
    return found


def _read(path: str, relative: str) -> bytes:
    try:
        with open(path, "rb") as file:
            data = file.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise ConfigError(
            f"cannot read the canon file {relative} ({exc.strerror}): fix its permissions "
            "or move it out of the canon directory",
            setting="CUSTODIAN_CANON_DIR",
        ) from None
    if len(data) > MAX_FILE_BYTES:
        raise ConfigError(
            f"the canon file {relative} is over {MAX_FILE_BYTES >> 20} MiB: split it",
            setting="CUSTODIAN_CANON_DIR",
        )
    return data
