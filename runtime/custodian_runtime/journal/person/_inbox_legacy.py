"""The side stores of earlier releases, carried into the inbox once (journal/person/inbox.py).

`memory/decisions/<approval id>.json` (an approve or reject kept while busy) and
`memory/standing/<id>.json` (a mode or grant kept while busy) each had their own seal. Each file
is verified (the current or the previous key), becomes a word in its domain's inbox, in the order
of its recorded time (all an old file has), and is removed only once every word is durable. A
word's id comes from its file, so a carry cut short and run again keeps each word once.
"""

from __future__ import annotations

import contextlib
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from custodian_runtime.core.approvals.recorded_decisions import RecordedDecision
from custodian_runtime.core.digest import canonical_json, sha256_hex, strict_loads
from custodian_runtime.core.journal.seals import SealKey
from custodian_runtime.core.journal.words import Word, decision_word
from custodian_runtime.errors import SealError
from custodian_runtime.files.atomic import fsync_directory
from custodian_runtime.journal.person.inbox_files import DECISIONS, legacy_files

_DECISION_PREFIX = b"custodian recorded decision v1\n"
_STANDING_PREFIX = b"custodian standing decision v1\n"


class KeptStanding(BaseModel):
    """One standing decision as `memory/standing/` kept it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^[a-z]+-[0-9a-f]{6,24}$")
    domain: str
    kind: Literal["policy_set", "grant_issued", "grant_revoked"]
    fields: dict[str, Any]
    at: datetime
    seal: str | None = None


def legacy_words(memory_dir: Path, key: SealKey | None) -> list[tuple[Path, Word]]:
    """Each old file and its word, oldest recorded first; SealError names a file that fails."""
    found = [(path, _word(path, key)) for path in legacy_files(memory_dir)]
    return sorted(found, key=lambda one: (one[1].at, one[0].name))


def remove(paths: list[Path]) -> None:
    """Remove the carried files, and their directories once empty."""
    for path in paths:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
    for directory in {path.parent for path in paths}:
        fsync_directory(directory)
        with contextlib.suppress(OSError):  # not empty: a file that came meanwhile stays
            directory.rmdir()


def _word(path: Path, key: SealKey | None) -> Word:
    try:
        data = strict_loads(path.read_text("utf-8"))
        if path.parent.name == DECISIONS:
            return _decision(RecordedDecision.model_validate(data), key, path)
        return _standing(KeptStanding.model_validate(data), key, path)
    except (OSError, ValueError, ValidationError) as exc:
        raise SealError(f"{_shown(path)} cannot be read ({exc}); nothing was carried") from None


def _decision(kept: RecordedDecision, key: SealKey | None, path: Path) -> Word:
    message = canonical_json(kept.model_dump(mode="json", exclude={"seal"}))
    _check(key, key and key.sealer(_DECISION_PREFIX, message, kept.seal), path, kept.domain)
    word_id = f"decision-{sha256_hex(message)[:16]}"
    return decision_word(
        kept.domain, kept.approval_id, kept.decision, kept.by, kept.text, kept.at, word_id
    )


def _standing(kept: KeptStanding, key: SealKey | None, path: Path) -> Word:
    message = canonical_json(kept.model_dump(mode="json", exclude={"seal"}))
    _check(key, key and key.sealer(_STANDING_PREFIX, message, kept.seal), path, kept.domain)
    return Word(id=kept.id, domain=kept.domain, kind=kept.kind, fields=kept.fields, at=kept.at)


def _check(key: SealKey | None, by: object, path: Path, domain: str) -> None:
    if key is not None and by is None:
        raise SealError(
            f"{_shown(path)} (kept by an earlier release) is not sealed with CUSTODIAN_SEAL_KEY "
            "or CUSTODIAN_SEAL_KEY_PREVIOUS: if the key was rotated, set "
            "CUSTODIAN_SEAL_KEY_PREVIOUS to the key that sealed it; if it was edited or written "
            "without the key, remove it and decide again. Nothing was carried",
            domain=domain,
        )


def _shown(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"
