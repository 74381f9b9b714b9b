"""Observe: read the cross-domain overview and the domain's summary, and journal what was seen."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from custodian_runtime.core.contract import DomainSummary, StateSummary
from custodian_runtime.core.digest import domain_state_digest
from custodian_runtime.core.journal_kinds import Observed
from custodian_runtime.errors import ConfigError, HubError, HubRequestError
from custodian_runtime.memory.snapshots import SnapshotStore
from custodian_runtime.run._context import RunContext
from custodian_runtime.statehub.client import StateHubClient
from custodian_runtime.writes import read_summary


@dataclass(frozen=True)
class Observation:
    """What the hub showed this run."""

    overview: StateSummary
    summary: DomainSummary
    state_digest: str

    def record(self) -> Observed:
        """The journal's `observed` record: the summary is named by its snapshot digest."""
        return Observed(
            state_digest=self.state_digest,
            snapshot=self.state_digest,
            generated_at=self.summary.model_dump(mode="json")["generated_at"],
            overview=self.overview.model_dump(mode="json"),
        )


def observe(ctx: RunContext) -> Observation:
    """Read the hub, keep the summary's snapshot, and journal what was seen."""
    with ctx.log.phase("observe") as info:
        observed = read_observation(ctx.client, ctx.domain)
        info.update(
            workstreams=len(observed.summary.workstreams), digest=observed.state_digest[:12]
        )
    keep_snapshot(ctx, observed.summary)
    ctx.journal.write(observed.record())
    return observed


def observe_after_act(ctx: RunContext) -> None:
    """Journal the domain as the run's own writes left it; a failed read is only logged."""
    try:
        ctx.journal.write(settled_record(ctx.client, ctx.domain, lambda s: keep_snapshot(ctx, s)))
    except HubError as exc:
        ctx.log.line("settle", "failed", error=exc.message)


def keep_snapshot(ctx: RunContext, summary: DomainSummary) -> str:
    """Store the observed summary once per distinct content (not in a dry run); its digest."""
    if ctx.dry_run:
        return domain_state_digest(summary)
    return SnapshotStore(ctx.memory_dir).put_summary(summary)


def read_observation(client: StateHubClient, domain: str) -> Observation:
    """Both reads, or an error: an unknown domain is a ConfigError that names the known ones."""
    overview = client.state_summary()
    try:
        summary = read_summary(client, domain)
    except HubRequestError as exc:
        if exc.status != 404:
            raise
        raise _unknown(domain, overview) from exc
    return Observation(overview, summary, domain_state_digest(summary))


def check_known(client: StateHubClient, domain: str) -> None:
    """ConfigError unless the hub's overview lists `domain` (one small read)."""
    overview = client.state_summary()
    if domain not in {d.domain for d in overview.domains}:
        raise _unknown(domain, overview)


def _unknown(domain: str, overview: StateSummary) -> ConfigError:
    known = ", ".join(d.domain for d in overview.domains) or "none"
    return ConfigError(f"the hub has no domain {domain!r}; it knows: {known}", setting="--domain")


def settled_record(
    client: StateHubClient, domain: str, store: Callable[[DomainSummary], str]
) -> Observed:
    """The domain as the run's own writes left it, as an `observed` record marked after_act.

    `store` keeps the snapshot (once per distinct content) and returns its digest.
    """
    summary = read_summary(client, domain)
    return Observed(
        state_digest=domain_state_digest(summary),
        snapshot=store(summary),
        generated_at=summary.model_dump(mode="json")["generated_at"],
        overview=None,
        after_act=True,
    )
