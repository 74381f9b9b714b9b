"""A person's standing decisions (modes, grants, revokes): journaled at once, or kept until free.

Each decision is journaled as a person's run of its own (`policy_set`, `grant_issued`,
`grant_revoked`) under the domain's lock. While a run holds the domain, the decision is kept as
one sealed file in `memory/standing/` and journaled by the next command or run that holds it;
a revoke kept there already binds the run that reads it (see `waiting_revokes`).
"""

from __future__ import annotations

import contextlib
import secrets
from contextlib import suppress
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from custodian_runtime.clock import utc_now
from custodian_runtime.core.digest import canonical_json, strict_loads
from custodian_runtime.core.journal.kinds import MODELS, Entry, GrantRevoked, encode
from custodian_runtime.core.journal.seals import Sealer, SealKey
from custodian_runtime.core.standing.record import Standing, StandingWord, standing_of, with_words
from custodian_runtime.errors import RunLocked, SealError
from custodian_runtime.memory._files import atomic_write_bytes
from custodian_runtime.memory.journal_store import JournalStore
from custodian_runtime.memory.lock import RunLock

_PREFIX = b"custodian standing decision v1\n"
Kind = Literal["policy_set", "grant_issued", "grant_revoked"]


class Waiting(BaseModel):
    """One standing decision kept while its domain was busy."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^[a-z]+-[0-9a-f]{6,24}$")
    domain: str
    kind: Kind
    fields: dict[str, Any]
    at: datetime
    seal: str | None = None


def _message(waiting: Waiting) -> str:
    return canonical_json(waiting.model_dump(mode="json", exclude={"seal"}))


def _mac(key: SealKey, waiting: Waiting) -> str:
    return key.mac(_PREFIX, _message(waiting))


def sealer(key: SealKey, waiting: Waiting) -> Sealer | None:
    """Which key sealed a kept decision: the current one, the previous one (rotating), or None."""
    return key.sealer(_PREFIX, _message(waiting), waiting.seal)


class StandingStore:
    """A domain's standing decisions: record one, read them all, carry out the waiting ones."""

    def __init__(self, memory_dir: Path, seal_key: SealKey | None = None) -> None:
        self.memory_dir = Path(memory_dir)
        self.directory = self.memory_dir / "standing"
        self._key = seal_key

    def record(self, domain: str, *entries: Entry) -> str | None:
        """Journal `entries` now, in one person's run; None, or while a run holds the domain,
        who holds it (each is kept, and journaled when the domain is free)."""
        now = utc_now()
        waiting = [
            Waiting(id=f"{kind.split('_')[0]}-{secrets.token_hex(6)}", domain=domain, kind=kind,
                    fields=data, at=now)
            for kind, data in map(encode, entries)
        ]  # fmt: skip
        try:
            self._journal(*waiting)
        except RunLocked as busy:
            for one in waiting:
                self._keep(one)
            return busy.message.split("; ", 1)[0].split(" is locked by ", 1)[-1]
        return None

    def standing(self, domain: str) -> Standing:
        """The domain's modes and grants as its journal records them."""
        opened = JournalStore(self.memory_dir, seal_key=self._key).open(domain, repair=False)
        return standing_of(opened.history)

    def waiting(self, domain: str | None = None) -> list[Waiting]:
        """The decisions kept while their domain was busy, oldest first."""
        if not self.directory.is_dir():
            return []
        found = [self._read(p) for p in sorted(self.directory.glob("*.json"))]
        return sorted((w for w in found if domain in (None, w.domain)), key=lambda w: w.at)

    def kept_standing(self, domain: str, base: Standing) -> Standing:
        """`base` with every decision kept for `domain` while it was busy applied, in arrival order."""  # noqa: E501
        if not self.directory.is_dir():
            return base  # read at each write of a run: one stat when nothing was kept
        kept = self.waiting(domain)
        if not kept:
            return base
        words = ((cast(StandingWord, MODELS[w.kind].model_validate(w.fields)), w.at) for w in kept)
        return with_words(base, words)

    def waiting_revokes(self, domain: str) -> frozenset[str]:
        """The grants a person revoked while the domain was busy: they bind at once."""
        revoked = (GrantRevoked.model_validate(w.fields) for w in self.waiting(domain)
                   if w.kind == "grant_revoked")  # fmt: skip
        return frozenset(str(r.grant_id) for r in revoked)

    def carry_out(self, domain: str) -> int:
        """Journal the decisions kept for `domain` (none while it is busy); how many."""
        done = 0
        for waiting in self.waiting(domain):
            try:
                self._journal(waiting)
            except RunLocked:
                break
            with contextlib.suppress(FileNotFoundError):
                (self.directory / f"{waiting.id}.json").unlink()
            done += 1
        return done

    def _journal(self, *waiting: Waiting) -> None:
        domain = waiting[0].domain
        run_id = f"person-{waiting[0].id}"
        with RunLock(self.memory_dir, domain, run_id=run_id):
            journals = JournalStore(self.memory_dir, seal_key=self._key)
            opened = journals.open(domain)
            writer = journals.writer(domain, run_id, utc_now, opened)
            for one in waiting:
                writer.append(one.kind, one.fields)
            with suppress(OSError):  # derived data: a failure costs the next run a full scan
                journals.commit(writer)

    def _keep(self, waiting: Waiting) -> None:
        sealed = waiting if self._key is None else waiting.model_copy(
            update={"seal": _mac(self._key, waiting)})  # fmt: skip
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self.directory / f"{waiting.id}.json"
        atomic_write_bytes(path, sealed.model_dump_json(indent=2).encode("utf-8") + b"\n")

    def sealers(self, domain: str) -> list[tuple[str, Sealer | None]]:
        """Each kept decision of `domain` (file name) and the key that sealed it, for a reseal."""
        assert self._key is not None
        found = [(p.name, self._parse(p)) for p in sorted(self.directory.glob("*.json"))]
        return [(name, sealer(self._key, w)) for name, w in found if w.domain == domain]

    def reseal(self, domain: str) -> int:
        """Seal with the current key each kept decision the previous key sealed; how many."""
        done = 0
        for name, by in self.sealers(domain) if self.directory.is_dir() else []:
            if by == "previous":
                self._keep(self._parse(self.directory / name))
                done += 1
        return done

    def _parse(self, path: Path) -> Waiting:
        try:
            return Waiting.model_validate(strict_loads(path.read_text("utf-8")))
        except (OSError, ValueError, ValidationError) as exc:
            raise SealError(f"standing decision {path.name} cannot be read ({exc})") from None

    def _read(self, path: Path) -> Waiting:
        waiting = self._parse(path)
        if self._key is not None and sealer(self._key, waiting) is None:
            raise SealError(
                f"standing decision {path.name} (in {self.directory}) is not sealed with the "
                "seal key (CUSTODIAN_SEAL_KEY, or CUSTODIAN_SEAL_KEY_PREVIOUS while rotating): "
                "if the key was rotated, set "
                "CUSTODIAN_SEAL_KEY_PREVIOUS to the key it was sealed with (and run `custodian "
                "journal reseal`); if it was edited or written without the key, remove it and "
                "decide again",
                domain=waiting.domain,
            )
        return waiting
