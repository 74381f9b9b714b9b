"""The structured facts the rule planner plans from (run/_planner.py), where a model reads text."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from custodian_runtime.core.contract import DomainSummary, StateSummary
from custodian_runtime.core.limits import DEFAULT


@dataclass(frozen=True)
class PlanningFacts:
    """The observed domain, the time of the run, and what the last completed run saw.

    `previous_workstream_digests` maps workstream id to the digest of its state at the last
    completed run of this domain (None when no completed run came before). `rejected`
    holds (operation, target id) of each proposal a person rejected in the window the prompt
    shows.
    """

    domain: str
    now: datetime
    summary: DomainSummary
    overview: StateSummary | None = None
    previous_workstream_digests: Mapping[str, str] | None = None
    # This observation's digests, as observe computed them (None: computed when needed).
    workstream_digests: Mapping[str, str] | None = None
    stale_after_days: int = DEFAULT.stale_after_days
    rejected: frozenset[tuple[str, str]] = frozenset()
    # Tasks whose status a person set on the hub or approved within `defer_days`
    # (core/authority/budgets.py `decided_by_person`): no flag is raised about them.
    decided: frozenset[str] = frozenset()
