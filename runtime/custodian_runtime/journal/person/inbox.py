"""A domain's inbox: a person's words kept while a run has the lock (core/journal/words.py).

`memory/inbox/<domain>/<arrival>.json`, one file per word. The arrival number is the inbox's, not
a host's clock: the next number after the highest name in the directory and the highest the
domain's journal absorbed (its checkpoint's mark), taken by creating the file exclusively (a hard
link of the whole, fsync'd word), so two appenders never share one. A word's file is removed once
its word is journaled; the highest number absorbed stays as an empty `<arrival>.done`. Names are
numbers of any width (twelve digits at least); any other file in the inbox is damage that
`inspect` names (`strays`). Each word is sealed with the seal key.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Iterator
from pathlib import Path

from pydantic import ValidationError

from custodian_runtime.core.contract import is_domain
from custodian_runtime.core.digest import strict_loads
from custodian_runtime.core.journal.seals import Sealer, SealKey
from custodian_runtime.core.journal.words import Word, sealed, sealer
from custodian_runtime.errors import ConfigError, JournalError, SealError
from custodian_runtime.files.atomic import atomic_write_bytes, create_whole, fsync_directory
from custodian_runtime.journal._checkpoint import load_anchor, load_checkpoint
from custodian_runtime.journal._segments import Layout
from custodian_runtime.journal.person._inbox_legacy import legacy_words, remove
from custodian_runtime.journal.person.inbox_files import WORD_NAME, word_files, words_waiting

_NAME = WORD_NAME


def new_word_id() -> str:
    """A fresh word id: `w-` and 16 hex."""
    return f"w-{secrets.token_hex(8)}"


class Inbox:
    """The words kept for each domain, in arrival order."""

    def __init__(self, memory_dir: Path, seal_key: SealKey | None = None) -> None:
        self.memory_dir = Path(memory_dir)
        self.root = self.memory_dir / "inbox"
        self._key = seal_key

    def directory(self, domain: str) -> Path:
        """Where `domain`'s words wait."""
        return self.root / domain

    def domains(self) -> list[str]:
        """The domains with an inbox, sorted."""
        if not self.root.is_dir():
            return []
        return sorted(p.name for p in self.root.iterdir() if p.is_dir() and is_domain(p.name))

    def append(self, word: Word) -> Word:
        """Keep `word` durably under the next arrival number; the word as kept."""
        if not is_domain(word.domain):
            raise ConfigError(f"domain {word.domain!r} cannot name an inbox", setting="--domain")
        directory = self.directory(word.domain)
        directory.mkdir(parents=True, exist_ok=True)
        arrival = max(self._highest(directory), self.absorbed_mark(word.domain)) + 1
        while True:
            kept = sealed(self._key, word.model_copy(update={"arrival": arrival, "seal": None}))
            if create_whole(directory / _name(arrival), _bytes(kept)):
                return kept
            arrival += 1  # another appender took it: the next one

    def count(self, domain: str) -> int:
        """How many words wait for `domain` (one listing; an old side store's file counts)."""
        return words_waiting(self.memory_dir, domain)

    def upgrade(self) -> str | None:
        """Carry the old side stores into the inbox once; the line that says so (None: none)."""
        found = legacy_words(self.memory_dir, self._key)
        if not found:
            return None
        domains = {word.domain for _, word in found}
        here = {w.id for domain in domains for w in map(self._parse, self._files(domain))}
        for _, word in found:
            if word.id not in here:  # a carry cut short: what it kept is kept once
                self.append(word)
        remove([path for path, _ in found])
        return (
            f"custodian: carried {len(found)} decision(s) kept by an earlier release "
            "(memory/decisions/, memory/standing/) into memory/inbox/, in the order they were "
            "recorded; the old files are removed"
        )

    def still_waiting(self, word: Word) -> bool:
        """Whether `word`'s file is still there (no other step absorbed it meanwhile)."""
        return (
            word.arrival is not None
            and (self.directory(word.domain) / _name(word.arrival)).exists()
        )

    def waiting(self, domain: str) -> list[Word]:
        """The words waiting for `domain`, in arrival order, each seal checked with a key."""
        words = []
        for path in self._files(domain):
            try:
                words.append(self._read(path))
            except SealError:
                if path.exists():
                    raise
                # Gone since it was listed: another process journaled it, then forgot it
                # (`done` removes a word only after its journal record): it waits no more.
        return words

    def all_waiting(self) -> list[Word]:
        """Every domain's waiting words."""
        return [word for domain in self.domains() for word in self.waiting(domain)]

    def done(self, word: Word) -> None:
        """Forget a word once it is journaled: its number stays taken (`.done`)."""
        directory = self.directory(word.domain)
        assert word.arrival is not None
        with contextlib.suppress(FileExistsError):
            (directory / _name(word.arrival, "done")).touch(exist_ok=False)
        fsync_directory(directory)
        with contextlib.suppress(FileNotFoundError):
            (directory / _name(word.arrival)).unlink()
        for path in directory.glob("*.done"):
            found = _NAME.match(path.name)
            if found is not None and int(found[1]) < word.arrival:
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
        fsync_directory(directory)

    def sealers(self, domain: str) -> list[tuple[Path, Sealer | None]]:
        """Each waiting word's file and the key that sealed it (None: neither), for a reseal."""
        assert self._key is not None
        return [(path, sealer(self._key, self._parse(path))) for path in self._files(domain)]

    def reseal(self, domain: str) -> int:
        """Seal with the current key each word the previous key sealed; how many."""
        done = 0
        for path, by in self.sealers(domain):
            if by == "previous":
                word = self._parse(path)
                atomic_write_bytes(path, _bytes(sealed(self._key, word)))
                done += 1
        return done

    def problem(self, path: Path) -> tuple[Word | None, str | None]:
        """The word in `path` and why it may not be carried out (None: it may), for inspect."""
        try:
            word = self._read(path)
        except SealError as exc:
            return None, exc.message
        return word, None

    def files(self, domain: str) -> list[Path]:
        """The files of the words waiting for `domain`, in arrival order."""
        return list(self._files(domain))

    def absorbed_mark(self, domain: str) -> int:
        """The highest arrival number `domain`'s journal absorbed, as its checkpoint (or, after
        a prune with no checkpoint yet, its anchor) says; 0 when neither says."""
        layout = Layout(self.memory_dir / "journal", domain)
        saved, _ = load_checkpoint(layout, self._key)
        try:
            anchor = load_anchor(layout, self._key)
        except JournalError:  # opening the journal refuses a bad anchor, and says why
            anchor = None
        return max(
            saved.checkpoint.arrival if saved is not None else 0,
            (anchor.arrival or 0) if anchor is not None else 0,
        )

    def strays(self, domain: str) -> list[Path]:
        """Files in `domain`'s inbox that are neither a kept word nor a `.done` mark."""
        directory = self.directory(domain)
        if not directory.is_dir():
            return []
        return sorted(p for p in directory.iterdir() if _NAME.match(p.name) is None)

    def _files(self, domain: str) -> Iterator[Path]:
        return iter(word_files(self.directory(domain)))

    def _highest(self, directory: Path) -> int:
        numbers = (_NAME.match(p.name) for p in directory.iterdir())
        return max((int(found[1]) for found in numbers if found is not None), default=0)

    def _parse(self, path: Path) -> Word:
        try:
            word = Word.model_validate(strict_loads(path.read_text("utf-8")))
        except (OSError, ValueError, ValidationError) as exc:
            raise SealError(f"the kept word {_shown(path)} cannot be read ({exc})") from None
        found = _NAME.match(path.name)
        if found is None or word.arrival != int(found[1]) or word.domain != path.parent.name:
            raise SealError(
                f"the kept word {_shown(path)} was moved (it names arrival {word.arrival} of "
                f"{word.domain}); remove it and decide again",
                domain=path.parent.name,
            )
        return word

    def _read(self, path: Path) -> Word:
        word = self._parse(path)
        if self._key is not None and sealer(self._key, word) is None:
            raise SealError(
                f"the kept word {_shown(path)} ({word.kind} by "
                f"{word.fields.get('by') or (word.fields.get('grant') or {}).get('by')}) is not "
                "sealed with the seal key (CUSTODIAN_SEAL_KEY, or CUSTODIAN_SEAL_KEY_PREVIOUS "
                "while rotating): if the key was rotated, set CUSTODIAN_SEAL_KEY_PREVIOUS to the "
                "key it was sealed with and run `custodian journal reseal`; if it was edited or "
                "written without the key, remove it and decide again",
                domain=word.domain,
            )
        return word


def _name(arrival: int, suffix: str = "json") -> str:
    return f"{arrival:012d}.{suffix}"


def _shown(path: Path) -> str:
    return f"inbox/{path.parent.name}/{path.name}"


def _bytes(word: Word) -> bytes:
    return word.model_dump_json(indent=2).encode("utf-8") + b"\n"
