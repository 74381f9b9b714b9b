"""Content stored once per distinct content: snapshots under memory/snapshots/<domain>/.

A snapshot is the canonical JSON of the domain summary without `generated_at` (which changes on
every read), gzip-compressed, named by its SHA-256: the domain's state digest. An `observed`
record names the digest and keeps `generated_at` itself, so an unchanged domain adds no file.
A `prompt` record likewise names its text, kept compressed under memory/prompts/<domain>/.
"""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

from custodian_runtime.core.contract import DomainSummary
from custodian_runtime.core.digest import canonical_json, sha256_hex, strict_loads
from custodian_runtime.core.journal.kinds import Observed
from custodian_runtime.errors import JournalError
from custodian_runtime.files.atomic import atomic_write_bytes
from custodian_runtime.journal.store import check_domain


class ContentStore:
    """Files named by the SHA-256 of their content, gzip-compressed, one folder per domain."""

    def __init__(self, memory_dir: Path, folder: str) -> None:
        self.directory = Path(memory_dir) / folder

    def path(self, domain: str, digest: str) -> Path:
        """Where the content with `digest` of `domain` lives."""
        if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
            raise JournalError(f"{digest!r} is not a content digest (64 hex digits)")
        return self.directory / check_domain(domain) / f"{digest}.json.gz"

    def put(self, domain: str, text: str) -> str:
        """Store `text` unless the same content is stored already; return its digest."""
        digest = sha256_hex(text)
        path = self.path(domain, digest)
        if not path.exists():
            atomic_write_bytes(path, gzip.compress(text.encode("utf-8"), mtime=0))
        return digest

    def load(self, domain: str, digest: str) -> bytes:
        """The content stored under `digest`, checked against its name."""
        path = self.path(domain, digest)
        try:
            data = gzip.decompress(path.read_bytes())
        except (OSError, EOFError) as exc:
            raise JournalError(
                f"{path.parent.parent.name}/{domain}/{path.name} cannot be read ({exc}); "
                "was it pruned or moved?",
                path=str(path),
            ) from exc
        if sha256_hex(data) != digest:
            raise JournalError(
                f"{path.name} does not match its digest: the file was changed", path=str(path)
            )
        return data

    def digests(self, domain: str) -> set[str]:
        """Digests of everything stored for `domain`."""
        folder = self.directory / check_domain(domain)
        if not folder.is_dir():
            return set()
        return {p.name[: -len(".json.gz")] for p in folder.glob("*.json.gz")}


class SnapshotStore(ContentStore):
    """Observed domain summaries under memory/snapshots/, named by the state digest."""

    def __init__(self, memory_dir: Path) -> None:
        super().__init__(memory_dir, "snapshots")

    def put_summary(self, summary: DomainSummary) -> str:
        """Store the summary (without `generated_at`) once; its digest is the state digest."""
        text = canonical_json(summary.model_dump(mode="json", exclude={"generated_at"}))
        return self.put(summary.domain, text)

    def load_summary(self, domain: str, digest: str, generated_at: str | None) -> dict[str, Any]:
        """The summary (as JSON data) stored under `digest`."""
        data = strict_loads(self.load(domain, digest))
        return {**data, "generated_at": generated_at}


def observed_summary(
    snapshots: SnapshotStore, domain: str, seen: Observed
) -> dict[str, Any] | None:
    """The summary an `observed` record holds inline, or names by its snapshot digest."""
    if seen.summary is not None:
        return dict(seen.summary)
    if seen.snapshot is None:
        return None
    return snapshots.load_summary(domain, seen.snapshot, seen.generated_at)
