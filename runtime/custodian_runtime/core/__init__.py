"""The pure core: every decision of a run, as functions of their inputs (no I/O, no clock).

The core offers its modules, each a small interface of its own (`from
custodian_runtime.core.authority import authorize`); the names are kept in their modules because
several read alike across them (a `Verdict` of the approvals and one of the evals). Modules with
a leading underscore are the parts behind them and are not imported from outside the core.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from custodian_runtime._lazy import lazy_attributes

if TYPE_CHECKING:
    from custodian_runtime.core import (
        approval_history,
        approval_ledger,
        approval_settle,
        approval_status,
        approval_text,
        approval_verdicts,
        approvals,
        authority,
        authority_path,
        budgets,
        context,
        continuity,
        contract,
        digest,
        display,
        eval_expect,
        evidence,
        inert,
        journal,
        journal_fold,
        journal_prune,
        journal_records,
        journal_render,
        journal_runs,
        journal_settle,
        journal_stream,
        journal_trace,
        keys,
        marks,
        metrics,
        neutralize,
        observation,
        offline_planner,
        origin,
        outcomes,
        own_writes,
        plan,
        plan_schema,
        planning_facts,
        policy,
        precondition,
        prices,
        recorded_decisions,
        redact,
        run_rules,
        seals,
        tokens,
        unchanged,
    )

__all__ = [
    "approval_history",
    "approval_ledger",
    "approval_settle",
    "approval_status",
    "approval_text",
    "approval_verdicts",
    "approvals",
    "authority",
    "authority_path",
    "budgets",
    "context",
    "continuity",
    "contract",
    "digest",
    "display",
    "eval_expect",
    "evidence",
    "inert",
    "journal",
    "journal_fold",
    "journal_prune",
    "journal_records",
    "journal_render",
    "journal_runs",
    "journal_settle",
    "journal_stream",
    "journal_trace",
    "keys",
    "marks",
    "metrics",
    "neutralize",
    "observation",
    "offline_planner",
    "origin",
    "outcomes",
    "own_writes",
    "plan",
    "plan_schema",
    "planning_facts",
    "policy",
    "precondition",
    "prices",
    "recorded_decisions",
    "redact",
    "run_rules",
    "seals",
    "tokens",
    "unchanged",
]

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_attributes(__name__, globals(), submodules=__all__)
