"""The journal's pure API: records, hash chain, spine verification, run views and the court record.

Each domain's journal is append-only JSON Lines (in segments on disk: memory/); each line is one
`Record` in canonical JSON whose `hash` covers every other field and whose `prev` is the hash of
the record before it. The parts live in records.py (the chain), spine.py (the authority's
rules), runs.py (run views), trace.py (each item's trace) and presentation/journal_render.py
(the court record); import them from here.
"""

from __future__ import annotations

from custodian_runtime.core.fold.render import (
    render_run,
    replay_lines,
    replay_problems,
)
from custodian_runtime.core.fold.runs import (
    CompletedObservation,
    RunSummary,
    derived_counts,
    interrupted_runs,
    last_completed_observation,
    latest_run_id,
    run_summaries,
)
from custodian_runtime.core.journal.records import (
    GENESIS,
    KINDS,
    SCHEMA_VERSION,
    Problem,
    Record,
    format_at,
    make_record,
    parse_at,
    record_hash,
    verify_chain,
)
from custodian_runtime.core.ruling.spine import PendingWrite, unfinished_items, verify_spine
from custodian_runtime.core.ruling.trace import ItemTrace, trace_items

__all__ = [
    "GENESIS",
    "KINDS",
    "SCHEMA_VERSION",
    "CompletedObservation",
    "ItemTrace",
    "PendingWrite",
    "Problem",
    "Record",
    "RunSummary",
    "derived_counts",
    "format_at",
    "interrupted_runs",
    "last_completed_observation",
    "latest_run_id",
    "make_record",
    "parse_at",
    "record_hash",
    "render_run",
    "replay_lines",
    "replay_problems",
    "run_summaries",
    "trace_items",
    "unfinished_items",
    "verify_chain",
    "verify_spine",
]
