"""One run: observe -> orient -> decide -> act -> record. This module wires; the core decides.

Each step takes the run's context and what earlier steps returned, and returns a value. What
the run has learned is one frozen `RunSoFar`, replaced (`dataclasses.replace`) as each step
returns; it becomes the `RunResult` once, however the run ends.
"""

from __future__ import annotations

import sys
import time
from dataclasses import replace
from typing import TextIO

import httpx

from custodian_runtime.clock import new_run_id, utc_now
from custodian_runtime.core.contract import StateSummary
from custodian_runtime.core.digest import digest
from custodian_runtime.core.journal.kinds import RunStarted
from custodian_runtime.core.journal.seal_key import UNSEALED
from custodian_runtime.core.run_rules import (
    failure,
    internal_error,
    signalled,
)
from custodian_runtime.core.skip.facts import skip_facts
from custodian_runtime.core.standing.record import standing_of
from custodian_runtime.errors import CustodianError
from custodian_runtime.journal.lock import RunLock
from custodian_runtime.journal.person.queue import ApprovalStore
from custodian_runtime.journal.run_journal import DiskJournal, MemoryJournal
from custodian_runtime.journal.skip_facts import save_facts
from custodian_runtime.journal.store import CheckpointFile, JournalStore, JournalWriter, Opened
from custodian_runtime.packaged import PACKAGED
from custodian_runtime.person.derived import heal_items
from custodian_runtime.process.phase_log import PhaseLog, retry_reporter
from custodian_runtime.process.stopping import StopFlag, stop_on_signals
from custodian_runtime.run._context import Channels, Clock, RunContext, build_context, open_client
from custodian_runtime.run._earlier import earlier_outcomes
from custodian_runtime.run._ending import ended, failed, finish, skipped
from custodian_runtime.run._metrics import push_after
from custodian_runtime.run._planner import Planner, build_planner
from custodian_runtime.run._result import RunResult, RunSoFar
from custodian_runtime.run._started import started_data
from custodian_runtime.run._unchanged import ask_unchanged
from custodian_runtime.settings import Settings
from custodian_runtime.writes import check_run

Transport = httpx.BaseTransport | None


def run(
    settings: Settings,
    *,
    clock: Clock = utc_now,
    transport: httpx.BaseTransport | None = None,
    model_transport: httpx.BaseTransport | None = None,
    stderr: TextIO | None = None,
    overview: StateSummary | None = None,
    stop: StopFlag | None = None,
    said: frozenset[tuple[str, str]] = frozenset(),
) -> RunResult:
    """Run one pass for `settings.domain` and return its result (never raises CustodianError).

    With a Pushgateway configured, a run that is not a dry run pushes its metrics at the end.
    `overview`: the hub's `/state/summary` already read (by `custodian watch`), not read again;
    `stop`: a stop flag the caller's signal handlers set (else the run's own, in the main thread);
    `said`: (phase, outcome) lines the caller said once for all its runs (process/phase_log.py).
    """
    assert settings.domain is not None and settings.hub is not None
    run_id = new_run_id(clock())
    so_far = RunSoFar(run_id, settings.domain, settings.dry_run, settings.model.spec)
    log = PhaseLog(
        stderr or sys.stderr,
        fmt=settings.log_format,
        run_id=run_id,
        domain=settings.domain,
        clock=clock,
        monotonic=time.monotonic,
        omit=said,
    )
    began = clock()
    try:
        opened = (transport, model_transport, overview, stop)
        result = _run(settings, so_far, log, clock, opened)
    except Exception:
        push_after(settings, so_far.ended("failed", 1, "a bug"), began, clock, log)
        raise
    push_after(settings, result, began, clock, log)
    return result


def _run(
    settings: Settings,
    so_far: RunSoFar,
    log: PhaseLog,
    clock: Clock,
    given: tuple[Transport, Transport, StateSummary | None, StopFlag | None],
) -> RunResult:
    """The pass itself; the caller pushes its metrics."""
    transport, model_transport, overview, stop = given
    stop = stop if stop is not None else StopFlag()
    try:
        check_run(settings)  # before the hub is read and before anything is written
        if settings.canon_source == PACKAGED:
            log.line("canon", "packaged", dir=str(settings.canon_dir), copy="custodian init DIR")
        with stop_on_signals(stop), open_client(settings, clock, log, stop, transport) as opened:
            client, hub = opened
            so_far, started_at = replace(so_far, hub=hub), clock()
            planner = _planner(settings, log, stop, model_transport)
            try:
                channels = Channels(clock, stop, log, client, planner, hub, started_at, overview)
                return _go(settings, replace(so_far, model=planner.model_name), channels)
            finally:
                planner.close()
    except CustodianError as exc:
        end = failure(exc, in_steps=False, dry_run=settings.dry_run).ending
        return ended(so_far, signalled(end, stop.signal))


def _planner(
    settings: Settings, log: PhaseLog, stop: StopFlag, transport: httpx.BaseTransport | None
) -> Planner:
    """The configured planner, validated before the lock is taken (a config error costs nothing)."""
    config = replace(settings.model, stop=stop, on_retry=retry_reporter(log, "model"))
    planner = build_planner(config, transport=transport)
    log.line(
        "model",
        "selected",
        spec=settings.model.spec,
        model=planner.model_name,
        source=settings.model_source,
    )
    return planner


def _go(settings: Settings, so_far: RunSoFar, channels: Channels) -> RunResult:
    """A dry run reads its journal and writes nothing; a run that writes has the domain's lock."""
    try:
        if not settings.dry_run:
            return _locked(settings, so_far, channels)
        # Read-only: no lock, no repair of a torn tail, nothing appended.
        store = JournalStore(settings.memory_dir, seal_key=settings.seal_key)
        opened = _open(store, so_far.domain, channels.log, repair=False)
        journal = MemoryJournal(so_far.run_id, so_far.domain, channels.clock)
        approvals = ApprovalStore(settings.memory_dir, settings.seal_key, write_index=False)
        ctx = build_context(settings, so_far.run_id, channels, journal, approvals)
        return _steps(ctx, so_far, opened, _started_data(settings, channels.hub))
    except CustodianError as exc:
        end = failure(exc, in_steps=False, dry_run=settings.dry_run).ending
        return ended(so_far, signalled(end, channels.stop.signal))


def _locked(settings: Settings, so_far: RunSoFar, channels: Channels) -> RunResult:
    """Take the lock, open the journal on disk, and run the steps with it."""
    domain, run_id = so_far.domain, so_far.run_id
    if not JournalStore(settings.memory_dir).path(domain).exists():
        # A first run: a mistyped domain must leave no journal behind.
        from custodian_runtime.run.observe import check_known

        overview = check_known(channels.client, domain, channels.overview)
        channels = replace(channels, overview=overview)  # observe does not read it again
    with RunLock(settings.memory_dir, domain, run_id=run_id) as lock:
        if lock.left is not None:
            channels.log.line("lock", "taken over", detail=str(lock.left))
        store = JournalStore(settings.memory_dir, seal_key=settings.seal_key)
        opened = _open(store, domain, channels.log, repair=True)
        approvals = ApprovalStore(settings.memory_dir, settings.seal_key)
        # An item file the run reads that disagrees with the journal is rewritten, and named:
        # the queue's view reads only the domain's items (its index), never the whole queue.
        now, ledger = channels.clock(), opened.checkpoint.ledger
        for healed in heal_items(approvals, approvals.view(domain, now).items, ledger, now):
            channels.log.line("approvals", "file_rewritten_from_journal", detail=healed.line())
        approvals.view(domain, channels.clock())  # with a seal key: refuses an unsealed item
        writer = store.writer(domain, run_id, channels.clock, opened)
        ctx = build_context(settings, run_id, channels, DiskJournal(writer), approvals)
        try:
            result = _steps(ctx, so_far, opened, _started_data(settings, channels.hub))
        finally:
            saved = _commit(store, writer, channels.log)
        _keep_facts(settings, saved, approvals, so_far.model, channels)
        return result


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


def _commit(store: JournalStore, writer: JournalWriter, log: PhaseLog) -> CheckpointFile | None:
    """Save the checkpoint; it is derived data, so a failure costs only a full scan later."""
    try:
        return store.commit(writer)
    except OSError as exc:
        log.line("journal", "checkpoint_not_saved", error=str(exc))
        return None


def _keep_facts(
    settings: Settings,
    saved: CheckpointFile | None,
    approvals: ApprovalStore,
    model: str | None,
    channels: Channels,
) -> None:
    """What the next skip decides with (core/skip/facts.py), derived at the checkpoint's head;
    derived data too: a failure costs the next skip the typed journal."""
    if saved is None or settings.domain is None:
        return
    head, at = saved.checkpoint.head, saved.position
    where = {"seq": head.seq, "hash": head.hash, "head_start": at.head_start, "offset": at.offset}
    try:
        items = approvals.view(settings.domain, channels.clock()).items
        facts = skip_facts(saved.checkpoint.records, items, digest(settings.digest_view()), model)
        save_facts(
            settings.memory_dir / "journal", settings.domain, facts, where, settings.seal_key
        )
    except (CustodianError, OSError) as exc:
        channels.log.line("journal", "skip_facts_not_saved", error=str(exc))


def _started_data(settings: Settings, hub: str) -> RunStarted:
    return RunStarted(**started_data(settings, hub))


def _steps(ctx: RunContext, so_far: RunSoFar, opened: Opened, started: RunStarted) -> RunResult:
    """The steps in order; `so_far` is replaced with what each returns, for any ending."""
    history = opened.history
    ledger = opened.checkpoint.ledger
    ctx = replace(
        ctx,
        standing=standing_of(history).fingerprint(),
        ledger=ledger,
        last_notice=opened.checkpoint.notice,
    )
    so_far = replace(so_far, earlier=earlier_outcomes(ctx, history))  # for the note
    ctx.journal.write(started)
    try:
        asked = ask_unchanged(ctx, history)
        if asked.skipped is not None:
            why = f"not modified (domain revision {asked.revision}), no local work"
            return skipped(ctx, so_far, asked.skipped, why)
        from custodian_runtime.run._full import read_and_decide  # the domain moved

        return read_and_decide(ctx, so_far, history, opened.checkpoint.writes, asked)
    except CustodianError as exc:
        return failed(ctx, so_far, exc)
    except Exception as exc:
        # A bug: the CLI reports where the traceback is; the journal still closes the run.
        finish(ctx, so_far, internal_error(type(exc).__name__))
        raise
