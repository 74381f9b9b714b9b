"""A person's standing decisions (modes, grants, revokes): each one word (core/journal/words.py).

Each decision is journaled as a person's run of its own (`policy_set`, `grant_issued`,
`grant_revoked`, each carrying its word's id) under the domain's lock. While a run holds the
domain, or while words wait before it, the word goes to the domain's inbox (inbox.py), and the
journal absorbs it in arrival order, exactly once (`journal_words`). A kept word binds the
running run already (`kept_standing`).
"""

from __future__ import annotations

import sys
from contextlib import suppress
from pathlib import Path

from custodian_runtime.clock import utc_now
from custodian_runtime.core.fold.checkpoint import Checkpoint, already_absorbed
from custodian_runtime.core.inert import for_terminal
from custodian_runtime.core.journal.kinds import Entry, GrantRevoked
from custodian_runtime.core.journal.seals import SealKey
from custodian_runtime.core.journal.words import Word, put_back_message, standing_word
from custodian_runtime.core.standing.record import Standing, standing_of, with_kept
from custodian_runtime.errors import RunLocked
from custodian_runtime.journal.lock import RunLock
from custodian_runtime.journal.person.inbox import Inbox, new_word_id
from custodian_runtime.journal.store import JournalStore

# What the Standing page lists as waiting: a kept standing word.


class StandingStore:
    """A domain's standing decisions: record one, read them, journal the kept ones."""

    def __init__(self, memory_dir: Path, seal_key: SealKey | None = None) -> None:
        self.memory_dir = Path(memory_dir)
        self.inbox = Inbox(self.memory_dir, seal_key)
        self._key = seal_key

    def record(self, domain: str, *entries: Entry) -> str | None:
        """Journal `entries` now, each one word, in one person's run; None, or while a run
        has the domain's lock, who holds it (each is kept, and journaled when the domain is free).

        While words wait in the inbox, these are kept after them (None is returned: the
        caller absorbs the inbox next), so the journal keeps their order of arrival.
        """
        now = utc_now()
        words = [standing_word(domain, entry, now, new_word_id()) for entry in entries]
        try:
            self._journal_now(domain, words)
        except RunLocked as busy:
            for word in words:
                self.inbox.append(word)
            return busy.message.split("; ", 1)[0].split(" is locked by ", 1)[-1]
        return None

    def standing(self, domain: str) -> Standing:
        """The domain's modes and grants as its journal records them."""
        opened = JournalStore(self.memory_dir, seal_key=self._key).open(domain, repair=False)
        return standing_of(opened.history)

    def kept_standing(self, domain: str, base: Standing) -> Standing:
        """`base` with every decision kept for `domain` while it was busy applied, in arrival
        order (one directory listing when none waits)."""
        if not self.inbox.count(domain):
            return base
        return with_kept(base, self.inbox.waiting(domain))

    def waiting(self, domain: str | None = None) -> list[Word]:
        """The standing words kept while their domain was busy, in arrival order."""
        domains = [domain] if domain is not None else self.inbox.domains()
        return [w for d in domains for w in self.inbox.waiting(d) if w.standing]

    def waiting_revokes(self, domain: str) -> frozenset[str]:
        """The grants a person revoked while the domain was busy: they bind at once."""
        if not self.inbox.count(domain):
            return frozenset()
        revokes = (GrantRevoked.model_validate(w.fields) for w in self.waiting(domain)
                   if w.kind == "grant_revoked")  # fmt: skip
        return frozenset(str(r.grant_id) for r in revokes)

    def journal_words(self, domain: str, words: list[Word]) -> int:
        """Journal kept standing `words` of `domain` in their order, each once; how many were
        new (RunLocked while a run has the domain's lock: nothing is done)."""
        with RunLock(self.memory_dir, domain, run_id=f"person-{words[0].id}"):
            new, put_back = self._append(domain, words, skip_journaled=True)
            for word in words:
                if word.id not in put_back:  # a word put back stays where `inspect` names it
                    self.inbox.done(word)
        return new

    def _put_back(self, checkpoint: Checkpoint, words: list[Word]) -> set[str]:
        """The kept words put back from before the journal's mark: named, never journaled."""
        found = {w.id for w in words if already_absorbed(checkpoint, w.id, w.arrival) is None}
        for word in (w for w in words if w.id in found):
            said = put_back_message(word, checkpoint.arrival)
            sys.stderr.write(for_terminal(f"custodian: kept, not carried out: {said}") + "\n")
        return found

    def _journal_now(self, domain: str, words: list[Word]) -> None:
        with RunLock(self.memory_dir, domain, run_id=f"person-{words[0].id}"):
            if self.inbox.count(domain):  # after the words that came first
                for word in words:
                    self.inbox.append(word)
                return
            self._append(domain, words, skip_journaled=False)

    def _append(
        self, domain: str, words: list[Word], *, skip_journaled: bool
    ) -> tuple[int, set[str]]:
        """Journal `words` as one person's run (hold the lock); how many were journaled, and
        the ids of the kept words put back (`skip_journaled`: words kept in the inbox)."""
        journals = JournalStore(self.memory_dir, seal_key=self._key)
        opened = journals.open(domain)
        cp = opened.checkpoint
        put_back = self._put_back(cp, words) if skip_journaled else set()
        new = [
            w for w in words if not skip_journaled or already_absorbed(cp, w.id, w.arrival) is False
        ]
        if new:
            writer = journals.writer(domain, f"person-{words[0].id}", utc_now, opened)
            for word in new:
                writer.append(word.kind, {**word.fields, **word.journaled()})
            with suppress(OSError):  # derived data: a failure costs the next run a full scan
                journals.commit(writer)
        return len(new), put_back
