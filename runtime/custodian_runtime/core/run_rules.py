"""The run's own decisions that are not about plan items: whether to skip, how a run ended."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from custodian_runtime.core.journal.observation import CompletedObservation
from custodian_runtime.errors import CustodianError, HubError, Interrupted, ModelError, PlanRejected

EXIT_OK, EXIT_INTERNAL, EXIT_WRITES = 0, 1, 5
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
    unknown: int = 0,
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
    if failed or unknown:
        said = [f"{failed} authorized write(s) failed"] if failed else []
        if unknown:
            said.append(f"{unknown} got no answer (unknown; the next run settles them)")
        return Ending("partial", EXIT_WRITES, ", ".join(said))
    message = f"{executed} executed, {queued} queued, {denied} denied"
    if stale:
        message += f", {stale} stale (the task changed under the run; nothing written for it)"
    return Ending("completed", EXIT_OK, message)


@dataclass(frozen=True)
class Failure:
    """How a run that raised ends, and what it leaves behind.

    `journaled`: the run's `finished` record is written (its journal was open, not a dry run);
    `noted`: a session note tells a person what went wrong.
    """

    ending: Ending
    journaled: bool
    noted: bool
    shows_answer: bool = False  # the note quotes the model's answer that held no usable plan


def failure(exc: CustodianError, *, in_steps: bool, dry_run: bool) -> Failure:
    """How a run ends on `exc`: interrupted, rejected (the model gave no usable plan) or failed.

    `in_steps`: the run had begun its steps (the lock was held and its journal open). Before
    that, and in a dry run, nothing is journaled or noted, and a bad answer is plainly a failure.
    """
    kept = in_steps and not dry_run
    if isinstance(exc, Interrupted):
        status = "interrupted"
    elif kept and isinstance(exc, (ModelError, PlanRejected)):
        status = "rejected"
    else:
        status = "failed"
    # A config or journal error says nothing a note would add; the hub's, the model's and a
    # signal's are what a person reading the notes needs to see.
    noted = kept and isinstance(exc, (HubError, ModelError, PlanRejected, Interrupted))
    return Failure(
        Ending(status, exc.exit_code, exc.message),
        journaled=kept,
        noted=noted,
        shows_answer=noted and isinstance(exc, PlanRejected),
    )


def signalled(end: Ending, signum: int | None) -> Ending:
    """A run a signal reached ends interrupted (128 + the signal), whatever step it was in."""
    if signum is None or end.exit_code == EXIT_SIGNAL_BASE + signum:
        return end
    return Ending(
        "interrupted",
        EXIT_SIGNAL_BASE + signum,
        f"stopped by signal {signum} ({end.status}: {end.message})",
    )


def internal_error(kind: str) -> Ending:
    """How a run ends on a bug (an exception that is not a CustodianError): failed, exit 1."""
    return Ending("failed", EXIT_INTERNAL, f"internal error: {kind}")


def observes_after_act(counts: dict[str, int], *, stopped: bool) -> bool:
    """Whether the run observes the domain again after acting.

    Only after a write went out, so the next run compares against the state this run left
    (its own events would otherwise look like a change, and a quiet domain would never be
    skipped). Not after a stale write: the task changed under the run, and the next run must
    plan from the new state rather than skip it. Not after a signal.
    """
    return bool(counts.get("executed")) and not counts.get("stale") and not stopped
