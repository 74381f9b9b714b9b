"""One run: observe -> orient -> decide -> act -> record. This module wires; the core decides."""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from types import FrameType
from typing import Any, TextIO

from custodian import act, record
from custodian.core import journal as J
from custodian.core.approvals import pending_for, recently_rejected
from custodian.core.authority import Ruling, authorize
from custodian.core.contract import DomainSummary, StateSummary
from custodian.core.digest import digest, domain_state_digest, workstream_digests
from custodian.core.plan import Plan, extract_plan
from custodian.errors import (
    ConfigError,
    CustodianError,
    HubError,
    HubRequestError,
    JournalError,
    ModelError,
    PlanRejected,
)
from custodian.llm.base import Completion, Model
from custodian.llm.registry import build_model
from custodian.memory.approvals import ApprovalStore
from custodian.memory.journal_store import JournalStore
from custodian.memory.lock import RunLock
from custodian.orient import Orientation, orient
from custodian.runlog import PhaseLog, RunResult
from custodian.settings import Settings
from custodian.statehub.client import StateHubClient

Clock = Callable[[], datetime]

EXIT_OK, EXIT_HUB, EXIT_MODEL, EXIT_WRITES, EXIT_INTERRUPTED = 0, 3, 4, 5, 143


def utc_now() -> datetime:
    """The wall clock, in UTC."""
    from datetime import UTC

    return datetime.now(UTC)


def new_run_id(now: datetime) -> str:
    """A sortable, unique run id: `r20261130T081500Z-3fa9c2`."""
    return f"r{now.strftime('%Y%m%dT%H%M%SZ')}-{secrets.token_hex(3)}"


class StopFlag:
    """Set by SIGTERM/SIGINT: finish the write in flight, start no other."""

    def __init__(self) -> None:
        self.signal: int | None = None

    def __bool__(self) -> bool:
        return self.signal is not None

    def handler(self, signum: int, frame: FrameType | None) -> None:
        """Record the signal; the act loop checks the flag between writes."""
        self.signal = signum


@contextmanager
def _signals(stop: StopFlag) -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.signal(s, stop.handler) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


@dataclass
class Observation:
    """What the hub showed this run."""

    overview: StateSummary
    summary: DomainSummary
    state_digest: str


def run(
    settings: Settings,
    *,
    clock: Clock = utc_now,
    transport: Any = None,
    model_transport: Any = None,
    stderr: TextIO | None = None,
) -> RunResult:
    """Run one pass for `settings.domain` and return its result (never raises CustodianError)."""
    assert settings.domain is not None and settings.hub is not None
    now = clock()
    result = RunResult(
        run_id=new_run_id(now),
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
        with _signals(stop), _hub_url(settings, clock, log) as hub_url:
            result.hub = hub_url
            _Run(settings, result, log, clock, stop, hub_url, transport, model_transport).go()
    except CustodianError as exc:
        result.status = "failed" if result.status == "started" else result.status
        result.exit_code = exc.exit_code
        result.message = exc.message
    return result


@contextmanager
def _hub_url(settings: Settings, clock: Clock, log: PhaseLog) -> Iterator[str]:
    assert settings.hub is not None
    if not settings.hub.embedded:
        log.line("hub", "configured", url=settings.hub.url, source=settings.hub.source)
        yield settings.hub.url
        return
    from custodian.embedded import embedded_hub

    with embedded_hub(settings.embedded_dir, clock) as url:
        log.line("hub", "embedded", url=url, db=str(settings.embedded_dir / "hub.sqlite3"))
        yield url


class _Run:
    """The steps of one run, sharing the journal writer, the client and the result."""

    def __init__(
        self,
        settings: Settings,
        result: RunResult,
        log: PhaseLog,
        clock: Clock,
        stop: StopFlag,
        hub_url: str,
        transport: Any,
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
        self.client = StateHubClient(
            hub_url,
            token=settings.hub.token,
            timeout_s=settings.hub.timeout_s,
            max_attempts=settings.hub.max_attempts,
            max_total_s=settings.hub.max_total_s,
            transport=transport,
        )
        self.model_transport = model_transport
        self.approvals = ApprovalStore(settings.memory_dir)
        self.journal: act.Journal = act.MemoryJournal(result.run_id, self.domain, clock)

    def go(self) -> None:
        """Validate the model first (a config error costs nothing), then run under the lock."""
        model = build_model(self.s.model, transport=self.model_transport)
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
                scanned = JournalStore(self.s.memory_dir).scan(self.domain).records
                self._steps(model, list(scanned))
                return
            with RunLock(self.s.memory_dir, self.domain, run_id=self.result.run_id):
                store = JournalStore(self.s.memory_dir)
                history = list(store.read(self.domain).records)
                _refuse_a_broken_chain(history)
                self.journal = act.DiskJournal(
                    store.writer(self.domain, self.result.run_id, self.clock)
                )
                self._steps(model, history)
        finally:
            model.close()
            self.client.close()

    def _steps(self, model: Model, history: list[J.Record]) -> None:
        self.journal.append("run_started", self._started_data(model))
        try:
            if not self.s.dry_run:
                act.reconcile(history, self.journal, self.client, self.log, self.stop)
                self.journal.close_interrupted(history)
            observation = self._observe()
            if self._unchanged(observation, history):
                return
            orientation = self._orient(observation, history, model)
            completion = self._decide(model, orientation)
            plan = self._plan(completion, orientation, observation)
            self.result.observations = list(plan.observations)
            rulings = self._authorize(plan, observation)
            if self.s.dry_run:
                act.report_dry_run(self.result, rulings)
                self._finish("completed", EXIT_OK, "decisions shown, nothing sent or saved")
                return
            self._act(rulings, observation)
            self._settle()
            self._record(plan, rulings, completion)
        except CustodianError as exc:
            self._fail(exc)
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
            try:
                overview = self.client.state_summary()
                summary = self.client.domain_summary(self.domain)
            except HubRequestError as exc:
                if exc.status == 404:
                    raise ConfigError(
                        f"the hub has no domain {self.domain!r}; it knows: "
                        + (
                            ", ".join(d.domain for d in self.client.state_summary().domains)
                            or "none"
                        ),
                        setting="--domain",
                    ) from exc
                raise
            observed = Observation(overview, summary, domain_state_digest(summary))
            info.update(workstreams=len(summary.workstreams), digest=observed.state_digest[:12])
        self.journal.append(
            "observed",
            {
                "state_digest": observed.state_digest,
                "overview": overview.model_dump(mode="json"),
                "summary": summary.model_dump(mode="json"),
            },
        )
        return observed

    def _unchanged(self, observation: Observation, history: list[J.Record]) -> bool:
        last = J.last_completed_observation(history)
        if self.s.force or self.s.dry_run or last is None:
            return False
        finished_at, state_digest, _ = last
        window = timedelta(hours=self.s.limits.skip_window_hours)
        if state_digest != observation.state_digest or self.clock() - finished_at >= window:
            return False
        self.log.line("decide", "skipped", reason="state unchanged since the last completed run")
        self._finish(
            "skipped",
            EXIT_OK,
            f"the domain's state is unchanged since the run that finished at "
            f"{finished_at.isoformat()}; no model call (use --force to run anyway)",
        )
        return True

    def _orient(
        self, observation: Observation, history: list[J.Record], model: Model
    ) -> Orientation:
        with self.log.phase("orient") as info:
            items = self.approvals.all(self.domain)
            now = self.clock()
            o = orient(
                self.s,
                self.domain,
                now,
                observation.overview,
                observation.summary,
                pending=pending_for(items, self.domain, now),
                rejected=recently_rejected(items, self.domain, now),
                previous=_previous_digests(history),
                max_output_tokens=self.s.model.max_output_tokens,
            )
            info.update(estimated_tokens=o.rendered.estimated_tokens)
        self.journal.append(
            "prompt",
            {
                "system": o.prompt.system,
                "user": o.prompt.user,
                "estimated_tokens": o.rendered.estimated_tokens,
            },
        )
        if self.s.show_prompt:
            self.result.message = ""
            record.show_prompt(o, sys.stderr if self.s.json_output else sys.stdout)
        return o

    def _decide(self, model: Model, orientation: Orientation) -> Completion:
        with self.log.phase("decide") as info:
            try:
                completion = model.complete(orientation.prompt)
            except ModelError as exc:
                self.journal.append(
                    "model_failed",
                    {
                        "error": exc.message,
                        "provider": exc.provider,
                        "status": exc.status,
                        "code": exc.code,
                    },
                )
                raise
            info.update(model=completion.model, output_tokens=completion.usage.output_tokens)
        self.result.model = completion.model
        self.result.usage = act.usage_dict(completion)
        self.journal.append("model_response", act.response_data(completion))
        return completion

    def _plan(self, completion: Completion, o: Orientation, observation: Observation) -> Plan:
        try:
            plan = extract_plan(completion.text)
        except PlanRejected as exc:
            self.journal.append(
                "plan",
                {"status": "rejected", "reason": exc.message, "observations": [], "items": 0},
            )
            self._raw_response = completion.text
            raise
        return plan

    def _authorize(self, plan: Plan, observation: Observation) -> tuple[Ruling, ...]:
        with self.log.phase("authorize") as info:
            policy, history = act.policy_and_history(self.s, self.approvals, self.clock())
            rulings = authorize(plan, observation.summary, policy, history)
            self.journal.append(
                "plan",
                {
                    "status": "accepted",
                    "reason": None,
                    "observations": list(plan.observations),
                    "items": len(plan.items),
                    "policy": dict(policy.__dict__),
                    "history": {
                        "pending": dict(history.pending),
                        "rejected": dict(history.rejected),
                    },
                },
            )
            for ruling in rulings:
                self.journal.append("ruling", act.ruling_data(ruling))
            info.update(**act.outcome_counts(rulings))
        return rulings

    def _act(self, rulings: tuple[Ruling, ...], observation: Observation) -> None:
        with self.log.phase("act") as info:
            act.execute(rulings, self.journal, self.client, self.result, self.stop)
            act.enqueue(
                rulings,
                observation.summary,
                self.approvals,
                self.journal,
                self.result,
                self.s,
                self.clock(),
            )
            act.collect_denied(rulings, self.result)
            info.update(
                executed=len(self.result.executed),
                failed=len(self.result.failed),
                queued=len(self.result.queued),
            )

    def _settle(self) -> None:
        """Observe again after writing, so the next run compares against the state we left.

        Without this, the run's own events would look like a change to the next run, and a
        quiet domain would never be skipped.
        """
        if not self.result.executed or self.stop:
            return
        try:
            summary = self.client.domain_summary(self.domain)
        except HubError as exc:
            self.log.line("settle", "failed", error=exc.message)
            return
        self.journal.append(
            "observed",
            {
                "state_digest": domain_state_digest(summary),
                "overview": None,
                "summary": summary.model_dump(mode="json"),
                "after_act": True,
            },
        )

    def _record(self, plan: Plan, rulings: tuple[Ruling, ...], completion: Completion) -> None:
        if self.stop:
            status, code = "interrupted", EXIT_INTERRUPTED
            message = f"stopped by signal {self.stop.signal}; writes not yet sent were not sent"
        elif self.result.failed:
            status, code = "partial", EXIT_WRITES
            message = f"{len(self.result.failed)} authorized write(s) failed"
        else:
            status, code = "completed", EXIT_OK
            message = (
                f"{len(self.result.executed)} executed, {len(self.result.queued)} queued, "
                f"{len(rulings) - len(self.result.executed) - len(self.result.queued)} denied"
            )
        self._write_note(status, prose=plan.prose, rulings=rulings, observations=plan.observations)
        self._finish(status, code, message)

    def _fail(self, exc: CustodianError) -> None:
        status = "rejected" if isinstance(exc, (PlanRejected, ModelError)) else "failed"
        if self.s.dry_run:
            return
        if isinstance(exc, (HubError, ModelError, PlanRejected)):
            self._write_note(status, problem=exc.message, raw=getattr(self, "_raw_response", None))
        self._finish(status, exc.exit_code, exc.message)

    def _write_note(self, status: str, **parts: Any) -> None:
        path = record.write_session_note(
            self.s, self.result, self.started_at, self.clock(), status, **parts
        )
        self.journal.append(
            "note_written", {"path": str(path.name), "sha256": record.file_sha256(path)}
        )
        self.result.note_path = str(path)

    def _finish(self, status: str, exit_code: int, message: str) -> None:
        self.result.status = status
        self.result.exit_code = exit_code
        self.result.message = message
        counts = {
            "executed": len(self.result.executed),
            "queued": len(self.result.queued),
            "denied": len(self.result.denied),
            "failed": len(self.result.failed),
        }
        with contextlib.suppress(CustodianError):
            self.journal.append(
                "finished", {"status": status, "exit_code": exit_code, "counts": counts}
            )
        self.log.line("finish", status, exit_code=exit_code, **counts)


def _refuse_a_broken_chain(history: list[J.Record]) -> None:
    # Fail closed: a journal that does not verify cannot tell what was already written.
    problems = J.verify_chain(history)
    if problems:
        raise JournalError(
            f"the journal does not verify ({problems[0].message}, record {problems[0].seq}); "
            "nothing was done. `custodian inspect --domain D` shows where it breaks; keep a "
            "copy of the journal before repairing it"
        )


def _previous_digests(history: list[J.Record]) -> dict[str, str]:
    last = J.last_completed_observation(history)
    if last is None:
        return {}
    return workstream_digests(DomainSummary.model_validate(last[2]))
