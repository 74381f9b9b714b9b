"""The approval queue on disk: `memory/approvals/<id>.json`, one file per item, atomic."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from pydantic import ValidationError

from custodian_runtime.core.approvals.items import ApprovalItem, QueueView, prunable
from custodian_runtime.core.approvals.seals import item_seal_problem, seal_item
from custodian_runtime.core.digest import strict_loads
from custodian_runtime.core.journal.seals import SealKey
from custodian_runtime.errors import ApprovalError, SealError
from custodian_runtime.files.atomic import atomic_write_text, fsync_directory
from custodian_runtime.journal.person._queue_index import Refreshed, refresh


class ApprovalStore:
    """Reads and writes approval items; every file read back is parsed by `ApprovalItem`.

    With a seal key, every save seals the item and every read refuses an item whose seal does
    not hold (except `all(verify=False)`, for a listing that marks them instead).
    """

    def __init__(
        self, memory_dir: Path, seal_key: SealKey | None = None, *, write_index: bool = True
    ) -> None:
        self.directory = memory_dir / "approvals"
        self._seal_key = seal_key
        self._write_index = write_index  # a dry run reads memory and writes nothing
        self._views: dict[str, Refreshed] = {}

    @property
    def memory_dir(self) -> Path:
        """The memory directory the queue lives in."""
        return self.directory.parent

    @property
    def seal_key(self) -> SealKey | None:
        """The key saves seal with and reads check (None: no seals)."""
        return self._seal_key

    def view(self, domain: str, now: datetime) -> QueueView:
        """What a run needs of the domain's queue, from its index (journal/person/_queue_index.py).

        Every item file changed since it was indexed is read and verified (with a seal key, an
        unsealed one anywhere in the queue raises SealError); the answer is kept until a save.
        """
        return self.refreshed(domain, now).view

    def refreshed(self, domain: str, now: datetime) -> Refreshed:
        """The view with how many item files it read, and why its index was rebuilt, if it was."""
        if domain not in self._views:
            self._views[domain] = refresh(
                self.directory, domain, now, self._read, self._seal_key, write=self._write_index
            )
        return self._views[domain]

    def prune(self, domain: str, now: datetime, keep: timedelta) -> int:
        """Remove the domain's decided items past `keep` and their window; return how many.

        Every file of the domain is read and verified first (a seal problem removes nothing).
        """
        mine = [i for i in self.all(domain) if prunable(i, now, keep)]
        for item in mine:
            self._path(item.id).unlink()
        if mine:
            fsync_directory(self.directory)
            self._views.clear()
        return len(mine)

    def __contains__(self, approval_id: object) -> bool:
        """Whether an item file of this id exists: ids are never reused."""
        return isinstance(approval_id, str) and self._path(approval_id).is_file()

    def all(self, domain: str | None = None, *, verify: bool = True) -> list[ApprovalItem]:
        """Every item (of `domain`, if given), ordered by creation time."""
        if not self.directory.is_dir():
            return []
        items = [self._read(path, verify) for path in sorted(self.directory.glob("*.json"))]
        if domain is not None:
            items = [i for i in items if i.domain == domain]
        return sorted(items, key=lambda i: (i.created_at, i.id))

    def entries(self) -> list[tuple[Path, ApprovalItem]]:
        """Every file and the item it holds, seals not checked (for `journal reseal`)."""
        if not self.directory.is_dir():
            return []
        return [(path, self._read(path, False)) for path in sorted(self.directory.glob("*.json"))]

    def get(self, approval_id: str, *, verify: bool = True) -> ApprovalItem:
        """The item with this id, or ApprovalError saying how to list the ids."""
        path = self._path(approval_id)
        if not path.is_file():
            raise ApprovalError(
                f"no approval {approval_id!r} in {self.directory}; "
                "`custodian approvals list` shows the ids"
            )
        return self._read(path, verify)

    def save(self, item: ApprovalItem) -> Path:
        """Write the item atomically (a new file, or an update of its status), sealed if keyed."""
        path = self._path(item.id)
        if self._seal_key is not None:
            text = seal_item(self._seal_key, item).model_dump_json(indent=2)
        else:
            text = item.model_dump_json(indent=2, exclude={"seal"})
        atomic_write_text(path, text + "\n")
        self._views.clear()
        return path

    def seal_problem(self, item: ApprovalItem) -> str | None:
        """Why the item's seal does not verify; None when it does or no key is configured."""
        if self._seal_key is None:
            return None
        return item_seal_problem(self._seal_key, item)

    def ids(self) -> list[str]:
        """Every id on disk."""
        if not self.directory.is_dir():
            return []
        return [p.stem for p in self.directory.glob("*.json")]

    def _path(self, approval_id: str) -> Path:
        if not approval_id or "/" in approval_id or approval_id.startswith("."):
            raise ApprovalError(f"{approval_id!r} is not an approval id (e.g. apr-3f2a9c1b-7d20)")
        return self.directory / f"{approval_id}.json"

    def _read(self, path: Path, verify: bool = True) -> ApprovalItem:
        try:
            # Strict JSON: a NaN or an overflowing number in an edited file is damage, not data.
            item = ApprovalItem.model_validate(strict_loads(path.read_text(encoding="utf-8")))
        except (ValidationError, ValueError) as exc:
            raise ApprovalError(
                f"approval file {path} is damaged ({exc.__class__.__name__}); "
                "restore it or move it out of the queue before running again"
            ) from exc
        if verify and self._seal_key is not None:
            self._refuse_unsealed(path, item)
        return item

    def _refuse_unsealed(self, path: Path, item: ApprovalItem) -> None:
        assert self._seal_key is not None
        problem = item_seal_problem(self._seal_key, item)
        if problem is None and path.stem != item.id:
            problem = f"it contains item {item.id!r} under another file name"
        if problem is None:
            return
        raise SealError(
            f"approval file {path.name} {problem}. CUSTODIAN_SEAL_KEY is set, so every approval "
            "item must carry a valid seal; nothing was done. If the key was just rotated, set "
            "CUSTODIAN_SEAL_KEY_PREVIOUS to the old key (then `custodian journal reseal`). "
            "Otherwise move the file out of the queue (keep a copy): an item queued before the "
            "key was set can be proposed again by a later run; an edited one was changed by "
            "someone without the key",
            path=str(path),
        )
