"""`inspect`'s inbox section: the words kept for a domain, checked against its journal.

A kept word whose seal fails may not be carried out; one whose id the journal absorbed already
is a copy put back (it changes nothing: absorbing is exactly once, and the next step that holds
the domain removes it); one at or below the journal's high-water mark that the journal does not
hold was put back from before it, and is never carried out; a file that is no kept word is damage.
Each is named, and the replay is not `ok`.
"""

from __future__ import annotations

from pathlib import Path

from custodian_runtime.core.journal.seals import SealKey
from custodian_runtime.core.journal.words import put_back_message
from custodian_runtime.journal.person.inbox import Inbox
from custodian_runtime.journal.verify import DomainReport


def inbox_lines(memory_dir: Path, report: DomainReport, key: SealKey | None) -> list[str]:
    """One line per kept word of the domain that may not be carried out, and why."""
    inbox = Inbox(memory_dir, key)
    lines = []
    for path in inbox.files(report.domain):
        word, problem = inbox.problem(path)
        shown = f"inbox/{report.domain}/{path.name}"
        if word is None:
            lines.append(f"inbox: {problem}")
        elif word.id in report.words:
            lines.append(
                f"inbox: {shown} contains word {word.id} ({word.kind}), which the journal absorbed "
                "already: a copy put back; it changes nothing, and the next run or approvals "
                "command removes it"
            )
        elif word.arrival is not None and word.arrival <= report.arrival:
            lines.append(f"inbox: {put_back_message(word, report.arrival)}")
    for path in inbox.strays(report.domain):
        lines.append(
            f"inbox: inbox/{report.domain}/{path.name} is not a kept word (a word is "
            "<arrival>.json, a mark <arrival>.done): no command reads it; move it out of the inbox"
        )
    return lines
