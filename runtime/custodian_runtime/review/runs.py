"""What the review page shows of a domain's runs, derived from its journal records (pure)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from custodian_runtime.core.journal import Record
from custodian_runtime.core.journal import run_summaries as summarize
from custodian_runtime.core.journal_runs import counts_text


@dataclass(frozen=True)
class RunRow:
    """One run as a row of the runs page and a point of the chart."""

    run_id: str
    domain: str
    started_at: str
    status: str
    approval: bool
    counts: dict[str, Any]
    model: str | None
    tokens_in: int | None
    tokens_out: int | None
    cost_usd: float | None
    note: str | None
    open_flags: int | None

    @property
    def counts_text(self) -> str:
        """`executed 1, queued 2, denied 1, …`, or `-`."""
        return counts_text(self.counts) or "-"

    def count(self, key: str) -> int:
        """One of the counts as a number (0 when absent or not a number)."""
        value = self.counts.get(key, 0)
        return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _last(run: Sequence[Record], kind: str) -> Record | None:
    return next((r for r in reversed(run) if r.kind == kind), None)


def _usage(run: Sequence[Record]) -> dict[str, Any]:
    answer = _last(run, "model_response")
    usage = answer.data.get("usage") if answer is not None else None
    return usage if isinstance(usage, dict) else {}


def _open_flags(run: Sequence[Record]) -> int | None:
    observed = _last(run, "observed")
    if observed is None:
        return None
    summary = observed.data.get("summary")
    flags = summary.get("open_flags") if isinstance(summary, dict) else None
    return len(flags) if isinstance(flags, list) else None


def run_rows(records: Sequence[Record]) -> list[RunRow]:
    """Every run of one domain journal, oldest first."""
    rows = []
    for summary in summarize(records):
        run = [r for r in records if r.run_id == summary.run_id]
        usage = _usage(run)
        note = _last(run, "note_written")
        cost = usage.get("cost_usd")
        rows.append(
            RunRow(
                run_id=summary.run_id,
                domain=summary.domain,
                started_at=summary.started_at,
                status=summary.status,
                approval=summary.approval,
                counts=summary.counts,
                model=summary.model,
                tokens_in=_int(usage.get("input_tokens")),
                tokens_out=_int(usage.get("output_tokens")),
                cost_usd=float(cost) if isinstance(cost, int | float) else None,
                note=str(note.data.get("path")) if note is not None else None,
                open_flags=_open_flags(run),
            )
        )
    return rows
