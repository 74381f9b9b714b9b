"""The domain summary as every reader needs it: checked, and wide enough to show people's events."""

from __future__ import annotations

from custodian_runtime.core.authority.budgets import wider_window
from custodian_runtime.core.contract import DomainSummary
from custodian_runtime.core.observation import check_domain_summary
from custodian_runtime.statehub.client import StateHubClient

# Its home is statehub/not_modified.py (light: a skip asks with it without pydantic).
from custodian_runtime.statehub.not_modified import SUMMARY_EVENTS as SUMMARY_EVENTS


def read_summary(
    client: StateHubClient, domain: str, first: DomainSummary | None = None
) -> DomainSummary:
    """GET the domain's summary and check it is all of `domain` (else ObservationRejected).

    When Custodian's own events fill the summary's event window, read it again with a wider
    one (up to the hub's 500), so that people's events stay in view. `first`: a summary
    already read with the default window.
    """
    asked = SUMMARY_EVENTS
    summary = first if first is not None else client.domain_summary(domain, events=asked)
    wider = wider_window([e.source for e in summary.recent_events], asked)
    while wider is not None:
        asked = wider
        summary = client.domain_summary(domain, events=asked)
        wider = wider_window([e.source for e in summary.recent_events], asked)
    check_domain_summary(summary, domain)
    return summary
