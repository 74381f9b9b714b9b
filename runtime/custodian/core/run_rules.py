"""The run's own decisions that are not about plan items: whether to skip, how a run ended."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from custodian.core.journal import CompletedObservation

EXIT_OK, EXIT_WRITES = 0, 5
EXIT_SIGNAL_BASE = 128  # a run stopped by signal N exits 128 + N: 130 for SIGINT, 143 for SIGTERM


def skip_reason(
    last: CompletedObservation | None,
    state_digest: str,
    now: datetime,
    window: timedelta,
    *,
    force: bool,
) -> str | None:
    """Why the model call can be skipped, or None when the run must go on.

    Skip only when the domain's state digest equals the one the last completed run left behind
    and that run finished less than `window` ago; `force` always runs.
    """
    if force or last is None:
        return None
    if last.state_digest != state_digest or now - last.finished_at >= window:
        return None
    return (
        "the domain's state is unchanged since the run that finished at "
        f"{last.finished_at.isoformat()}; no model call (use --force to run anyway)"
    )


@dataclass(frozen=True)
class Ending:
    """How a run that reached the act step ended: status, exit code and a one-line message."""

    status: str
    exit_code: int
    message: str


def ending(
    *,
    stopped_by: int | None,
    executed: int,
    queued: int,
    denied: int,
    failed: int,
    stale: int = 0,
) -> Ending:
    """The status of a run that acted: interrupted by a signal, partly failed, or completed.

    A stale write is not a failure: the hub refused nothing and nothing was written; the task
    changed under the run, and the next run plans from the new state.
    """
    if stopped_by is not None:
        return Ending(
            "interrupted",
            EXIT_SIGNAL_BASE + stopped_by,
            f"stopped by signal {stopped_by}; writes not yet sent were not sent",
        )
    if failed:
        return Ending("partial", EXIT_WRITES, f"{failed} authorized write(s) failed")
    message = f"{executed} executed, {queued} queued, {denied} denied"
    if stale:
        message += f", {stale} stale (the task changed under the run; nothing written for it)"
    return Ending("completed", EXIT_OK, message)
