"""Deciding never waits for a run: a decision made while the domain is busy is kept as a word.

`decide_or_record` tries the decision now and, while a run has the domain's lock, again until a
bounded wait runs out; then it keeps the word in the domain's inbox (journal/person/inbox.py)
and says what happens next. `carry_out_recorded` is called by the next step that can hold the
domain: it absorbs the inbox in arrival order, each word once: a mode or grant is journaled, an
approve or reject carried out through the same path as a decision made at once.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from datetime import datetime
from itertools import takewhile
from typing import Any

from custodian_runtime.core.approvals.items import ApprovalItem
from custodian_runtime.core.approvals.recorded_decisions import (
    RecordedDecision,
    as_recorded,
    waiting_message,
)
from custodian_runtime.core.fold.api import Record
from custodian_runtime.core.fold.checkpoint import Checkpoint, already_absorbed
from custodian_runtime.core.inert import for_terminal
from custodian_runtime.core.journal.kinds import WORD_KINDS
from custodian_runtime.core.journal.words import Word, decision_word, put_back_message
from custodian_runtime.errors import ApprovalError, CustodianError, RunLocked
from custodian_runtime.journal.person.inbox import Inbox, new_word_id
from custodian_runtime.journal.person.standing_store import StandingStore
from custodian_runtime.journal.run_journal import DiskJournal
from custodian_runtime.journal.store import JournalWriter
from custodian_runtime.person._report import DecisionReport
from custodian_runtime.settings import Settings

POLL_S = 0.5


def decide_or_record(
    attempt: Callable[[], DecisionReport],
    record: Callable[[RunLocked], DecisionReport],
    wait_s: float,
    *,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> DecisionReport:
    """`attempt()` now, or until `wait_s` is spent while the domain is busy; then `record`."""
    deadline = clock() + max(0.0, wait_s)
    while True:
        try:
            return attempt()
        except RunLocked as busy:
            if clock() >= deadline:
                return record(busy)
        sleep(POLL_S)


def record_for_later(
    settings: Settings,
    item: ApprovalItem,
    word: Word,
    busy: RunLocked,
) -> DecisionReport:
    """Keep the word in the domain's inbox; the message says what happens when it is free."""
    _keep(settings, item, word)
    return DecisionReport(item.id, 0, waiting_message(as_recorded(word), _holder(busy)))


def keep_behind(settings: Settings, item: ApprovalItem, word: Word, ahead: int) -> DecisionReport:
    """Keep the word behind `ahead` earlier words this command cannot carry out (kept for
    another hub or canon): it is carried out after them, in the order it came."""
    _keep(settings, item, word)
    said = as_recorded(word)
    what = "rejection" if said.decision == "reject" else "approval"
    return DecisionReport(item.id, 0, (
        f"{item.id}: {what} by {said.by} recorded behind {ahead} earlier word(s) of "
        f"{item.domain} that this command cannot carry out (kept for another hub or canon): it "
        "is carried out after them, in the order it came, by a command that can"
    ))  # fmt: skip


def _keep(settings: Settings, item: ApprovalItem, word: Word) -> None:
    """Append the word to the domain's inbox, unless a kept word decided the item first."""
    inbox = Inbox(settings.memory_dir, settings.seal_key)
    for kept in inbox.waiting(item.domain):
        if not kept.standing and kept.decision().approval_id == item.id:
            first = as_recorded(kept)
            raise ApprovalError(
                f"{item.id}: {first.by} already decided it ({first.decision}, recorded at "
                f"{first.at.isoformat()}); it is carried out when the domain is free"
            )
    inbox.append(word)


def words_ahead(settings: Settings, domain: str) -> int:
    """How many words wait in `domain`'s inbox that came after the last one its journal
    absorbed (a word put back from before that is no word ahead: it is never carried out)."""
    inbox = Inbox(settings.memory_dir, settings.seal_key)
    mark = inbox.absorbed_mark(domain)
    return sum(1 for w in inbox.waiting(domain) if w.arrival is None or w.arrival > mark)


class AlreadyJournaled(ApprovalError):
    """The word was journaled already (by another step that absorbed the inbox): nothing to do."""


class PutBack(ApprovalError):
    """A kept word at or below the journal's high-water mark that the journal does not hold:
    a file put back or renumbered. It is never carried out; it stays where `inspect` names it."""


class NotHere(ApprovalError):
    """A kept word this command cannot carry out for a reason that is not the word's (another
    hub, another canon): it stays in the inbox, untouched, for a command that can."""

    def __init__(self, message: str, *, exit_code: int = ApprovalError.exit_code) -> None:
        super().__init__(message)
        self.exit_code = exit_code


class WordsAhead(RunLocked):
    """Words kept in the domain's inbox wait ahead of a decision said now: they go first."""


class WordJournal(DiskJournal):
    """An approval's journal whose decision record carries the person's word (its id)."""

    def __init__(self, writer: JournalWriter, tag: dict[str, Any]) -> None:
        super().__init__(writer)
        self._tag = tag

    def append(self, kind: str, data: dict[str, Any]) -> Record:
        """Append one record durably; the decision's with the word's id."""
        return super().append(kind, {**data, **self._tag} if kind in WORD_KINDS else data)


def word_journal(
    word: Word | None, checkpoint: Checkpoint
) -> Callable[[JournalWriter], WordJournal]:
    """The journal of one decision: `word`'s (AlreadyJournaled if it is, PutBack if its file
    came back from before the journal's mark), or a new word's."""
    if word is not None:
        absorbed = already_absorbed(checkpoint, word.id, word.arrival)
        if absorbed:
            raise AlreadyJournaled(f"{word.id} was journaled already")
        if absorbed is None:
            raise PutBack(put_back_message(word, checkpoint.arrival))
    tag = word.journaled() if word is not None else {"word": new_word_id()}

    def journal_of(writer: JournalWriter) -> WordJournal:
        return WordJournal(writer, tag)

    return journal_of


def carry_out_recorded(
    settings: Settings,
    domain: str | None,
    approve: Callable[[Word], DecisionReport],
    reject: Callable[[Word], DecisionReport],
) -> list[DecisionReport]:
    """Absorb the inbox of each domain that is free now, in arrival order, each word once."""
    inbox = Inbox(settings.memory_dir, settings.seal_key)
    said = inbox.upgrade()
    if said is not None:
        sys.stderr.write(said + "\n")
    domains = [domain] if domain is not None else inbox.domains()
    return [done for name in domains for done in _absorb(settings, inbox, name, approve, reject)]


def _absorb(
    settings: Settings,
    inbox: Inbox,
    domain: str,
    approve: Callable[[Word], DecisionReport],
    reject: Callable[[Word], DecisionReport],
) -> list[DecisionReport]:
    """The words of `domain`, in arrival order, until a run holds it (the rest wait, in order)."""
    words = inbox.waiting(domain) if inbox.count(domain) else []
    standing = StandingStore(settings.memory_dir, settings.seal_key)
    done: list[DecisionReport] = []
    try:
        while words:
            run = list(takewhile(lambda w: w.standing, words))
            if run:
                standing.journal_words(domain, run)
                words = words[len(run) :]
            else:
                report = _carry_out(inbox, words[0], approve, reject)
                done += [report] if report is not None else []
                words = words[1:]
    except RunLocked:
        pass  # a run has the domain's lock again: the rest waits, in its order
    return done


def _carry_out(
    inbox: Inbox,
    word: Word,
    approve: Callable[[Word], DecisionReport],
    reject: Callable[[Word], DecisionReport],
) -> DecisionReport | None:
    """Carry out one kept approve or reject, then forget it (RunLocked: it stays)."""
    if not inbox.still_waiting(word):  # another step carried it out meanwhile
        return None
    try:
        report: DecisionReport | None = (approve if word.kind == "approve" else reject)(word)
    except AlreadyJournaled:
        report = None
    except (NotHere, PutBack) as exc:  # not the word's own refusal: it stays, and is named
        sys.stderr.write(for_terminal(f"custodian: kept, not carried out: {exc.message}") + "\n")
        return _refused(word, exc)
    except ApprovalError as exc:  # decided or expired since: nothing left to carry out
        report = _refused(word, exc)
    inbox.done(word)
    return report


def _refused(word: Word, exc: ApprovalError) -> DecisionReport:
    return DecisionReport(word.decision().approval_id, exc.exit_code, exc.message)


def recorded(
    item: ApprovalItem, decision: str, by: str, text: str | None, now: datetime,
    by_source: str | None = None,
) -> Word:  # fmt: skip
    """The word a person said on `item`, as it is kept for later."""
    return decision_word(item.domain, item.id, decision, by, text, now, new_word_id(), by_source)


def recorded_decisions(
    settings: Settings, domain: str | None = None
) -> dict[str, RecordedDecision]:
    """Decisions recorded while a run had their domain's lock, by item id ({} if unreadable: the
    CLI's `approvals` command says why)."""
    inbox = Inbox(settings.memory_dir)
    try:
        words = [w for d in ([domain] if domain else inbox.domains()) for w in inbox.waiting(d)]
    except CustodianError:
        return {}
    kept = [as_recorded(w) for w in words if not w.standing]
    return {d.approval_id: d for d in kept}


def _holder(busy: RunLocked) -> str:
    """`pid 12 on host-a, run R, started T`, from the lock's message."""
    return busy.message.split("; ", 1)[0].split(" is locked by ", 1)[-1]
