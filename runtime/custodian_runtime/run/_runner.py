"""One run: observe -> orient -> decide -> act -> record. This module wires; the core decides.

Each step takes the run's context and what earlier steps returned, and returns a value. What
the run has learned is one frozen `Known`, replaced (`dataclasses.replace`) as each step
returns; it becomes the `RunResult` once, however the run ends.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import time
from dataclasses import replace
from typing import TextIO

import httpx

from custodian_runtime.clock import new_run_id, utc_now
from custodian_runtime.core import display
from custodian_runtime.core.digest import digest
from custodian_runtime.core.journal_kinds import Finished, RunStarted
from custodian_runtime.core.journal_render import UNSEALED
from custodian_runtime.core.plan import Plan
from custodian_runtime.core.redact import redact
from custodian_runtime.core.run_rules import (
    EXIT_OK,
    Ending,
    ending,
    failure,
    internal_error,
    settles,
    signalled,
)
from custodian_runtime.core.standing import standing_of
from custodian_runtime.errors import CustodianError, ModelError
from custodian_runtime.llm.base import Model
from custodian_runtime.llm.registry import build_model
from custodian_runtime.memory.approvals import ApprovalStore
from custodian_runtime.memory.journal_store import JournalStore, JournalWriter, Opened
from custodian_runtime.memory.lock import RunLock
from custodian_runtime.memory.run_journal import DiskJournal, MemoryJournal
from custodian_runtime.packaged import PACKAGED
from custodian_runtime.phase_log import PhaseLog, retry_reporter
from custodian_runtime.run._context import Clock, RunContext, Talk, build_context, open_client
from custodian_runtime.run._metrics import push_after
from custodian_runtime.run._reconcile import settle_open_writes
from custodian_runtime.run._result import Known, RunResult
from custodian_runtime.run._unchanged import ask_unchanged, unchanged_state
from custodian_runtime.run.act import act, dry_run
from custodian_runtime.run.decide import ask, extract, rule, usage_dict
from custodian_runtime.run.observe import check_known, observe, observe_after_act
from custodian_runtime.run.orient import orient
from custodian_runtime.run.record import NoteParts, NoteWritten, reconcile_text, record
from custodian_runtime.settings import Settings
from custodian_runtime.stopping import StopFlag, stop_on_signals
from custodian_runtime.writes import check_run


def run(
    settings: Settings,
    *,
    clock: Clock = utc_now,
    transport: httpx.BaseTransport | None = None,
    model_transport: httpx.BaseTransport | None = None,
    stderr: TextIO | None = None,
) -> RunResult:
    """Run one pass for `settings.domain` and return its result (never raises CustodianError).

    With a Pushgateway configured, a run that is not a dry run pushes its metrics at the end.
    """
    assert settings.domain is not None and settings.hub is not None
    run_id = new_run_id(clock())
    known = Known(run_id, settings.domain, settings.dry_run, settings.model.spec)
    log = PhaseLog(
        stderr or sys.stderr,
        fmt=settings.log_format,
        run_id=run_id,
        domain=settings.domain,
        clock=clock,
        monotonic=time.monotonic,
    )
    began = clock()
    try:
        result = _run(settings, known, log, clock, transport, model_transport)
    except Exception:
        push_after(settings, known.ended("failed", 1, "a bug"), began, clock, log)
        raise
    push_after(settings, result, began, clock, log)
    return result


def _run(
    settings: Settings,
    known: Known,
    log: PhaseLog,
    clock: Clock,
    transport: httpx.BaseTransport | None,
    model_transport: httpx.BaseTransport | None,
) -> RunResult:
    """The pass itself; the caller pushes its metrics."""
    stop = StopFlag()
    try:
        check_run(settings)  # before the hub is read and before anything is written
        if settings.canon_source == PACKAGED:
            log.line("canon", "packaged", dir=str(settings.canon_dir), copy="custodian init DIR")
        with stop_on_signals(stop), open_client(settings, clock, log, stop, transport) as opened:
            client, hub = opened
            known, started_at = replace(known, hub=hub), clock()
            model = _model(settings, log, stop, model_transport)
            try:
                talk = Talk(clock, stop, log, client, model, hub, started_at)
                return _go(settings, replace(known, model=model.model_name), talk)
            finally:
                model.close()
    except CustodianError as exc:
        end = failure(exc, in_steps=False, dry_run=settings.dry_run).ending
        return _ended(known, signalled(end, stop.signal))


def _model(
    settings: Settings, log: PhaseLog, stop: StopFlag, transport: httpx.BaseTransport | None
) -> Model:
    """The configured model, validated before the lock is taken (a config error costs nothing)."""
    config = replace(settings.model, stop=stop, on_retry=retry_reporter(log, "model"))
    model = build_model(config, transport=transport)
    log.line(
        "model",
        "selected",
        spec=settings.model.spec,
        model=model.model_name,
        source=settings.model_source,
    )
    return model


def _go(settings: Settings, known: Known, talk: Talk) -> RunResult:
    """A dry run reads its journal and writes nothing; a run that writes holds the domain's lock."""
    try:
        if not settings.dry_run:
            return _locked(settings, known, talk)
        # Read-only: no lock, no repair of a torn tail, nothing appended.
        store = JournalStore(settings.memory_dir, seal_key=settings.seal_key)
        opened = _open(store, known.domain, talk.log, repair=False)
        journal = MemoryJournal(known.run_id, known.domain, talk.clock)
        approvals = ApprovalStore(settings.memory_dir, settings.seal_key, write_index=False)
        ctx = build_context(settings, known.run_id, talk, journal, approvals)
        return _steps(ctx, known, opened, _started_data(settings, talk.hub))
    except CustodianError as exc:
        end = failure(exc, in_steps=False, dry_run=settings.dry_run).ending
        return _ended(known, signalled(end, talk.stop.signal))


def _locked(settings: Settings, known: Known, talk: Talk) -> RunResult:
    """Take the lock, open the journal on disk, and run the steps with it."""
    domain, run_id = known.domain, known.run_id
    if not JournalStore(settings.memory_dir).path(domain).exists():
        # A first run: a mistyped domain must leave no journal behind.
        check_known(talk.client, domain)
    with RunLock(settings.memory_dir, domain, run_id=run_id) as lock:
        if lock.left is not None:
            talk.log.line("lock", "taken over", detail=str(lock.left))
        store = JournalStore(settings.memory_dir, seal_key=settings.seal_key)
        opened = _open(store, domain, talk.log, repair=True)
        approvals = ApprovalStore(settings.memory_dir, settings.seal_key)
        approvals.view(domain, talk.clock())  # with a seal key: refuses an unsealed item
        writer = store.writer(domain, run_id, talk.clock, opened)
        ctx = build_context(settings, run_id, talk, DiskJournal(writer), approvals)
        try:
            return _steps(ctx, known, opened, _started_data(settings, talk.hub))
        finally:
            _commit(store, writer, talk.log)


def _open(store: JournalStore, domain: str, log: PhaseLog, *, repair: bool) -> Opened:
    """The checkpoint and the tail after it; a full scan only when the checkpoint is off."""
    if store.seal_key is None:
        log.line("seals", "unsealed", detail=UNSEALED)
    opened = store.open(domain, repair=repair)
    if opened.rebuilt is not None and opened.head is not None:
        log.line(
            "journal", "rebuilt", reason=opened.rebuilt, records=opened.head.seq, full_scan=True
        )
    if opened.torn is not None:
        log.line("journal", "torn_tail", detail=opened.torn)
    return opened


def _commit(store: JournalStore, writer: JournalWriter, log: PhaseLog) -> None:
    """Save the checkpoint; it is derived data, so a failure costs only a full scan later."""
    try:
        store.commit(writer)
    except OSError as exc:
        log.line("journal", "checkpoint_not_saved", error=str(exc))


def _started_data(settings: Settings, hub: str) -> RunStarted:
    constitution = settings.canon_dir / "constitution.md"
    return RunStarted(
        settings_digest=digest(settings.digest_view()),
        constitution_digest=digest(constitution.read_text("utf-8"))
        if constitution.is_file()
        else None,
        model_spec=settings.model.spec,
        hub_url=hub,
        pid=os.getpid(),
        host=socket.gethostname(),
        dry_run=settings.dry_run,
    )


def _steps(ctx: RunContext, known: Known, opened: Opened, started: RunStarted) -> RunResult:
    """The steps in order; `known` is replaced with what each returns, for any ending."""
    history = opened.history
    ctx.journal.write(started)
    try:
        asked = ask_unchanged(ctx, history)
        if asked.skipped is not None:
            return _skipped(ctx, known, asked.skipped, "domain revision unchanged, no local work")
        seen = observe(ctx, asked.summary)
        known = replace(known, titles=display.titles(seen.summary), seen=seen.summary)
        if not ctx.dry_run:
            settled = settle_open_writes(ctx, history, seen, opened.checkpoint.writes)
            seen = settled.observation
            known = replace(known, reconciled=settled.reports, titles=display.titles(seen.summary))
            known = replace(known, seen=seen.summary)
            ctx.journal.close_interrupted(history)
        skip = unchanged_state(ctx, seen, history)
        if skip is not None:
            return _skipped(ctx, known, skip, "state unchanged since the last completed run")
        orientation = orient(ctx, seen, history)
        known = replace(known, omitted=orientation.omitted)
        completion = ask(ctx, orientation)
        known = replace(known, model=completion.model, usage=usage_dict(completion))
        known = replace(known, answer=completion.text)
        plan = extract(ctx, completion)
        known = replace(known, observations=plan.observations)
        rulings = rule(ctx, plan, seen, history, opened.checkpoint.writes)
        known = replace(known, rulings=rulings, contents=display.contents(rulings))
        known = replace(known, modes=standing_of(history).modes.as_record())
        if ctx.dry_run:
            ctx.stop.check("the dry run")
            shown = Ending("completed", EXIT_OK, "decisions shown, nothing sent or saved")
            return _finish(ctx, replace(known, outcomes=dry_run(rulings)), shown)
        return _recorded(ctx, replace(known, outcomes=act(ctx, rulings, seen)), plan)
    except CustodianError as exc:
        return _failed(ctx, known, exc)
    except Exception as exc:
        # A bug: the CLI reports where the traceback is; the journal still closes the run.
        _finish(ctx, known, internal_error(type(exc).__name__))
        raise


def _skipped(ctx: RunContext, known: Known, reason: str, why: str) -> RunResult:
    ctx.log.line("decide", "skipped", reason=why)
    note = None
    if known.reconciled:
        note = record(ctx, known, "skipped", NoteParts(problem=reconcile_text(known.reconciled)))
    return _finish(ctx, known, Ending("skipped", EXIT_OK, reason), note)


def _recorded(ctx: RunContext, known: Known, plan: Plan) -> RunResult:
    """After acting: observe what the writes left, write the note, and finish."""
    c = known.counts()
    if settles(c, stopped=bool(ctx.stop)):
        observe_after_act(ctx)
    end = ending(
        stopped_by=ctx.stop.signal,
        executed=c["executed"],
        queued=c["queued"],
        denied=c["denied"],
        failed=c["failed"],
        stale=c["stale"],
        unknown=c.get("unknown", 0),
    )
    parts = NoteParts(
        prose=plan.prose,
        rulings=known.rulings,
        observations=plan.observations,
        problem=reconcile_text(known.reconciled),
    )
    return _finish(ctx, known, end, record(ctx, known, end.status, parts))


def _failed(ctx: RunContext, known: Known, exc: CustodianError) -> RunResult:
    """A run that raised: noted and journaled as the core rules (`run_rules.failure`)."""
    how = failure(exc, in_steps=True, dry_run=ctx.dry_run)
    if isinstance(exc, ModelError) and exc.stderr_tail:
        known = replace(known, model_stderr=redact(exc.stderr_tail))
    if not how.journaled:
        return _ended(known, how.ending)
    note = None
    if how.noted:
        raw = known.answer if how.shows_answer else None
        note = record(ctx, known, how.ending.status, NoteParts(problem=exc.message, raw=raw))
    return _finish(ctx, known, how.ending, note)


def _finish(
    ctx: RunContext, known: Known, end: Ending, note: NoteWritten | None = None
) -> RunResult:
    """Journal and log how the run ended; the result, assembled once.

    A signal that came at any step, even after the last hub read, makes it interrupted.
    """
    end = signalled(end, ctx.stop.signal)
    counts = known.counts()
    with contextlib.suppress(CustodianError):
        # The model and its usage are for the metrics (core/metrics.py, `custodian status`).
        ended = Finished(status=end.status, exit_code=end.exit_code, counts=counts,
                         model=known.model, usage=dict(known.usage))  # fmt: skip
        ctx.journal.write(ended)
    ctx.log.line("finish", end.status, exit_code=end.exit_code, **counts)
    return _ended(known, end, note)


def _ended(known: Known, end: Ending, note: NoteWritten | None = None) -> RunResult:
    return known.ended(end.status, end.exit_code, end.message, str(note.path) if note else None)
