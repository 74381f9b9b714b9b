"""One run: observe -> orient -> decide -> act -> record. This module wires; the core decides."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import socket
import sys
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any, TextIO

import httpx

from custodian.clock import new_run_id, utc_now
from custodian.core import display, outcomes
from custodian.core import journal as J
from custodian.core.authority import Ruling
from custodian.core.continuity import note_data
from custodian.core.contract import DomainSummary
from custodian.core.digest import digest, domain_state_digest
from custodian.core.outcomes import ItemOutcome
from custodian.core.plan import Plan
from custodian.core.redact import redact
from custodian.core.run_rules import EXIT_OK, ending, skip_reason
from custodian.crash import EXIT_INTERNAL
from custodian.errors import (
    CustodianError,
    HubError,
    Interrupted,
    ModelError,
    PlanRejected,
)
from custodian.llm.base import Model
from custodian.llm.registry import build_model
from custodian.memory.approvals import ApprovalStore
from custodian.memory.journal_store import JournalStore, JournalWriter, Opened
from custodian.memory.lock import RunLock
from custodian.memory.run_journal import DiskJournal, Journal, MemoryJournal
from custodian.memory.snapshots import SnapshotStore
from custodian.phase_log import PhaseLog, retry_reporter
from custodian.run import act, record
from custodian.run.decide import Scope, authorize_step, decide_step, orient_step, plan_step
from custodian.run.evidence import read_evidence
from custodian.run.observe import Observation, check_known, observe, settled_record
from custodian.run.origin import bound
from custodian.run.preflight import check_run
from custodian.run.result import RunResult
from custodian.settings import Settings
from custodian.statehub.client import StateHubClient
from custodian.statehub.connect import embedded_db, hub_label, open_hub
from custodian.stopping import StopFlag, stop_on_signals

Clock = Callable[[], datetime]


def run(
    settings: Settings,
    *,
    clock: Clock = utc_now,
    transport: httpx.BaseTransport | None = None,
    model_transport: Any = None,
    stderr: TextIO | None = None,
) -> RunResult:
    """Run one pass for `settings.domain` and return its result (never raises CustodianError)."""
    assert settings.domain is not None and settings.hub is not None
    result = RunResult(
        run_id=new_run_id(clock()),
        domain=settings.domain,
        dry_run=settings.dry_run,
        model_spec=settings.model.spec,
    )
    log = PhaseLog(
        stderr or sys.stderr,
        fmt=settings.log_format,
        run_id=result.run_id,
        domain=settings.domain,
        clock=clock,
        monotonic=time.monotonic,
    )
    stop = StopFlag()
    try:
        check_run(settings)  # before the hub is read and before anything is written
        on_retry = retry_reporter(log, "hub")
        hub = settings.hub
        with (
            stop_on_signals(stop),
            open_hub(
                hub, settings.embedded_dir, clock, transport=transport, stop=stop, on_retry=on_retry
            ) as client,
        ):
            if hub.embedded:
                log.line("hub", "embedded", db=str(embedded_db(settings.embedded_dir)))
            else:
                log.line("hub", "configured", url=redact(hub.url), source=hub.source)
            result.hub = hub_label(hub)  # what is journaled, noted and printed
            _Run(settings, result, log, clock, stop, client, model_transport).go()
    except CustodianError as exc:
        if result.status == "started":
            result.status = "interrupted" if isinstance(exc, Interrupted) else "failed"
        result.exit_code = exc.exit_code
        result.message = exc.message
    return result


class _Run:
    """The steps of one run, sharing the journal writer, the client and the result."""

    def __init__(
        self,
        settings: Settings,
        result: RunResult,
        log: PhaseLog,
        clock: Clock,
        stop: StopFlag,
        client: StateHubClient,
        model_transport: Any,
    ) -> None:
        assert settings.domain is not None and settings.hub is not None
        self.s = settings
        self.domain = settings.domain
        self.result = result
        self.log = log
        self.clock = clock
        self.stop = stop
        self.started_at = clock()
        self.client = client
        self.model_transport = model_transport
        self.scope = Scope(
            settings=settings,
            domain=settings.domain,
            result=result,
            log=log,
            clock=clock,
            journal=MemoryJournal(result.run_id, settings.domain, clock),
            approvals=ApprovalStore(settings.memory_dir, settings.seal_key),
        )

    @property
    def journal(self) -> Journal:
        """Where this run's records go (memory until the lock is held, then the disk)."""
        return self.scope.journal

    def go(self) -> None:
        """Validate the model first (a config error costs nothing), then run under the lock."""
        config = dataclasses.replace(
            self.s.model, stop=self.stop, on_retry=retry_reporter(self.log, "model")
        )
        model = build_model(config, transport=self.model_transport)
        self.result.model = model.model_name
        self.log.line(
            "model",
            "selected",
            spec=self.s.model.spec,
            model=model.model_name,
            source=self.s.model_source,
        )
        try:
            if self.s.dry_run:
                # Read-only: no lock, no repair of a torn tail, nothing appended.
                opened = self._open(
                    JournalStore(self.s.memory_dir, seal_key=self.s.seal_key), repair=False
                )
                self._steps(model, opened)
                return
            if not JournalStore(self.s.memory_dir).path(self.domain).exists():
                # A first run: a mistyped domain must leave no journal behind.
                check_known(self.client, self.domain)
            with RunLock(self.s.memory_dir, self.domain, run_id=self.result.run_id) as lock:
                if lock.left is not None:
                    self.log.line("lock", "taken over", detail=str(lock.left))
                store = JournalStore(self.s.memory_dir, seal_key=self.s.seal_key)
                opened = self._open(store, repair=True)
                self.scope.approvals.all()  # with a seal key: refuses an unsealed item
                writer = store.writer(self.domain, self.result.run_id, self.clock, opened)
                self.scope.journal = DiskJournal(writer)
                try:
                    self._steps(model, opened)
                finally:
                    self._commit(store, writer)
        finally:
            model.close()

    def _open(self, store: JournalStore, *, repair: bool) -> Opened:
        """The checkpoint and the tail after it; a full scan only when the checkpoint is off."""
        opened = store.open(self.domain, repair=repair)
        if opened.rebuilt is not None and opened.head is not None:
            self.log.line(
                "journal", "rebuilt", reason=opened.rebuilt, records=opened.head.seq, full_scan=True
            )
        if opened.torn is not None:
            self.log.line("journal", "torn_tail", detail=opened.torn)
        return opened

    def _commit(self, store: JournalStore, writer: JournalWriter) -> None:
        """Save the checkpoint; it is derived data, so a failure costs only a full scan later."""
        try:
            store.commit(writer)
        except OSError as exc:
            self.log.line("journal", "checkpoint_not_saved", error=str(exc))

    def _steps(self, model: Model, opened: Opened) -> None:
        history = opened.history
        self.journal.append("run_started", self._started_data(model))
        try:
            observation = self._observe()
            if not self.s.dry_run:
                observation = self._reconcile(history, observation)
                self.journal.close_interrupted(history)
            if self._unchanged(observation, history):
                return
            orientation = orient_step(self.scope, observation, history)
            completion = decide_step(self.scope, model, orientation)
            plan = plan_step(self.scope, completion)
            evidence, fetched = read_evidence(
                self.client, plan, observation.summary, history, opened.checkpoint.writes
            )
            rulings = authorize_step(
                self.scope, plan, observation, evidence, fetched, opened.checkpoint.writes
            )
            self.result.rulings = rulings
            self.result.contents = display.contents(rulings)
            if self.s.dry_run:
                self.stop.check("the dry run")
                self.result.outcomes = act.report_dry_run(rulings)
                self._finish("completed", EXIT_OK, "decisions shown, nothing sent or saved")
                return
            self.result.outcomes = self._act(rulings, observation)
            self._settle()
            self._record(plan, rulings)
        except CustodianError as exc:
            self._fail(exc)
            raise
        except Exception as exc:
            # A bug: the CLI reports where the traceback is; the journal still closes the run.
            self._finish("failed", EXIT_INTERNAL, f"internal error: {type(exc).__name__}")
            raise

    def _started_data(self, model: Model) -> dict[str, Any]:
        constitution = self.s.canon_dir / "constitution.md"
        return {
            "settings_digest": digest(self.s.digest_view()),
            "constitution_digest": digest(constitution.read_text("utf-8"))
            if constitution.is_file()
            else None,
            "model_spec": self.s.model.spec,
            "hub_url": self.result.hub,
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "dry_run": self.s.dry_run,
        }

    def _observe(self) -> Observation:
        with self.log.phase("observe") as info:
            observed = observe(self.client, self.domain)
            self.result.titles = display.titles(observed.summary)
            info.update(
                workstreams=len(observed.summary.workstreams), digest=observed.state_digest[:12]
            )
        self._keep_snapshot(observed.summary)
        self.journal.append("observed", observed.record())
        return observed

    def _keep_snapshot(self, summary: DomainSummary) -> str:
        """Store the observed summary once per distinct content (not in a dry run)."""
        if self.s.dry_run:
            return domain_state_digest(summary)
        return SnapshotStore(self.s.memory_dir).put_summary(summary)

    def _reconcile(self, history: list[J.Record], observation: Observation) -> Observation:
        """Settle what a killed run left open; observe again if that wrote to the hub."""
        ctx = act.Reconciling(
            self.result.run_id,
            observation.summary,
            self.journal,
            self.client,
            self.clock(),
            bound(self.s),
        )
        self.result.reconciled = act.reconcile(history, ctx, self.log, self.stop)
        wrote = any(r["outcome"] == "resent" or r.get("flag") for r in self.result.reconciled)
        return self._observe() if wrote else observation

    def _unchanged(self, observation: Observation, history: list[J.Record]) -> bool:
        reason = skip_reason(
            J.last_completed_observation(history),
            observation.state_digest,
            self.clock(),
            timedelta(hours=self.s.limits.skip_window_hours),
            force=self.s.force or self.s.dry_run,
        )
        if reason is None:
            return False
        self.log.line("decide", "skipped", reason="state unchanged since the last completed run")
        if self.result.reconciled:
            self._write_note("skipped", problem=record.reconcile_text(self.result.reconciled))
        self._finish("skipped", EXIT_OK, reason)
        return True

    def _act(
        self, rulings: tuple[Ruling, ...], observation: Observation
    ) -> tuple[ItemOutcome, ...]:
        """Execute, queue and deny; one outcome per plan item, in plan order."""
        with self.log.phase("act") as info:
            sent = act.execute(
                rulings,
                observation.summary,
                self.journal,
                self.client,
                self.result.run_id,
                self.stop,
                bound(self.s),
            )
            queued = act.enqueue(
                rulings,
                observation.summary,
                self.scope.approvals,
                self.journal,
                self.result.run_id,
                self.s,
                self.clock(),
            )
            done = outcomes.assemble(rulings, sent, queued, act.collect_denied(rulings))
            info.update(outcomes.counts(done))
        return done

    def _settle(self) -> None:
        """Observe again after writing, so the next run compares against the state we left.

        Without this, the run's own events would look like a change to the next run, and a
        quiet domain would never be skipped. Not after a stale write: the task changed under the
        run, and the next run must plan from the new state rather than skip it.
        """
        c = self.result.counts()
        if not c["executed"] or c["stale"] or self.stop:
            return
        try:
            self.journal.append(
                "observed", settled_record(self.client, self.domain, self._keep_snapshot)
            )
        except HubError as exc:
            self.log.line("settle", "failed", error=exc.message)

    def _record(self, plan: Plan, rulings: tuple[Ruling, ...]) -> None:
        c = self.result.counts()
        end = ending(
            stopped_by=self.stop.signal,
            executed=c["executed"],
            queued=c["queued"],
            denied=c["denied"],
            failed=c["failed"],
            stale=c["stale"],
        )
        self._write_note(
            end.status,
            prose=plan.prose,
            rulings=rulings,
            observations=plan.observations,
            problem=record.reconcile_text(self.result.reconciled),
        )
        self._finish(end.status, end.exit_code, end.message)

    def _fail(self, exc: CustodianError) -> None:
        status = "rejected" if isinstance(exc, (PlanRejected, ModelError)) else "failed"
        status = "interrupted" if isinstance(exc, Interrupted) else status
        if self.s.dry_run:
            return
        if isinstance(exc, (HubError, ModelError, PlanRejected, Interrupted)):
            self._write_note(status, problem=exc.message, raw=self.scope.raw_response)
        self._finish(status, exc.exit_code, exc.message)

    def _write_note(self, status: str, **parts: Any) -> None:
        path = record.write_session_note(
            self.s, self.result, self.started_at, self.clock(), status, **parts
        )
        data = note_data(
            path.name,
            record.file_sha256(path),
            status,
            str(parts.get("prose") or ""),
            parts.get("problem"),
        )
        self.journal.append("note_written", data)
        self.result.note_path = str(path)

    def _finish(self, status: str, exit_code: int, message: str) -> None:
        self.result.status = status
        self.result.exit_code = exit_code
        self.result.message = message
        counts = self.result.counts()
        with contextlib.suppress(CustodianError):
            self.journal.append(
                "finished", {"status": status, "exit_code": exit_code, "counts": counts}
            )
        self.log.line("finish", status, exit_code=exit_code, **counts)
