"""What the review page shows of a domain's runs, derived from its journal records (pure)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from custodian_runtime.core.fold.run_index import RunDigest, summary_of
from custodian_runtime.core.fold.runs import counts_text
from custodian_runtime.core.prices import cost_usd

PAGE_SIZE = 50  # runs per domain on one page: 1,000 runs stay twenty pages, not one wall
NOT_REPORTED = "not reported"  # a model that tells no usage (a `file:` answer): not a zero
# How a status looks: a failure must not look like a completed run.
_TONES = {"completed": "ok", "skipped": "ok", "partial": "warn"}
_BAD = frozenset({"failed", "rejected", "interrupted", "no finished record"})


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
    asked: bool = True  # a model was called (its answer or its failure is in the journal)

    @property
    def counts_text(self) -> str:
        """`executed 1, queued 2, denied 1, …`, or `-`."""
        return counts_text(self.counts) or "-"

    @property
    def tone(self) -> str:
        """`ok`, `warn`, `bad` (a failure of any kind) or `other` (an approval's run)."""
        if self.status in _BAD:
            return "bad"
        return _TONES.get(self.status, "other")

    @property
    def started(self) -> str:
        """When it started, to the second: `2026-12-07 02:15:18` (UTC)."""
        return self.started_at[:19].replace("T", " ")

    @property
    def day(self) -> str:
        """The UTC date the run started, `YYYY-MM-DD`."""
        return self.started_at[:10]

    @property
    def tokens_text(self) -> str:
        """`6120 / 412`; `not reported` when the model told no counts (a `file:` answer), `—` for
        one count it left out; `-` when no model was asked."""
        if not self.asked:
            return "-"
        if self.tokens_in is None and self.tokens_out is None:
            return NOT_REPORTED
        return f"{_known(self.tokens_in)} / {_known(self.tokens_out)}"

    @property
    def cost_text(self) -> str:
        """`$0.0123`, `not reported` when the cost is unknown, `-` for a run that called no
        model."""
        if self.cost_usd is not None:
            return f"${self.cost_usd:.4f}"
        return NOT_REPORTED if self.asked else "-"

    def count(self, key: str) -> int:
        """One of the counts as a number (0 when absent or not a number)."""
        value = self.counts.get(key, 0)
        return value if isinstance(value, int) and not isinstance(value, bool) else 0


@dataclass(frozen=True)
class DayTotal:
    """The runs of one UTC day: how many, how many failed, tokens and cost (known part)."""

    day: str
    runs: int
    failed: int
    tokens_in: int
    tokens_out: int
    cost_usd: float
    unknown: int  # runs that called a model whose cost the journal does not tell
    tokens_unknown: int = 0  # runs that called a model whose token counts it does not tell
    asked: int = 0  # runs that called a model

    @property
    def tokens_text(self) -> str:
        """`6120 / 412`, `+ not reported (1 run)` when some run's counts are unknown, `not
        reported (2 runs)` when every one is."""
        known = f"{self.tokens_in} / {self.tokens_out}"
        return _with_unknown(known, self.tokens_unknown, self.asked)

    @property
    def cost_text(self) -> str:
        """`$0.0123`, `+ not reported (1 run)` when some run's cost is unknown, `not reported
        (2 runs)` when every one is."""
        return _with_unknown(f"${self.cost_usd:.4f}", self.unknown, self.asked)


def _with_unknown(known: str, unknown: int, asked: int) -> str:
    runs = f"({unknown} run{'s' if unknown != 1 else ''})"
    if unknown and unknown == asked:
        return f"{NOT_REPORTED} {runs}"
    return known + (f" + {NOT_REPORTED} {runs}" if unknown else "")


def day_totals(rows: Sequence[RunRow]) -> list[DayTotal]:
    """Totals per UTC day of `rows`, newest day first."""
    days: dict[str, list[RunRow]] = {}
    for row in rows:
        days.setdefault(row.day, []).append(row)
    return [_total(day, days[day]) for day in sorted(days, reverse=True)]


def _total(day: str, rows: Sequence[RunRow]) -> DayTotal:
    unknown = [r for r in rows if r.asked and r.cost_usd is None]
    return DayTotal(
        day=day,
        runs=len(rows),
        failed=sum(1 for r in rows if r.tone == "bad"),
        tokens_in=sum(r.tokens_in or 0 for r in rows),
        tokens_out=sum(r.tokens_out or 0 for r in rows),
        cost_usd=sum(r.cost_usd or 0.0 for r in rows),
        unknown=len(unknown),
        asked=sum(1 for r in rows if r.asked),
        tokens_unknown=sum(
            1 for r in rows if r.asked and (r.tokens_in is None or r.tokens_out is None)
        ),
    )


def page_of(rows: Sequence[RunRow], page: int) -> list[RunRow]:
    """Page `page` (1 = newest) of `rows` (newest first), `PAGE_SIZE` runs a page."""
    start = (page - 1) * PAGE_SIZE
    return list(rows[start : start + PAGE_SIZE])


def page_count(rows: Sequence[RunRow]) -> int:
    """How many pages `rows` fill (at least one)."""
    return max(1, -(-len(rows) // PAGE_SIZE))


def _known(value: int | None) -> str:
    return "—" if value is None else str(value)


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def row_of(digest: RunDigest) -> RunRow:
    """A run's row of the page, from its row of the runs index (core/fold/run_index.py)."""
    summary = summary_of(digest)
    usage = digest.usage
    return RunRow(
        run_id=summary.run_id,
        domain=summary.domain,
        started_at=summary.started_at,
        status=summary.status,
        approval=summary.approval,
        counts=summary.counts,
        model=summary.model,
        tokens_in=_int(usage.get("input_tokens")),
        tokens_out=_int(usage.get("output_tokens")),
        cost_usd=cost_usd(digest.usage_model, usage) if usage else None,
        note=digest.note,
        open_flags=digest.open_flags,
        asked=digest.asked,
    )
