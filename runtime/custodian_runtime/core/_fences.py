"""Fenced code blocks of a Markdown answer, found the way CommonMark finds them.

Only top-level fences count: a fence opens on a line indented by at most three spaces with three
or more backticks or tildes, and closes on a line of the same character, at least as long, and
nothing else. Whatever sits between an opening and its closing fence is content, so a ```json
line inside a ````markdown or ~~~ block is not a block of its own. Fences inside block quotes or
list items indented by four spaces or more are not recognised.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_OPEN = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,})(?P<info>[^\n]*)$")


@dataclass(frozen=True)
class Fence:
    """One fenced block: its info string, body and where it sits (0-based line numbers)."""

    info: str
    body: str
    first_line: int
    end_line: int  # one past the closing fence (or past the last line when never closed)
    closed: bool

    @property
    def language(self) -> str:
        """The info string trimmed and lower-cased: `json` for a ```json fence."""
        return self.info.strip().lower()


def find_fences(lines: list[str]) -> list[Fence]:
    """Every top-level fenced block in `lines` (each line without its line break)."""
    fences: list[Fence] = []
    i = 0
    while i < len(lines):
        opening = _opening(lines[i])
        if opening is None:
            i += 1
            continue
        marker, info = opening
        end = _closing_index(lines, i + 1, marker)
        closed = end < len(lines)
        body = "\n".join(lines[i + 1 : end])
        stop = end + 1 if closed else len(lines)
        fences.append(Fence(info=info, body=body, first_line=i, end_line=stop, closed=closed))
        i = stop
    return fences


def _opening(line: str) -> tuple[str, str] | None:
    match = _OPEN.match(line)
    if match is None:
        return None
    marker, info = match.group("fence"), match.group("info")
    # CommonMark: a backtick fence's info string may not hold a backtick (that is inline code).
    if marker[0] == "`" and "`" in info:
        return None
    return marker, info


def _closing_index(lines: list[str], start: int, marker: str) -> int:
    closing = re.compile(r"^ {0,3}" + re.escape(marker[0]) + "{" + str(len(marker)) + r",}[ \t]*$")
    for j in range(start, len(lines)):
        if closing.match(lines[j]):
            return j
    return len(lines)
