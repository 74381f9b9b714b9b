"""A session note read later: what became of each item its run put to a person.

A note is written once, when its run ends, and says what the run did then: "Queued for a
person's approval (8)". What became of those items is the journal's to say (a person's decision
is one record there, core/approvals/ledger.py), so a note is shown with it, never rewritten: each
queued item gets a line saying what it came to (executed, rejected and why, expired), and once
none of them waits the section's heading says so instead of "queued".
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from custodian_runtime.core.inert import markdown_line

QUEUED_HEADING = re.compile(r"^### Queued for a person's approval \((?P<n>\d+)\)$")
# The note's own words for a queued item (run/record.py): `— approval `apr-…``, at the line's end.
APPROVAL = re.compile(r" — approval `(?P<id>apr-[A-Za-z0-9-]{1,100})`$")
# The order a heading counts outcomes in; what still waits comes last.
ORDER = ("executed", "rejected", "expired", "stale", "failed", "unknown", "approved", "pending")
_LEVELS = 3


@dataclass(frozen=True)
class Became:
    """What became of one item: its status as the journal says it, and that in a sentence."""

    status: str
    sentence: str


def queued_ids(markdown: str) -> list[str]:
    """The approval ids of the items the note says its run queued, in the note's order."""
    lines = markdown.split("\n")
    start = _section(lines)
    if start is None:
        return []
    return [m["id"] for line in lines[start[0] : start[1]] if (m := APPROVAL.search(line))]


def _section(lines: Sequence[str]) -> tuple[int, int] | None:
    """The lines of the queued section (after its heading, up to the next heading)."""
    head = next((n for n, line in enumerate(lines) if QUEUED_HEADING.match(line)), None)
    if head is None:
        return None
    end = next((n for n in range(head + 1, len(lines)) if lines[n].startswith("#")), len(lines))
    return head + 1, end


def tally(became: Sequence[Became]) -> str:
    """`5 executed, 2 rejected, 1 expired` (`still waiting` for the pending ones)."""
    counted = Counter(b.status for b in became)
    known = [s for s in ORDER if counted[s]] + sorted(set(counted) - set(ORDER))
    return ", ".join(f"{counted[s]} {'still waiting' if s == 'pending' else s}" for s in known)


def heading(total: int, became: Sequence[Became]) -> str:
    """The section's heading: queued while any item waits, what they came to once none does."""
    said = tally(became)
    if any(b.status == "pending" for b in became) or not became:
        return f"### Queued for a person's approval ({total})" + (f": {said}" if said else "")
    return f"### Put to a person ({total}), all since decided or expired: {said}"


def with_outcomes(markdown: str, became: Mapping[str, Became]) -> str:
    """The note with each queued item's outcome under it and its section's heading true now."""
    lines = markdown.split("\n")
    section = _section(lines)
    if section is None:
        return markdown
    start, end = section
    total = int(QUEUED_HEADING.sub(r"\g<n>", lines[start - 1]))
    shown = [became[i] for i in queued_ids(markdown) if i in became]
    out = [*lines[: start - 1], heading(total, shown)]
    item: str | None = None
    for line in lines[start:end]:
        if line.startswith("- "):
            out += _outcome(item, became)
            found = APPROVAL.search(line)
            item = found["id"] if found else None
        elif not line.strip() and item is not None:
            out += _outcome(item, became)
            item = None
        out.append(line)
    out += _outcome(item, became)
    return "\n".join([*out, *lines[end:]])


def _outcome(approval_id: str | None, became: Mapping[str, Became]) -> list[str]:
    if approval_id is None or approval_id not in became:
        return []
    shown = became[approval_id]
    said = markdown_line(shown.sentence, _LEVELS)
    # A paragraph of its own in the item's list entry (indented as the entry's text).
    if shown.status == "pending":
        return ["", f"  **Now:** {said}"]
    return ["", f"  **Became:** {shown.status}: {said}"]
