"""Checks made before a command reads the hub or writes anything: each failure is a ConfigError.

A run that cannot write its note, journal or lock must find out before it touches the hub, not
after its writes went out. Nothing here creates or changes a file.
"""

from __future__ import annotations

import os
from pathlib import Path

from custodian_runtime.canon.library import library_paths
from custodian_runtime.errors import ConfigError
from custodian_runtime.llm.file_answer import check_response_file
from custodian_runtime.llm.registry import split_spec
from custodian_runtime.settings import Settings

MEMORY_PARTS = ("working", "approvals", "journal", "locks")
_MEMORY_SETTING = "CUSTODIAN_MEMORY_DIR"


def check_run(settings: Settings) -> None:
    """Everything `custodian run` needs from the disk, checked without writing."""
    check_memory(settings.memory_dir, writable=not settings.dry_run)
    check_canon(settings.canon_dir)
    provider, argument = split_spec(settings.model.spec)
    if provider == "file" and argument:
        check_response_file(Path(argument))
    if settings.hub is not None and settings.hub.embedded:
        check_directory(settings.embedded_dir, "CUSTODIAN_EMBEDDED_DIR", writable=True)


def check_memory(memory_dir: Path, *, writable: bool) -> None:
    """The memory directory and its parts are directories (or can be made) this user can use."""
    check_directory(memory_dir, _MEMORY_SETTING, writable=writable)
    for part in MEMORY_PARTS:
        check_directory(memory_dir / part, _MEMORY_SETTING, writable=writable)


def check_directory(path: Path, setting: str, *, writable: bool) -> None:
    """`path` is a usable directory, or does not exist yet and could be created."""
    # A link to nothing exists to lstat() alone, and still does at a second look; a directory
    # another run made between the looks (the runs of `custodian watch` start together) is none.
    if not path.exists() and os.path.lexists(path) and not path.exists():
        raise ConfigError(f"{path} is a broken symbolic link: {_fix(setting)}", setting=setting)
    if path.exists():
        _usable(path, setting, writable=writable)
        return
    parent = _nearest_existing(path)
    if not parent.is_dir():
        raise ConfigError(
            f"{path} cannot be created: {parent} is a file, not a directory; {_fix(setting)}",
            setting=setting,
        )
    if writable and not os.access(parent, os.W_OK | os.X_OK):
        raise ConfigError(
            f"{path} cannot be created: {parent} is not writable by this user "
            f"(uid {os.getuid()}); {_fix(setting)}",
            setting=setting,
        )


def check_canon(canon_dir: Path) -> None:
    """The canon directory holds a readable constitution.md, and this Python can retrieve from
    the canon's other files when it has any (FTS5)."""
    constitution = canon_dir / "constitution.md"
    if not constitution.is_file():
        raise ConfigError(
            f"no constitution at {constitution}: point CUSTODIAN_CANON_DIR (or --canon) at the "
            "canon directory that contains constitution.md",
            setting="CUSTODIAN_CANON_DIR",
        )
    if not os.access(constitution, os.R_OK):
        raise ConfigError(
            f"{constitution} is not readable by this user (uid {os.getuid()}): fix its "
            "permissions, or point CUSTODIAN_CANON_DIR (or --canon) at a readable canon",
            setting="CUSTODIAN_CANON_DIR",
        )
    if library_paths(canon_dir):
        from custodian_runtime.canon.index import require_fts5  # sqlite3: only when needed

        require_fts5()


def _usable(path: Path, setting: str, *, writable: bool) -> None:
    if not path.is_dir():
        raise ConfigError(f"{path} is a file, not a directory: {_fix(setting)}", setting=setting)
    mode, what = (os.W_OK | os.X_OK, "writable") if writable else (os.R_OK | os.X_OK, "readable")
    if not os.access(path, mode):
        raise ConfigError(
            f"{path} is not {what} by this user (uid {os.getuid()}): {_fix(setting)}",
            setting=setting,
        )


def _nearest_existing(path: Path) -> Path:
    for parent in path.parents:
        if parent.exists() or os.path.lexists(parent):
            return parent
    return Path(path.anchor)


def _fix(setting: str) -> str:
    flag = {"CUSTODIAN_MEMORY_DIR": " (or --memory)"}.get(setting, "")
    return (
        f"point {setting}{flag} at a directory this user can use, or fix its permissions "
        "(in Kubernetes: the volume mount and the pod's fsGroup)"
    )
