"""Decisions recorded while a run holds the domain: `memory/decisions/<approval id>.json`.

One file per item, created exclusively (a second decision on the same item is refused, so the
first person's word stands), written whole before it is linked into place, sealed with the seal
key when one is configured. The file is removed once the decision is journaled.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from pydantic import ValidationError

from custodian_runtime.core.approvals.recorded_decisions import (
    RecordedDecision,
    seal_problem,
    sealed,
)
from custodian_runtime.core.digest import strict_loads
from custodian_runtime.core.journal.seals import SealKey
from custodian_runtime.errors import ApprovalError, SealError
from custodian_runtime.memory._files import fsync_directory


class DecisionInbox:
    """The decisions waiting for their domain to be free."""

    def __init__(self, memory_dir: Path, seal_key: SealKey | None = None) -> None:
        self.directory = Path(memory_dir) / "decisions"
        self._seal_key = seal_key

    def record(self, decision: RecordedDecision) -> Path:
        """Keep `decision`; ApprovalError if a decision on the same item already waits."""
        path = self._path(decision.approval_id)
        data = sealed(self._seal_key, decision).model_dump_json(indent=2).encode("utf-8")
        self.directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=self.directory)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data + b"\n")
                handle.flush()
                os.fsync(handle.fileno())
            os.link(tmp, path)  # fails if the file exists: the first decision stands
        except FileExistsError:
            waiting = self.get(decision.approval_id)
            raise ApprovalError(
                f"{decision.approval_id}: {waiting.by} already decided it ({waiting.decision}, "
                f"recorded at {waiting.at.isoformat()}); it is carried out when the domain is free"
            ) from None
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        fsync_directory(self.directory)
        return path

    def get(self, approval_id: str) -> RecordedDecision:
        """The decision waiting on `approval_id` (its seal checked with a key)."""
        return self._read(self._path(approval_id))

    def waiting(self, domain: str | None = None) -> list[RecordedDecision]:
        """Every waiting decision (of `domain`, if given), oldest first."""
        if not self.directory.is_dir():
            return []
        found = [self._read(p) for p in sorted(self.directory.glob("*.json"))]
        mine = [d for d in found if domain is None or d.domain == domain]
        return sorted(mine, key=lambda d: (d.at, d.approval_id))

    def done(self, approval_id: str) -> None:
        """Forget a decision once it is journaled (or no longer applies)."""
        with contextlib.suppress(FileNotFoundError):
            self._path(approval_id).unlink()
            fsync_directory(self.directory)

    def _read(self, path: Path) -> RecordedDecision:
        try:
            decision = RecordedDecision.model_validate(strict_loads(path.read_text("utf-8")))
        except (OSError, ValueError, ValidationError) as exc:
            raise ApprovalError(f"recorded decision {path.name} cannot be read ({exc})") from None
        problem = seal_problem(self._seal_key, decision)
        if problem is not None:
            raise SealError(f"recorded decision {path.name} {problem}; it is not carried out")
        return decision

    def _path(self, approval_id: str) -> Path:
        if not approval_id or "/" in approval_id or approval_id.startswith("."):
            raise ApprovalError(f"{approval_id!r} is not an approval id (e.g. apr-3f2a9c1b7d20)")
        return self.directory / f"{approval_id}.json"
