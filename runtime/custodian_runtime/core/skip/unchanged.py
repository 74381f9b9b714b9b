"""Whether a run may skip on the hub's word alone: the domain's revision, and no local work.

A v1.2 hub names each domain's state by a `revision` that moves on every change. When the last
completed run saw revision n, and nothing waits on this side (no open or `unknown` write, no
killed run to close, no decision waiting, no approval expiring, no change to the canon, the policy
or the grants), the run asks the hub for the domain only if it moved past n; a 304 is the whole
run. Past the skip window the run looks anyway: time alone makes tasks stale.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from custodian_runtime.core.digest import digest
from custodian_runtime.core.journal.observation import CompletedObservation

if TYPE_CHECKING:  # a skip decides without loading the typed records (run/_quick.py)
    from custodian_runtime.core.approvals.items import ApprovalItem
    from custodian_runtime.core.journal.kinds import Observed


@dataclass(frozen=True)
class LocalWork:
    """What waits on this side of the hub; any of it makes the run read the domain."""

    open_writes: int = 0  # authorized writes with no closing record (open or `unknown`)
    interrupted: int = 0  # killed runs the next run closes
    decisions: int = 0  # a person's decisions waiting to be carried out
    expiries: int = 0  # pending approvals that expired since the last completed run
    inputs_changed: bool = False  # the canon, the policy or the grants differ

    def reason(self) -> str | None:
        """Why the run must read the domain; None when nothing waits."""
        said = [
            f"{count} {what}"
            for count, what in (
                (self.open_writes, "open write(s)"),
                (self.interrupted, "interrupted run(s) to close"),
                (self.decisions, "decision(s) waiting"),
                (self.expiries, "approval(s) expired"),
            )
            if count
        ]
        if self.inputs_changed:
            said.append("the canon, the policy, or a person's modes or grants changed")
        return ", ".join(said) or None


def inputs_digest(
    canon: Mapping[str, str], policy: Mapping[str, Any], grants: Any = None, hub: str | None = None
) -> str:
    """One digest of what a run decides with besides the domain: canon files (relative path ->
    sha256), the limits' numbers, a person's modes and grants (None: none set) and the hub
    as configured (a revision means something only on the hub that named it)."""
    return digest({"canon": dict(canon), "policy": dict(policy), "grants": grants, "hub": hub})


def expiries_due(items: Iterable[ApprovalItem], since: datetime, now: datetime) -> int:
    """Pending items whose expiry fell after `since` (the last completed run) and by `now`."""
    return sum(1 for i in items if i.status == "pending" and since < i.expires_at <= now)


def why_read(
    last: CompletedObservation | None, now: datetime, window: timedelta, work: LocalWork
) -> str | None:
    """Why the run reads the domain whole; None when it may ask with the last revision."""
    if last is None:
        return "no completed run before this one"
    if last.revision is None:
        return "the last completed run saw no revision (a v1.1 hub, or an older journal)"
    if last.inputs_digest is None:
        return "the last completed run named no inputs digest (an older journal)"
    if now - last.finished_at >= window:
        return "the last completed run is older than the skip window"
    return work.reason()


def revision_to_ask(
    last: CompletedObservation | None,
    now: datetime,
    window: timedelta,
    work: LocalWork,
    *,
    force: bool,
) -> int | None:
    """The revision to ask the hub with (`If-None-Match`), or None when the run reads all.

    None unless the last completed run saw a revision (a v1.1 hub names none) and journaled
    its inputs, finished less than `window` ago, and nothing waits here (`why_read`).
    """
    if force or last is None or why_read(last, now, window, work) is not None:
        return None
    return last.revision


def not_modified_reason(last: CompletedObservation, revision: int) -> str:
    """What a run skipped on a 304 says: the revision, and the run it is unchanged since."""
    since = f"run {last.run_id}" if last.run_id else "the last completed run"
    return (
        f"unchanged since {since} (domain revision {revision}, finished at "
        f"{last.finished_at.isoformat()}); no model call (use --force to run anyway)"
    )


def not_modified_record(last: CompletedObservation, revision: int) -> Observed:
    """The `observed` record of a run skipped on a 304: the state the last completed run saw,
    named by its digest and snapshot, at the revision the hub confirmed; no summary was read."""
    from custodian_runtime.core.journal.kinds import Observed

    return Observed(**not_modified_data(last, revision))


def not_modified_data(last: CompletedObservation, revision: int) -> dict[str, Any]:
    """The data of that record as journaled (`kinds.encode` of `not_modified_record`)."""
    return {
        "state_digest": last.state_digest,
        "snapshot": last.snapshot,
        "generated_at": last.generated_at,
        "overview": None,
        "revision": revision,
        "not_modified": True,
        "inputs_digest": last.inputs_digest,
    }
