"""The skip's facts on disk: `journal/<domain>.skip.json`, beside the checkpoint.

What core/skip/facts.py derives; derived data, like the checkpoint: written by each commit and
by each skip that ends on a 304 (run/_quick.py), sealed with the seal key when one is set. The
file names the journal's last record when it was written (`head`: its seq, its hash and where
its line lies in the active file); a skip trusts the facts only while the journal still ends
with that record. Light on purpose: no pydantic. A file that cannot be read, or does not hold,
is the same as none: the run reads the journal as before.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from custodian_runtime.core.digest import canonical_json, strict_loads
from custodian_runtime.core.journal.seal_key import SealKey
from custodian_runtime.memory.files import atomic_write_bytes

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
