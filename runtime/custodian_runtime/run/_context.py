"""What every step of one run shares: the `RunContext`, built once and never changed."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO

import httpx

from custodian_runtime.canon import readonly_reason
from custodian_runtime.core import operations
from custodian_runtime.core.approvals.ledger import Ledger
from custodian_runtime.core.contract import StateSummary
from custodian_runtime.core.journal.seals import SealKey
from custodian_runtime.core.limits import Limits
from custodian_runtime.core.redact import redact
from custodian_runtime.journal.person.queue import ApprovalStore
from custodian_runtime.journal.run_journal import Journal
from custodian_runtime.process.phase_log import PhaseLog, retry_reporter
from custodian_runtime.process.stopping import StopFlag
from custodian_runtime.run._planner import Planner
from custodian_runtime.settings import Settings
from custodian_runtime.statehub.client import StateHubClient
from custodian_runtime.statehub.connect import embedded_db, hub_label, open_hub
from custodian_runtime.writes import bound, hub_origin

Clock = Callable[[], datetime]


@dataclass(frozen=True)
class RunContext:
    """The run's identity, the settings its steps use, and what they talk through.

    A run that writes builds it once the lock is held, with the domain's journal on disk; a dry
    run builds it with a journal in memory. Every step writes to the journal it was given.
    """

    run_id: str
    domain: str
    dry_run: bool
    force: bool  # run even when the domain is unchanged
    hub: str  # as journaled, noted and printed: `embedded`, or the URL without credentials
    model_spec: str
    max_output_tokens: int
    # The answer is asked for in the plan's JSON schema: the settings want it and the planner
    # can (`Model.schema_output`).
    structured: bool
    prompt_form: str  # `full`, or `compact` for a small context window
    memory_dir: Path
    canon_dir: Path
    limits: Limits  # the caps, budgets and windows of this run
    # The configured hub and canon (origin.bound), named in every item the run authorizes or
    # queues; the hub's identity is read the first time it is called.
    bound: Callable[[], Mapping[str, str | None]]
    started_at: datetime
    clock: Clock
    stop: StopFlag
    log: PhaseLog
    client: StateHubClient
    planner: Planner  # a model adapter, or the rule planner
    journal: Journal
    approvals: ApprovalStore
    prompt_out: TextIO | None = None  # where --show-prompt prints the prompt; None: not shown
    # Operations this run cannot perform, with why (a read-only canon): neither offered to the
    # model nor allowed by the authority.
    unavailable: Mapping[str, str] = field(default_factory=dict)
    # A person's modes and grants as the journal holds them when the run starts
    # (core/standing/record.Standing.fingerprint): part of what the revision skip compares.
    standing: Mapping[str, Any] | None = None
    # The seal key: a person's standing decisions kept while the domain was busy are sealed.
    seal_key: SealKey | None = None
    # The hub's `/state/summary` as already read for this run (by `custodian watch`, or the
    # first run's check of the domain): observe reads it again only when None.
    overview: StateSummary | None = None
    # What the journal says of each approval item when the run starts (its checkpoint's ledger,
    # core/approvals/ledger.py): the status a rule reads, never an item file's.
    ledger: Ledger = field(default_factory=Ledger)
    # Who is told when items wait (run/_notice.py): the webhook, the page's address, and the
    # digest of the set the last notice told (the checkpoint's).
    notify_url: str | None = field(default=None, repr=False)
    review_url: str | None = None
    last_notice: str = ""

    def now(self) -> datetime:
        """The time now, by the run's clock."""
        return self.clock()


@dataclass(frozen=True)
class Channels:
    """What the run talks through, opened before its context is built."""

    clock: Clock
    stop: StopFlag
    log: PhaseLog
    client: StateHubClient
    planner: Planner
    hub: str
    started_at: datetime
    overview: StateSummary | None = None  # `/state/summary` already read, if it was


def build_context(
    settings: Settings, run_id: str, channels: Channels, journal: Journal, approvals: ApprovalStore
) -> RunContext:
    """The run's context from its settings, fixed for the whole run."""
    assert settings.domain is not None
    return RunContext(
        run_id=run_id,
        domain=settings.domain,
        dry_run=settings.dry_run,
        force=settings.force,
        hub=channels.hub,
        model_spec=settings.model.spec,
        max_output_tokens=settings.model.max_output_tokens,
        structured=settings.model.structured and channels.planner.schema_output,
        prompt_form=settings.prompt_form,
        memory_dir=settings.memory_dir,
        canon_dir=settings.canon_dir,
        limits=settings.limits,
        bound=Binding(settings, channels.client, channels.log),
        started_at=channels.started_at,
        clock=channels.clock,
        stop=channels.stop,
        log=channels.log,
        client=channels.client,
        planner=channels.planner,
        journal=journal,
        approvals=approvals,
        prompt_out=_prompt_out(settings),
        unavailable=unavailable(settings),
        seal_key=settings.seal_key,
        overview=channels.overview,
        notify_url=settings.notify_url,
        review_url=settings.review_url,
    )


def unavailable(settings: Settings) -> dict[str, str]:
    """The operations that cannot be carried out with these settings, each with why."""
    why = readonly_reason(
        settings.canon_dir,
        flagged=settings.canon_readonly,
        packaged=settings.canon_source == "packaged",
    )
    if why is None:
        return {}
    return {s.name: why for s in operations.all_specs() if s.writes == "canon"}


def _prompt_out(settings: Settings) -> TextIO | None:
    if not settings.show_prompt:
        return None
    # With --json, stdout is the summary; the prompt goes to stderr.
    return sys.stderr if settings.json_output else sys.stdout


class Binding:
    """What the run's items and authorizations are bound to (`origin.bound`), read when first
    needed: the hub's identity costs a GET /health, which a run that binds nothing never asks."""

    def __init__(self, settings: Settings, client: StateHubClient, log: PhaseLog) -> None:
        self._settings, self._client, self._log = settings, client, log
        self._bound: dict[str, str | None] | None = None

    def __call__(self) -> Mapping[str, str | None]:
        """{"hub", "hub_at", "canon"}: the identity read, and a v1.1 notice said, once."""
        if self._bound is None:
            origin = hub_origin(self._settings, self._client)
            if origin is not None:
                self._log.line("hub", "identified", hub_id=origin.hub_id, at=origin.location)
            notice = None if origin is None else origin.notice()
            if notice is not None:
                self._log.line("hub", "bound by URL", detail=notice)
            self._bound = bound(self._settings, origin)
        return self._bound


@contextmanager
def open_client(
    settings: Settings,
    clock: Clock,
    log: PhaseLog,
    stop: StopFlag,
    transport: httpx.BaseTransport | None,
) -> Iterator[tuple[StateHubClient, str]]:
    """A client of the configured hub (the embedded one in this process), and its label.

    The label is what is journaled, noted and printed (`hub_label`).
    """
    hub = settings.hub
    assert hub is not None
    on_retry = retry_reporter(log, "hub")
    with open_hub(
        hub, settings.embedded_dir, clock, transport=transport, stop=stop, on_retry=on_retry
    ) as client:
        if hub.embedded:
            log.line("hub", "embedded", db=str(embedded_db(settings.embedded_dir)))
        else:
            log.line("hub", "configured", url=redact(hub.url), source=hub.source)
        yield client, hub_label(hub)
