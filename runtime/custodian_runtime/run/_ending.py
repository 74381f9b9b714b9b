"""How a run ends, journaled and said: one `finished` record, one line, one result."""

from __future__ import annotations

import contextlib
from dataclasses import replace
from typing import TYPE_CHECKING

from custodian_runtime.core.journal.kinds import Finished
from custodian_runtime.core.redact import redact
from custodian_runtime.core.run_rules import EXIT_OK, Ending, failure, signalled
from custodian_runtime.errors import CustodianError, ModelError
from custodian_runtime.run._context import RunContext
from custodian_runtime.run._notice import tell_waiting
from custodian_runtime.run._result import RunResult, RunSoFar

if TYPE_CHECKING:
    from custodian_runtime.run.record import NoteWritten


def skipped(ctx: RunContext, so_far: RunSoFar, reason: str, why: str) -> RunResult:
    """A run with nothing to do: one line (its finish) says so and why."""
    note = None
    if so_far.reconciled or so_far.shadow_matched:
        from custodian_runtime.run.record import NoteParts, reconcile_text, record

        note = record(ctx, so_far, "skipped", NoteParts(problem=reconcile_text(so_far.reconciled)))
    return finish(ctx, so_far, Ending("skipped", EXIT_OK, reason), note, why)


def failed(ctx: RunContext, so_far: RunSoFar, exc: CustodianError) -> RunResult:
    """A run that raised: noted and journaled as the core rules (`run_rules.failure`)."""
    how = failure(exc, in_steps=True, dry_run=ctx.dry_run)
    if isinstance(exc, ModelError) and exc.stderr_tail:
        so_far = replace(so_far, model_stderr=redact(exc.stderr_tail))
    if not how.journaled:
        return ended(so_far, how.ending)
    note = None
    if how.noted:
        from custodian_runtime.run.record import NoteParts, record

        raw = so_far.answer if how.shows_answer else None
        note = record(ctx, so_far, how.ending.status, NoteParts(problem=exc.message, raw=raw))
    return finish(ctx, so_far, how.ending, note)


def finish(
    ctx: RunContext,
    so_far: RunSoFar,
    end: Ending,
    note: NoteWritten | None = None,
    why: str | None = None,
) -> RunResult:
    """Journal and log how the run ended; the result, assembled once.

    A signal that came at any step, even after the last hub read, makes it interrupted. `why`:
    a skip's reason, said in the finish line in place of its (zero) counts.
    """
    end = signalled(end, ctx.stop.signal)
    counts = so_far.counts()
    tell_waiting(ctx)
    with contextlib.suppress(CustodianError):
        # The model and its usage are for the metrics (core/metrics.py, `custodian status`).
        record = Finished(status=end.status, exit_code=end.exit_code, counts=counts,
                          model=so_far.model, usage=dict(so_far.usage))  # fmt: skip
        ctx.journal.write(record)
    if why is not None:  # a skip, or a skip a signal turned into an interrupted run
        reason = why if end.status == "skipped" else f"skipped ({why}), then a signal"
        ctx.log.line("finish", end.status, exit_code=end.exit_code, reason=reason)
    else:
        ctx.log.line("finish", end.status, exit_code=end.exit_code, **counts)
    return ended(so_far, end, note)


def ended(so_far: RunSoFar, end: Ending, note: NoteWritten | None = None) -> RunResult:
    """The result, assembled once, of a run that ended as `end`."""
    return so_far.ended(end.status, end.exit_code, end.message, str(note.path) if note else None)
