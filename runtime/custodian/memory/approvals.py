"""The approval queue on disk: `memory/approvals/<id>.json`, one file per item, atomic."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from custodian.core.approvals import ApprovalItem
from custodian.core.digest import strict_loads
from custodian.errors import ApprovalError
from custodian.memory.files import atomic_write_text


class ApprovalStore:
    """Reads and writes approval items; every file read back is parsed by `ApprovalItem`."""

    def __init__(self, memory_dir: Path) -> None:
        self.directory = memory_dir / "approvals"

    def all(self, domain: str | None = None) -> list[ApprovalItem]:
        """Every item (of `domain`, if given), ordered by creation time."""
        if not self.directory.is_dir():
            return []
        items = [self._read(path) for path in sorted(self.directory.glob("*.json"))]
        if domain is not None:
            items = [i for i in items if i.domain == domain]
        return sorted(items, key=lambda i: (i.created_at, i.id))

    def get(self, approval_id: str) -> ApprovalItem:
        """The item with this id, or ApprovalError saying how to list the ids."""
        path = self._path(approval_id)
        if not path.is_file():
            raise ApprovalError(
                f"no approval {approval_id!r} in {self.directory}; "
                "`custodian approvals list` shows the ids"
            )
        return self._read(path)

    def save(self, item: ApprovalItem) -> Path:
        """Write the item atomically (a new file, or an update of its status)."""
        path = self._path(item.id)
        atomic_write_text(path, item.model_dump_json(indent=2) + "\n")
        return path

    def ids(self) -> list[str]:
        """Every id on disk."""
        if not self.directory.is_dir():
            return []
        return [p.stem for p in self.directory.glob("*.json")]

    def _path(self, approval_id: str) -> Path:
        if not approval_id or "/" in approval_id or approval_id.startswith("."):
            raise ApprovalError(f"{approval_id!r} is not an approval id (e.g. apr-3f2a9c1b7d20)")
        return self.directory / f"{approval_id}.json"

    def _read(self, path: Path) -> ApprovalItem:
        try:
            # Strict JSON: a NaN or an overflowing number in an edited file is damage, not data.
            return ApprovalItem.model_validate(strict_loads(path.read_text(encoding="utf-8")))
        except (ValidationError, ValueError) as exc:
            raise ApprovalError(
                f"approval file {path} is damaged ({exc.__class__.__name__}); "
                "restore it or move it out of the queue before running again"
            ) from exc
