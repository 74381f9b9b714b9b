"""Observe: read the cross-domain overview and the domain's summary, and journal what was seen."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from custodian_runtime.core.context.overview import bounded, index_of
from custodian_runtime.core.contract import DomainSummary, StateSummary
from custodian_runtime.core.digest import SummaryDigests, summary_digests
from custodian_runtime.core.journal.kinds import Observed
from custodian_runtime.errors import ConfigError, HubError, HubRequestError
from custodian_runtime.journal.snapshots import SnapshotStore
from custodian_runtime.run._context import RunContext
from custodian_runtime.run._inputs import run_inputs
from custodian_runtime.statehub.client import StateHubClient
from custodian_runtime.writes import read_summary

KNOWN_NAMED = 20  # domains an unknown domain's error names; the rest are counted


@dataclass(frozen=True)
class Observation:
    """What the hub showed this run."""

    overview: StateSummary
    summary: DomainSummary
    state_digest: str
    # The snapshot's text and the per-workstream digests, computed with the state digest.
    digests: SummaryDigests | None = field(default=None, repr=False, compare=False)

    @property
    def workstream_digests(self) -> Mapping[str, str]:
        """One digest per workstream (core/digest.workstream_digests)."""
        return self.digests.workstreams if self.digests is not None else {}

    def record(self) -> Observed:
        """The journal's `observed` record: the summary is named by its snapshot digest."""
        return Observed(
            state_digest=self.state_digest,
            snapshot=self.state_digest,
            generated_at=_generated_at(self.summary),
            overview=bounded(self.overview, self.summary.domain).as_record(self.overview),
            revision=self.summary.revision,
            workstream_digests=dict(self.workstream_digests),
        )


def observe(ctx: RunContext, first: DomainSummary | None = None) -> Observation:
    """Read the hub, keep the summary's snapshot, and journal what was seen.

    `first`: the summary a conditional read already brought (run/_unchanged.py), read again
    only if Custodian's events crowd its window.
    """
    with ctx.log.phase("observe") as info:
        observed = read_observation(ctx.client, ctx.domain, first, ctx.overview)
        info.update(
            workstreams=len(observed.summary.workstreams), digest=observed.state_digest[:12]
        )
    if observed.digests is not None:
        keep_snapshot(ctx, observed.summary.domain, observed.digests)
    ctx.journal.write(observed.record().model_copy(update={"inputs_digest": run_inputs(ctx)}))
    return observed


def observe_after_act(ctx: RunContext) -> None:
    """Journal the domain as the run's own writes left it; a failed read is only logged."""
    try:
        record = after_act_record(
            ctx.client, ctx.domain, lambda d: keep_snapshot(ctx, ctx.domain, d)
        )
        ctx.journal.write(record.model_copy(update={"inputs_digest": run_inputs(ctx)}))
    except HubError as exc:
        ctx.log.line("observe_after_act", "failed", error=exc.message)


def keep_snapshot(ctx: RunContext, domain: str, digests: SummaryDigests) -> str:
    """Store the observed summary once per distinct content (not in a dry run); its digest."""
    if ctx.dry_run:
        return digests.state
    return SnapshotStore(ctx.memory_dir).put(domain, digests.text)


def read_observation(
    client: StateHubClient,
    domain: str,
    first: DomainSummary | None = None,
    overview: StateSummary | None = None,
) -> Observation:
    """Both reads, or an error: an unknown domain is a ConfigError that names the known ones.

    `overview`: `/state/summary` as already read for this run; read here only when None.
    """
    if overview is None:
        overview = client.state_summary()
    try:
        summary = read_summary(client, domain, first)
    except HubRequestError as exc:
        if exc.status != 404:
            raise
        raise _unknown(domain, overview) from exc
    digests = summary_digests(summary)
    return Observation(overview, summary, digests.state, digests)


def check_known(
    client: StateHubClient, domain: str, overview: StateSummary | None = None
) -> StateSummary:
    """The hub's overview (read unless given); ConfigError unless it lists `domain`."""
    if overview is None:
        overview = client.state_summary()
    if domain not in index_of(overview).by_name:
        raise _unknown(domain, overview)
    return overview


def _unknown(domain: str, overview: StateSummary) -> ConfigError:
    names = [d.domain for d in overview.domains]
    known = ", ".join(names[:KNOWN_NAMED]) or "none"
    if len(names) > KNOWN_NAMED:
        known += f" and {len(names) - KNOWN_NAMED} more"
    return ConfigError(f"the hub has no domain {domain!r}; it knows: {known}", setting="--domain")


def after_act_record(
    client: StateHubClient, domain: str, store: Callable[[SummaryDigests], str]
) -> Observed:
    """The domain as the run's own writes left it, as an `observed` record marked after_act.

    `store` keeps the snapshot (once per distinct content) and returns its digest.
    """
    summary = read_summary(client, domain)
    digests = summary_digests(summary)
    return Observed(
        state_digest=digests.state,
        snapshot=store(digests),
        generated_at=_generated_at(summary),
        overview=None,
        after_act=True,
        revision=summary.revision,
        workstream_digests=dict(digests.workstreams),
    )


def _generated_at(summary: DomainSummary) -> str:
    """The summary's `generated_at` as the hub's JSON writes it."""
    return str(summary.model_dump(mode="json", include={"generated_at"})["generated_at"])
