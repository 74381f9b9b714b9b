"""The writes Custodian made, as the checkpoint keeps them for the rules that span runs.

Each is a write the hub took (a `receipt`) that the authority allowed on its own (`authorized`
by policy) or that a person approved (`by` is `person:<name>`). The checkpoint keeps those of the
last `RETAIN` days, so the rolling budgets (policy writes only) and the deference to a person
(core/authority/budgets.py) are counted without reading the journal again.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import timedelta
from typing import Any

from pydantic import BaseModel, ConfigDict

from custodian_runtime.core.contract import Task
from custodian_runtime.core.journal.kinds import Authorized, Receipt, of_kind
from custodian_runtime.core.journal.records import Record, parse_at

# The longest window a rule may look back: CUSTODIAN_DEFER_DAYS and the budget window stay within.
RETAIN = timedelta(days=31)


class OwnWrite(BaseModel):
    """One write Custodian made on its own: when, what, on which task, and the task after it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    at: str
    run_id: str
    index: Any
    operation: str
    task_id: str | None = None
    status: str | None = None
    hub_id: str | None = None
    # For a status write: the task as the hub answered it ({status, updated_at, version}).
    after: dict[str, Any] | None = None
    # Who allowed it: "policy" (Custodian on its own), "person:<name>" (an approved item) or
    # "grant:<id>" (a person's grant).
    by: str = "policy"  # the journal's word for the sanctioned authority, kept as written
    # For a status write: the status the task had when it was authorized (None: not kept), so
    # that a person setting it back is seen as a reversal (core/standing/narrowed.py).
    before: str | None = None

    @property
    def by_person(self) -> bool:
        """Whether a person approved this write (it is a person's decision, not Custodian's)."""
        return self.by.startswith("person:")


def writes_in(earlier: Sequence[Record], new: Sequence[Record]) -> list[OwnWrite]:
    """The own writes that a receipt among `new` closed; `earlier` may hold their authorization."""
    authorized = {
        (r.run_id, grant.index): (r, grant)
        for r, grant in of_kind((*earlier, *new), Authorized)
        if _counted(grant)
    }
    found: list[OwnWrite] = []
    for r, receipt in of_kind(new, Receipt):
        granted = authorized.get((receipt.reconciles or r.run_id, receipt.index))
        if granted is None:
            continue
        first, grant = granted
        params = grant.params or {}
        task, status = params.get("task_id"), params.get("status")
        found.append(
            OwnWrite(
                at=r.at,
                run_id=first.run_id,
                index=grant.index,
                operation=str(grant.operation),
                task_id=task if isinstance(task, str) else None,
                status=status if isinstance(status, str) else None,
                hub_id=receipt.hub_id,
                after=receipt.task_after,
                by=str(grant.by),
                before=_before(grant),
            )
        )
    return found


def _before(grant: Authorized) -> str | None:
    status = (grant.planned_on or {}).get("status")
    return status if isinstance(status, str) else None


def _counted(grant: Authorized) -> bool:
    by = grant.by
    return by == "policy" or (isinstance(by, str) and by.startswith(("person:", "grant:")))


def retained(writes: Iterable[OwnWrite], newest_at: str | None) -> tuple[OwnWrite, ...]:
    """The writes of the last `RETAIN` before `newest_at`, once each, oldest first."""
    unique = {(w.run_id, str(w.index)): w for w in writes}
    kept = sorted(unique.values(), key=lambda w: w.at)
    if newest_at is None:
        return tuple(kept)
    cutoff = parse_at(newest_at) - RETAIN
    return tuple(w for w in kept if parse_at(w.at) >= cutoff)


def moved_since(last: OwnWrite, task: Task) -> bool:
    """Whether the task now differs from what Custodian's write left (status, version or time)."""
    after = last.after or {}
    if after.get("status", last.status) != task.status:
        return True
    if after.get("version") is not None and task.version is not None:
        return bool(after["version"] != task.version)
    if after.get("updated_at") is not None:
        return task.updated_at is None or parse_at(str(after["updated_at"])) != task.updated_at
    return False
