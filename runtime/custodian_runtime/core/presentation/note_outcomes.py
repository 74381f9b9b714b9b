"""What became of the items a run put to a person, said where a person reads notes.

A note is written once, when its run ends, and says what the run did then: "Queued for a
person's approval (8)". What became of those items is the journal's to say (a person's decision
is one record there, core/approvals/ledger.py), so a note is never rewritten. Instead:

- the review page shows a note with it (`with_outcomes`): each queued item gets a line saying what
  it came to (executed, rejected and why, expired), and once none of them waits the section's
  heading says so instead of "queued";
- the next run's note, its successor, says what became of the items its predecessor left waiting
  (`earlier_section`), and carries those still waiting in its front matter (`waiting`) for the
  note after it, so each item is said once decided, in the first note after.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from custodian_runtime.core.approvals.items import ApprovalItem, effective_status
from custodian_runtime.core.approvals.ledger import Said
from custodian_runtime.core.inert import code_span, markdown_line
from custodian_runtime.core.presentation.approval_text import fate

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


def became(item: ApprovalItem, said: Said | None, now: datetime) -> Became:
    """What became of `item`: the status the journal says (`said`, its ledger's word), else the
    item's own (pending, or expired), with `approvals show`'s sentence for it."""
    status: str = effective_status(item, now)
    if said is not None and said.status != "pending":
        status = said.status  # the journal's word, though the file may not say it yet
    return Became(status, fate(item, status))


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


@dataclass(frozen=True)
class Earlier:
    """An item an earlier run queued, and what became of it by this run."""

    approval_id: str
    operation: str
    run_id: str
    became: Became


WAITING_KEY = "waiting"  # the front matter's list of earlier items still waiting


def carried_ids(markdown: str) -> list[str]:
    """The items a note leaves waiting for the next to follow: those its run queued, and those
    it carried (`waiting` in its front matter); ids only, in order, each once."""
    lines = markdown.split("\n")
    front = lines[1 : lines.index("---", 1)] if lines[:1] == ["---"] and "---" in lines[1:] else []
    raw = next((x[len(WAITING_KEY) + 2 :] for x in front if x.startswith(f"{WAITING_KEY}: ")), "")
    try:
        carried = json.loads(raw) if raw else []
    except ValueError:
        carried = []
    ids = (
        [i for i in carried if isinstance(i, str) and ID.match(i)]
        if isinstance(carried, list)
        else []
    )
    return list(dict.fromkeys([*queued_ids(markdown), *ids]))


ID = re.compile(r"^apr-[A-Za-z0-9-]{1,100}$")


def still_waiting(earlier: Sequence[Earlier]) -> list[str]:
    """The ids of the earlier items that still wait: the front matter's `waiting`."""
    return [e.approval_id for e in earlier if e.became.status == "pending"]


def earlier_section(earlier: Sequence[Earlier]) -> str | None:
    """One line per earlier item that was decided or expired since; None when none was."""
    lines = [
        f"- {code_span(e.operation)} from run {code_span(e.run_id)}, approval "
        f"{code_span(e.approval_id)}: **{e.became.status}**: "
        f"{markdown_line(e.became.sentence, _LEVELS)}"
        for e in earlier
        if e.became.status != "pending"
    ]
    return "\n".join(lines) or None
