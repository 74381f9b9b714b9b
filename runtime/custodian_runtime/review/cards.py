"""What a card shows under its sentence: a write_canon's diff, a create's fields, the evidence."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from custodian_runtime.canon import resolve_inside
from custodian_runtime.core import operations
from custodian_runtime.core.approvals.items import ApprovalItem
from custodian_runtime.core.authority import evidence
from custodian_runtime.core.authority.precondition import writes_canon
from custodian_runtime.core.presentation.display import one_line
from custodian_runtime.errors import CustodianError
from custodian_runtime.review._sentence import Facts

MAX_OLD_BYTES = 1_000_000


@dataclass(frozen=True)
class DiffLine:
    """One line of a unified diff and its class: `add`, `del`, `hunk`, `head` or `ctx`."""

    kind: str
    text: str


@dataclass(frozen=True)
class Cited:
    """An event a proposal cites, and what the event says (None when the hub no longer shows it)."""

    event_id: str
    said: str | None


def old_canon(canon_dir: Path, relative: str) -> str | None:
    """The canon file as it is now ("" when absent), or None when it cannot be read safely."""
    try:
        path = resolve_inside(canon_dir, relative)
    except CustodianError:
        return None
    if not path.is_file():
        return ""
    if path.stat().st_size > MAX_OLD_BYTES:
        return None
    return path.read_text(encoding="utf-8", errors="replace")


def canon_diff(
    old: str, new: str, relative: str, labels: tuple[str, str] = ("now", "proposed")
) -> tuple[DiffLine, ...]:
    """The unified diff of the canon file, old (now) against new (proposed), line by line."""
    lines = difflib.unified_diff(
        old.splitlines(),
        new.splitlines(),
        f"{relative} ({labels[0]})",
        f"{relative} ({labels[1]})",
        lineterm="",
    )
    return tuple(DiffLine(_kind(line), line) for line in lines)


def _kind(line: str) -> str:
    if line.startswith(("+++", "---")):
        return "head"
    if line.startswith("@@"):
        return "hunk"
    return {"+": "add", "-": "del"}.get(line[:1], "ctx")


def diff_of(canon_dir: Path, item: ApprovalItem) -> tuple[DiffLine, ...] | None:
    """A write_canon item's diff against the file now; None for other items or an unsafe path."""
    if not writes_canon(item.operation):
        return None
    relative, new = item.params.get("path"), item.params.get("content")
    if not isinstance(relative, str) or not isinstance(new, str):
        return None
    if item.status == "executed":
        return recorded_diff(item)
    old = old_canon(canon_dir, relative)
    return None if old is None else canon_diff(old, new, relative)


FEW_LINES = 3  # a removal of more lines than this is said in words on the card


def removed_lines(old: str, new: str) -> int:
    """How many lines of `old` the write does not keep (difflib's matching blocks)."""
    was, will = old.splitlines(), new.splitlines()
    matcher = difflib.SequenceMatcher(None, was, will, autojunk=False)
    return len(was) - sum(block.size for block in matcher.get_matching_blocks())


def removal_of(canon_dir: Path, item: ApprovalItem) -> str | None:
    """A pending write_canon's removal in words (`removes 24 of 26 lines of P`), when it
    removes more than a few lines of the file as it is now; else None."""
    relative, new = item.params.get("path"), item.params.get("content")
    if not writes_canon(item.operation) or not isinstance(relative, str):
        return None
    old = old_canon(canon_dir, relative) if isinstance(new, str) else None
    if not old or new is None:
        return None
    gone, total = removed_lines(old, new), len(old.splitlines())
    if gone <= FEW_LINES:
        return None
    written = len(new.splitlines())
    return f"removes {gone} of {total} lines of {relative} (keeps {total - gone}, writes {written})"


def recorded_diff(item: ApprovalItem) -> tuple[DiffLine, ...] | None:
    """What an executed canon write changed: the file before it, as its result keeps it, against
    the content it wrote (None when the result kept no `before`: an item from before it was)."""
    before = (item.result or {}).get("before")
    relative, new = item.params.get("path"), item.params.get("content")
    if not isinstance(before, str) or not isinstance(relative, str) or not isinstance(new, str):
        return None
    return canon_diff(before, new, relative, ("before", "written"))


def kept_in(item: ApprovalItem) -> str:
    """Where the item's target is kept, by its operation's spec: `in the canon` or `on the hub`."""
    return "in the canon" if writes_canon(item.operation) else "on the hub"


def fields_of(item: ApprovalItem) -> tuple[tuple[str, str], ...]:
    """A create's fields as (name, value) rows; empty for other operations."""
    spec = operations.find(item.operation)
    if spec is None or spec.creates is None:
        return ()
    return tuple((one_line(k), _value(v)) for k, v in item.params.items() if v is not None)


def _value(value: Any) -> str:
    if isinstance(value, list | tuple):
        return ", ".join(one_line(v) for v in value)
    return one_line(value)


def cited_events(item: ApprovalItem, facts: Facts) -> tuple[Cited, ...]:
    """The events the item cites as evidence, each with what it says on the hub now."""
    return tuple(Cited(i, facts.said.get(i)) for i in evidence.cited(item.params))
