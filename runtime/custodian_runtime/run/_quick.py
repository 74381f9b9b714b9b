"""A skip that loads only what decides it: the hub's 304, and nothing waiting here.

`custodian run` tries this before it imports the run. Under the domain's lock it reads the
facts the last commit derived (core/skip/facts.py) and trusts them only while the journal still
ends with the record they name; it asks what the full run asks (core/skip/unchanged.py), sends the
same conditional read, and on a 304 journals the same three records the full run journals
(`run_started`, the `observed` of a 304, `finished`), byte for byte, sealed alike, chained to
the same head. No pydantic, no typed journal, no model adapter is loaded.

Anything else returns None before a byte is written, and the full run decides as before: no
facts or other ones, a record appended since, local work, a 200, an error or a refusal of the
hub (the full run asks again, and retries), a lock held, a dry run, `--force`, the embedded hub,
a Pushgateway to push to, a segment due to rotate.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import Any, TextIO

from custodian_runtime.clock import new_run_id, utc_now
from custodian_runtime.core.digest import digest
from custodian_runtime.core.journal.chain import parse_at
from custodian_runtime.core.journal.observation import CompletedObservation
from custodian_runtime.core.journal.seal_key import UNSEALED
from custodian_runtime.core.run_rules import EXIT_OK, Ending, signalled
from custodian_runtime.core.skip.unchanged import (
    LocalWork,
    not_modified_data,
    not_modified_reason,
    revision_to_ask,
)
from custodian_runtime.errors import CustodianError
from custodian_runtime.journal.person.inbox_files import words_waiting
from custodian_runtime.journal.skip_facts import JournalEnd, journal_end, load_facts, save_facts
from custodian_runtime.process.phase_log import PhaseLog
from custodian_runtime.process.stopping import StopFlag, stop_on_signals
from custodian_runtime.run._inputs import inputs_of
from custodian_runtime.run._quick_append import Appender
from custodian_runtime.run._quick_result import SKIP_COUNTS, QuickResult
from custodian_runtime.run._started import started_data
from custodian_runtime.settings import Settings

Clock = Callable[[], datetime]


def quick_skip(
    settings: Settings, *, stderr: TextIO | None = None, clock: Clock = utc_now
) -> QuickResult | None:
    """The run, when it is a skip on the hub's 304; None (nothing written) when it is not."""
    hub, domain = settings.hub, settings.domain
    if domain is None or hub is None or hub.embedded or settings.dry_run or settings.force:
        return None
    if settings.pushgateway_url is not None or words_waiting(settings.memory_dir, domain):
        return None
    if _facts(settings) is None:
        return None  # a first run, or other settings: the full run reads the journal
    run_id = new_run_id(clock())
    log = _log(settings, run_id, stderr or sys.stderr, clock)  # a warning now names the run
    if not _checked(settings):
        return None
    from custodian_runtime.errors import RunLocked
    from custodian_runtime.journal.lock import RunLock

    lock = RunLock(settings.memory_dir, domain, run_id=run_id)
    if lock.path.exists():
        return None  # held, or left by a killed run: the full run says whose, and settles it
    try:
        with lock:
            if lock.left is not None:
                return None
            return _locked(settings, run_id, log, clock)
    except RunLocked:
        return None  # the full run says who holds it


def _facts(settings: Settings) -> dict[str, Any] | None:
    """The facts kept for the domain, when kept under these settings and naming a model."""
    assert settings.domain is not None
    facts = load_facts(settings.memory_dir / "journal", settings.domain, settings.seal_key)
    if facts is None or facts.get("settings_digest") != digest(settings.digest_view()):
        return None  # other settings, or none kept: the full run reads the journal
    if not isinstance(facts.get("model"), str):
        return None  # the full run names the model it builds
    return facts


def _checked(settings: Settings) -> bool:
    """What the full run checks first (writes/_preflight.py) holds; else it says why."""
    from custodian_runtime.writes import check_run

    try:
        check_run(settings)
    except CustodianError:
        return False
    return True


def _locked(settings: Settings, run_id: str, log: PhaseLog, clock: Clock) -> QuickResult | None:
    """Under the lock: decide on the facts, ask the hub, and journal the skip on a 304."""
    assert settings.domain is not None and settings.hub is not None
    domain, journal = settings.domain, settings.memory_dir / "journal"
    facts = _facts(settings)  # again, under the lock: what a run may have kept meanwhile
    if facts is None:
        return None
    try:
        head = journal_end(journal, domain, facts["head"], settings.seal_key)
        asked = None if head is None else _revision_to_ask(settings, facts, clock())
    except (KeyError, TypeError, ValueError):
        return None  # facts of another shape: the full run reads the journal
    if head is None or asked is None:
        return None
    last, revision = asked
    answer = _ask(settings, revision)
    if answer is None:
        return None
    return _journal_skip(settings, facts, head, run_id, (last, answer), log, clock)


def _revision_to_ask(
    settings: Settings, facts: Mapping[str, Any], now: datetime
) -> tuple[CompletedObservation, int] | None:
    """The last completed run and the revision to ask with, as the full run decides them
    (run/_unchanged.ask_unchanged); None when it would read the domain whole."""
    kept = facts["last"]
    if kept is None:
        return None
    last = CompletedObservation(
        finished_at=parse_at(kept["finished_at"]), state_digest=kept["state_digest"],
        summary={}, snapshot=kept["snapshot"], generated_at=kept["generated_at"],
        run_id=kept["run_id"], revision=kept["revision"], inputs_digest=kept["inputs_digest"],
    )  # fmt: skip
    work = _local_work(settings, facts, last, now)
    window = timedelta(hours=settings.limits.skip_window_hours)
    revision = revision_to_ask(last, now, window, work, force=False)
    return None if revision is None else (last, revision)


def _local_work(
    settings: Settings, facts: Mapping[str, Any], last: CompletedObservation, now: datetime
) -> LocalWork:
    """What waits here (run/_unchanged.local_work), from the facts and the inbox's listing."""
    assert settings.domain is not None and settings.hub is not None
    since = last.finished_at
    expiries = sum(1 for at in facts["expiries"] if since < parse_at(at) <= now)
    inputs = inputs_of(settings.canon_dir, settings.domain, settings.limits, facts["standing"],
                       _hub_label(settings))  # fmt: skip
    return LocalWork(
        open_writes=int(facts["open_writes"]),
        interrupted=int(facts["interrupted"]),
        decisions=words_waiting(settings.memory_dir, settings.domain),
        expiries=expiries,
        inputs_changed=inputs != last.inputs_digest,
    )


def _hub_label(settings: Settings) -> str:
    """The hub as journaled (statehub/connect.hub_label): the URL without credentials."""
    from custodian_runtime.core.redact import redact

    assert settings.hub is not None
    return redact(settings.hub.url)


def _ask(settings: Settings, revision: int) -> int | None:
    """The conditional read the full run sends; the revision a 304 names, else None."""
    from custodian_runtime.statehub.not_modified import ask_not_modified

    hub = settings.hub
    assert hub is not None and settings.domain is not None
    return ask_not_modified(hub.url, hub.token, hub.timeout_s, hub.proxy, settings.domain, revision)


def _journal_skip(
    settings: Settings,
    facts: Mapping[str, Any],
    head: JournalEnd,
    run_id: str,
    answered: tuple[CompletedObservation, int],
    log: PhaseLog,
    clock: Clock,
) -> QuickResult:
    """The three records of a skip, appended and fsync'd one by one; the facts moved to the
    new head; the lines the full run says; the result."""
    assert settings.domain is not None and settings.hub is not None
    last, revision = answered
    hub, model = _hub_label(settings), facts["model"]
    _said(settings, log, model)
    reason = not_modified_reason(last, revision)
    stop = StopFlag()
    with stop_on_signals(stop):  # a signal now ends the run interrupted, as in the full run
        writer = Appender(settings.memory_dir / "journal" / f"{settings.domain}.jsonl",
                           settings, run_id, head, clock)  # fmt: skip
        writer.append("run_started", started_data(settings, hub))
        writer.append("observed", not_modified_data(last, revision))
        end = signalled(Ending("skipped", EXIT_OK, reason), stop.signal)
        finished = {"status": end.status, "exit_code": end.exit_code, "counts": SKIP_COUNTS,
                    "model": model, "usage": {}}  # fmt: skip
        start = writer.append("finished", finished)
    where = {"seq": writer.head.seq, "hash": writer.head.hash, "head_start": start,
             "offset": writer.head.offset}  # fmt: skip
    with contextlib.suppress(OSError):  # derived data: the next run reads the journal
        save_facts(settings.memory_dir / "journal", settings.domain, facts, where,
                   settings.seal_key)  # fmt: skip
    why = f"not modified (domain revision {revision}), no local work"
    said = why if end.status == "skipped" else f"skipped ({why}), then a signal"
    log.line("finish", end.status, exit_code=end.exit_code, reason=said)
    return QuickResult(run_id, settings.domain, hub, settings.model.spec, model, end.status,
                       end.exit_code, end.message)  # fmt: skip


def _log(settings: Settings, run_id: str, stderr: TextIO, clock: Clock) -> PhaseLog:
    """The run's log, as the full run makes it (nothing said yet)."""
    assert settings.domain is not None
    return PhaseLog(stderr, fmt=settings.log_format, run_id=run_id, domain=settings.domain,
                    clock=clock, monotonic=time.monotonic)  # fmt: skip


def _said(settings: Settings, log: PhaseLog, model: str | None) -> None:
    """The lines the full run says before its finish."""
    from custodian_runtime.core.redact import redact
    from custodian_runtime.packaged import PACKAGED

    assert settings.hub is not None
    if settings.canon_source == PACKAGED:
        log.line("canon", "packaged", dir=str(settings.canon_dir), copy="custodian init DIR")
    log.line("hub", "configured", url=redact(settings.hub.url), source=settings.hub.source)
    log.line("model", "selected", spec=settings.model.spec, model=model,
             source=settings.model_source)  # fmt: skip
    if settings.seal_key is None:
        log.line("seals", "unsealed", detail=UNSEALED)
