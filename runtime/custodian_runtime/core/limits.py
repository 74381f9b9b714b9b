"""The run's caps, budgets and windows: the one definition of each, with its default.

Settings reads the CUSTODIAN_* variables into a Limits and validates them; the authority, the
prompt, the offline planner, replay and the approval queue all read the numbers from here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType, ModuleType


@dataclass(frozen=True)
class Limits:
    """Per-run caps, the prompt's budget, and the rolling budgets across runs of one domain."""

    # Per run: how many writes of each kind one run may execute, and how many it may queue.
    max_events: int = 20
    max_status_updates: int = 20
    max_flags: int = 10
    max_queued: int = 10
    # How many items one plan may hold at all; a plan with more is rejected whole (exit 4).
    max_plan_items: int = 200
    # What the model sees: the prompt's token budget, and when an in-progress task is stale.
    token_budget: int = 24000
    stale_after_days: int = 14
    # The share of the budget, in percent, that sections retrieved from the canon may take
    # (core/context/choose.py); the constitution and the domain's guidance are shown apart from it.
    canon_share_percent: int = 25
    # A run on an unchanged domain within this window is skipped; a queued item expires after.
    skip_window_hours: int = 24
    approval_ttl_days: int = 14
    # Across runs: how many items one domain's approval queue may hold at once.
    max_pending: int = 50
    # Across runs, per domain (core/authority/budgets.py): Custodian's own writes in the window, and
    # how long a person's change to what Custodian did holds it back.
    budget_window_hours: int = 24
    budget_events: int = 40
    budget_status_updates: int = 20
    budget_flags: int = 10
    budget_status_per_task: int = 1
    # How long a person's change holds Custodian's own writes back (a person's newer word lifts it
    # sooner): as long as Custodian can tell its own writes from others' (it keeps 31 days of them).
    defer_days: int = 30

    def cap(self, operation: str) -> int:
        """The per-run cap for `operation` (its spec's cap field); unknown ones count as queued."""
        spec = _operations().find(operation)
        return int(getattr(self, spec.cap if spec is not None else "max_queued"))

    def budget(self, operation: str) -> int | None:
        """The rolling budget of `operation` per window, when its spec names one."""
        spec = _operations().find(operation)
        if spec is None or spec.budget is None:
            return None
        return int(getattr(self, spec.budget))

    def prompt_caps(self) -> Mapping[str, int]:
        """The per-run caps the system prompt states, keyed by each operation's cap key."""
        keys = ("max_queued", *(spec.cap for spec in _operations().all_specs()))
        return MappingProxyType({key: int(getattr(self, key)) for key in keys})


DEFAULT = Limits()


def _operations() -> ModuleType:
    # Imported when first asked: settings build a Limits before any operation is needed.
    import custodian_runtime.core.operations as operations

    return operations
