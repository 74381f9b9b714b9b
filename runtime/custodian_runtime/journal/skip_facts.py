"""The skip's facts on disk: `journal/<domain>.skip.json`, beside the checkpoint.

What core/skip/facts.py derives; derived data, like the checkpoint: written by each commit and
by each skip that ends on a 304 (run/_quick.py), sealed with the seal key when one is set. The
file names the journal's last record when it was written (`head`: its seq, its hash and where
its line lies in the active file); a skip trusts the facts only while the journal still ends
with that record. Light on purpose: no pydantic. A file that cannot be read, or does not hold,
is the same as none: the run reads the journal as before.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from custodian_runtime.core.digest import canonical_json, strict_loads
from custodian_runtime.core.journal.chain import fields_hash
from custodian_runtime.core.journal.seal_key import RECORD_PREFIX, SealKey
from custodian_runtime.files.atomic import atomic_write_bytes
from custodian_runtime.journal._segments import SEGMENT_BYTES

PREFIX = b"custodian journal skip facts v1\n"
VERSION = 1


def facts_path(journal_dir: Path, domain: str) -> Path:
    """Where `domain`'s facts are kept."""
    return journal_dir / f"{domain}.skip.json"


def save_facts(
    journal_dir: Path,
    domain: str,
    facts: Mapping[str, Any],
    head: Mapping[str, Any],
    key: SealKey | None,
) -> None:
    """Keep `facts`, derived at `head` (seq, hash, head_start, offset), atomically."""
    body: dict[str, Any] = {**facts, "domain": domain, "head": dict(head)}
    if key is not None:
        body["seal"] = key.mac(PREFIX, canonical_json(body))
    atomic_write_bytes(facts_path(journal_dir, domain), canonical_json(body).encode("utf-8"))


def load_facts(journal_dir: Path, domain: str, key: SealKey | None) -> dict[str, Any] | None:
    """The facts kept for `domain`, or None when absent, unreadable, of another version or
    domain, or (with a key) not sealed by it."""
    try:
        body = strict_loads(facts_path(journal_dir, domain).read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(body, dict) or body.get("v") != VERSION or body.get("domain") != domain:
        return None
    if key is None:
        return body
    seal = body.pop("seal", None)
    ok = isinstance(seal, str) and key.sealer(PREFIX, canonical_json(body), seal) is not None
    return body if ok else None


@dataclass(frozen=True)
class JournalEnd:
    """The journal's last record: its seq and hash, and where its line ends in the active file."""

    seq: int
    hash: str
    offset: int


def journal_end(
    journal_dir: Path, domain: str, kept: Mapping[str, Any], key: SealKey | None
) -> JournalEnd | None:
    """The head the facts name (`kept`), when the active file still ends with it: read back,
    its hash and (with a key) its seal checked; None when a record came since, a tail is torn,
    or the segment is due to rotate at the next run's start (journal/_writer.py)."""
    seq, hash_, start, offset = kept["seq"], kept["hash"], kept["head_start"], kept["offset"]
    if not all(isinstance(n, int) and not isinstance(n, bool) for n in (seq, start, offset)):
        return None
    try:
        with open(journal_dir / f"{domain}.jsonl", "rb") as file:
            if os.fstat(file.fileno()).st_size != offset or offset >= SEGMENT_BYTES:
                return None
            file.seek(start)
            line = file.read(offset - start)
    except OSError:
        return None
    if not line.endswith(b"\n") or b"\n" in line[:-1]:
        return None
    record = strict_loads(line[:-1])
    if not isinstance(record, dict) or (record.get("seq"), record.get("hash")) != (seq, hash_):
        return None
    if fields_hash(record) != hash_ or not _sealed(record, key):
        return None
    return JournalEnd(seq, hash_, offset)


def _sealed(record: Mapping[str, Any], key: SealKey | None) -> bool:
    """With a key, the record carries its seal (core/journal/seals.py); without, nothing to do."""
    if key is None:
        return True
    seal = record.get("seal")
    return isinstance(seal, str) and key.sealer(RECORD_PREFIX, record["hash"], seal) is not None
