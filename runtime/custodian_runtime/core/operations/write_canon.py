"""`write_canon`: replace (or add) one Markdown file of the canon; a file, not a hub write."""

from __future__ import annotations

import hashlib
import re

from custodian_runtime.core.canon.sections import parse_file
from custodian_runtime.core.operations._spec import Landing, Lookup, OperationSpec, Params
from custodian_runtime.core.operations.schema import WriteCanon, short
from custodian_runtime.core.view import View
from custodian_runtime.errors import ConfigError

_DRIVE = re.compile(r"^[A-Za-z]:")


def canon_path_problem(path: str) -> str | None:
    """Why `path` is not a safe relative Markdown path under the canon (None when it is)."""
    if "\x00" in path or "\\" in path or any(ord(ch) < 32 for ch in path):
        return f"the canon path {short(path)} holds a backslash or a control character"
    if path.startswith("/") or _DRIVE.match(path):
        return f"the canon path {short(path)} is absolute; give a path relative to the canon"
    parts = path.split("/")
    if any(part in ("", ".", "..") for part in parts):
        return f"the canon path {short(path)} has an empty, '.' or '..' component"
    if not path.endswith(".md"):
        return f"the canon path {short(path)} does not end in .md"
    return None


def _path_problem(p: Params, view: View) -> str | None:
    problem = canon_path_problem(p["path"])
    content = p.get("content")
    if problem is None and isinstance(content, str):
        try:  # front matter every run would refuse: refused here, before a person is asked
            parse_file(p["path"], content)
        except ConfigError as exc:
            return f"the new content's front matter is wrong: {exc}"
    return problem


def _landed(p: Params, landing: Landing) -> str | None:
    """Found done: the file's hash now is that of the approved content."""
    content = p.get("content")
    if not isinstance(content, str):
        return None
    wanted = hashlib.sha256(content.encode("utf-8")).hexdigest()
    return str(p.get("path")) if landing.canon_sha256 == wanted else None


def _describe(p: Params, lookup: Lookup) -> str:
    lines = len(str(p.get("content", "")).splitlines())
    return f"Write the canon file {p['path']} ({lines} lines)"


def _done(p: Params, lookup: Lookup) -> str:
    lines = len(str(p.get("content", "")).splitlines())
    return f"wrote the canon file {p['path']} ({lines} lines)"


SPEC = OperationSpec(
    name="write_canon",
    section="proposals",
    params=WriteCanon,
    default="approvable",
    fields="{path, content} (a .md path relative to the canon, e.g. `domains/{domain}.md`;\n"
    "  the full new content)",
    request="a file under the canon directory, not the hub",
    landed=_landed,
    describe=_describe,
    done=_done,
    writes="canon",
    targets=("path",),
    already_done=_path_problem,
    never_granted="the canon is the project's own word, and each change to it is read by a person",
)
