"""The one way an approved proposal writes to the canon: inside the canon directory, atomically.

Every component of the path is opened relative to the canon directory's file descriptor and never
through a symlink (O_NOFOLLOW, O_DIRECTORY), so a symlink swapped in between a check and the write
cannot lead the write outside: the write happens in the directory that was opened, or fails.
The file is written as a temporary file in its own directory and renamed there; the mode of a
replaced file is kept. Every failure is an ApprovalError with the reason.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from custodian_runtime.errors import ApprovalError

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NEW_FILE_MODE = 0o666  # narrowed by the umask, as any new file
_CHUNK = 1 << 16


def readonly_reason(canon_dir: Path, *, flagged: bool, packaged: bool = False) -> str | None:
    """Why no canon write can be carried out here (None: the canon is writable).

    `flagged` is CUSTODIAN_CANON_READONLY. A read-only mount and missing write permission are
    read from the directory; root may write where its mode says not, but not on a read-only
    mount, so the setting and the mount are the rules that hold for root too. The packaged canon
    is refused at approval instead (its own message says how to copy it).
    """
    if flagged:
        return "the canon is read-only here (CUSTODIAN_CANON_READONLY=1); a person edits it"
    if packaged:
        return None
    try:
        mounted_readonly = bool(os.statvfs(canon_dir).f_flag & os.ST_RDONLY)
    except OSError:
        return None  # no such directory yet: preflight reports it
    if mounted_readonly:
        return f"the canon directory {canon_dir} is on a read-only file system"
    if not os.access(canon_dir, os.W_OK):
        return f"this process cannot write the canon directory {canon_dir}"
    return None


def path_parts(relative: str) -> tuple[str, ...]:
    """The components of a plain relative canon path, or ApprovalError saying what is wrong."""
    if not relative or "\\" in relative or "\x00" in relative:
        raise ApprovalError(f"canon path {relative!r} is not a plain relative path")
    pure = PurePosixPath(relative)
    if pure.is_absolute():
        raise ApprovalError(f"canon path {relative!r} is absolute; canon writes stay in the canon")
    if any(part in ("..", "", ".") for part in relative.split("/")):
        raise ApprovalError(f"canon path {relative!r} has an empty, '.' or '..' component")
    return pure.parts


def resolve_inside(canon_dir: Path, relative: str) -> Path:
    """The target path, or ApprovalError if it is absolute, has `..`, or a symlink is on the way.

    A check only: the write itself opens every component again without following symlinks.
    """
    parts = path_parts(relative)
    with _directory(canon_dir, relative, parts[:-1], create=False) as fd:
        if fd is not None:
            _existing_file(fd, relative, parts[-1])
    return Path(canon_dir).joinpath(*parts)


def current_sha256(canon_dir: Path, relative: str, *, strict: bool = False) -> str | None:
    """SHA-256 of the canon file now, or None if it does not exist (or, unless `strict`, if the
    path is unsafe; `strict` raises ApprovalError saying why)."""
    try:
        parts = path_parts(relative)
        with _directory(canon_dir, relative, parts[:-1], create=False) as fd:
            return None if fd is None else _read_sha256(fd, relative, parts[-1])
    except ApprovalError:
        if strict:
            raise
        return None


def read_canon(canon_dir: Path, relative: str, limit: int) -> str | None:
    """The canon file's text ("" when it does not exist), read the way it is written, never
    through a symlink; None when it is over `limit` bytes."""
    parts = path_parts(relative)
    with _directory(canon_dir, relative, parts[:-1], create=False) as fd:
        if fd is None:
            return ""
        try:
            file = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
        except FileNotFoundError:
            return ""
        except OSError as exc:
            raise _escape(relative, relative, exc) from None
        try:
            data = os.read(file, limit + 1)
        finally:
            os.close(file)
    return None if len(data) > limit else data.decode("utf-8", errors="replace")


def write_canon(canon_dir: Path, relative: str, content: str) -> tuple[Path, str]:
    """Write the file inside the canon, never through a symlink; return its path and SHA-256."""
    parts = path_parts(relative)
    data = content.encode("utf-8")
    with _directory(canon_dir, relative, parts[:-1], create=True) as fd:
        if fd is None:  # create=True makes every directory or raises; belt and braces
            raise ApprovalError(f"canon path {relative!r}: its directory could not be made")
        _replace(fd, relative, parts[-1], data)
    return Path(canon_dir).joinpath(*parts), hashlib.sha256(data).hexdigest()


def _escape(relative: str, component: str, exc: OSError) -> ApprovalError:
    if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
        return ApprovalError(
            f"canon path {relative!r} leads outside the canon directory: {component!r} is a "
            "symlink or not a directory, and canon writes never follow symlinks"
        )
    return ApprovalError(f"canon path {relative!r}: cannot open {component!r} ({exc.strerror})")


@contextlib.contextmanager
def _directory(
    canon_dir: Path, relative: str, parts: tuple[str, ...], *, create: bool
) -> Iterator[int | None]:
    """A descriptor of the target's directory (None if missing and not `create`)."""
    fd: int | None
    try:
        fd = os.open(canon_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        raise ApprovalError(f"cannot open the canon directory {str(canon_dir)!r}: {exc}") from None
    try:
        for index, name in enumerate(parts):
            if fd is None:
                break
            child = _open_child(fd, relative, "/".join(parts[: index + 1]), name, create)
            os.close(fd)
            fd = child
        yield fd
    finally:
        if fd is not None:
            os.close(fd)


def _open_child(parent: int, relative: str, shown: str, name: str, create: bool) -> int | None:
    for _ in range(2):
        try:
            return os.open(name, _DIR_FLAGS, dir_fd=parent)
        except FileNotFoundError:
            if not create:
                return None
        except OSError as exc:
            raise _escape(relative, shown, exc) from None
        try:
            os.mkdir(name, 0o755, dir_fd=parent)
        except FileExistsError:
            continue  # made meanwhile: open it (never through a symlink)
        except OSError as exc:
            raise _escape(relative, shown, exc) from None
    raise ApprovalError(f"canon path {relative!r}: {shown!r} keeps changing; try again")


def _existing_file(directory: int, relative: str, name: str) -> os.stat_result | None:
    """The stat of the file being replaced, None if there is none; never a symlink."""
    try:
        found = os.stat(name, dir_fd=directory, follow_symlinks=False)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise _escape(relative, relative, exc) from None
    if stat.S_ISLNK(found.st_mode):
        raise ApprovalError(
            f"canon path {relative!r} leads outside the canon directory: it is a symlink, "
            "and canon writes never follow symlinks"
        )
    if not stat.S_ISREG(found.st_mode):
        raise ApprovalError(f"canon path {relative!r} is not a regular file")
    return found


def _read_sha256(directory: int, relative: str, name: str) -> str | None:
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=directory)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise _escape(relative, relative, exc) from None
    digest = hashlib.sha256()
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ApprovalError(f"canon path {relative!r} is not a regular file")
        while chunk := os.read(fd, _CHUNK):
            digest.update(chunk)
    except OSError as exc:
        raise ApprovalError(f"canon path {relative!r}: cannot read it ({exc.strerror})") from None
    finally:
        os.close(fd)
    return digest.hexdigest()


def _replace(directory: int, relative: str, name: str, data: bytes) -> None:
    """Temporary file in `directory`, fsync, rename over `name`, fsync the directory."""
    existing = _existing_file(directory, relative, name)
    temp = f".{name}.{secrets.token_hex(6)}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(temp, flags, _NEW_FILE_MODE, dir_fd=directory)
        try:
            if existing is not None:
                os.fchmod(fd, stat.S_IMODE(existing.st_mode))
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, name, src_dir_fd=directory, dst_dir_fd=directory)
        os.fsync(directory)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=directory)
        raise ApprovalError(f"canon path {relative!r}: the write failed ({exc.strerror})") from None
