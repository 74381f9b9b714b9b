"""A domain's running totals: runs, write outcomes and model cost since its journal began.

The checkpoint (core/fold/checkpoint.py) carries them and adds each new record once, so they are
a function of the journal, never of a process: every push to a Pushgateway (which replaces the
domain's group) and every scrape of a long-running process sees the same cumulative values, and
Prometheus's `increase()` over them counts each run exactly once, between whatever scrapes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field

from custodian_runtime.core.journal.kinds import (
    Authorized,
    Finished,
    RulingRecord,
    item_of,
    of_kind,
    read_as,
)
from custodian_runtime.core.journal.records import Record
from custodian_runtime.core.prices import cost_usd

MICRO = 1_000_000  # cost is summed in whole micro-dollars, so folding in chunks adds up exactly
SEP = " "
UNKNOWN_OPERATION = "unknown"
# The record that says how a write ended, and the outcome label it counts under.
WRITE_OUTCOMES = {"receipt": "executed", "failed": "failed", "stale": "stale", "queued": "queued"}


class Totals(BaseModel):
    """Cumulative counts of one domain's journal (labels joined by a space as dict keys)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    runs: dict[str, int] = Field(default_factory=dict)  # "<status> <exit code>"
    writes: dict[str, int] = Field(default_factory=dict)  # "<operation> <outcome>"
    input_tokens: int = 0
    output_tokens: int = 0
    cost_micro_usd: int = 0
    # When the first recorded run ended: "never succeeded" is measured from it.
    first_run_at: str | None = None

    @property
    def cost_usd(self) -> float:
        """The summed cost of the model calls whose price was known, in USD."""
        return self.cost_micro_usd / MICRO

    def labelled(self, which: str) -> list[tuple[tuple[str, str], int]]:
        """`runs` or `writes` as ((first label, second label), count), sorted."""
        counts: Mapping[str, int] = self.runs if which == "runs" else self.writes
        return [(_split(key), n) for key, n in sorted(counts.items())]


def _split(key: str) -> tuple[str, str]:
    first, _, second = key.partition(SEP)
    return first, second


def _operations(records: Iterable[Record]) -> dict[object, str]:
    """(run, index) -> operation, from the rulings and authorizations among `records`."""
    kept = list(records)
    found: dict[object, str] = {}
    pairs: list[tuple[Record, RulingRecord | Authorized]] = [
        *of_kind(kept, RulingRecord),
        *of_kind(kept, Authorized),
    ]
    for record, entry in pairs:
        if entry.operation:
            found[item_of(record)] = entry.operation
    return found


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _run_counts(ended: Finished) -> tuple[str, int, int, int]:
    exit_code = "none" if ended.exit_code is None else str(ended.exit_code)
    usage = dict(ended.usage or {})
    cost = cost_usd(ended.model, usage)
    micro = round(cost * MICRO) if cost is not None else 0
    key = f"{ended.status or 'unknown'}{SEP}{exit_code}"
    return key, _int(usage.get("input_tokens")), _int(usage.get("output_tokens")), micro


def _write_key(record: Record, operations: Mapping[object, str]) -> str | None:
    if record.kind == "ruling":
        ruling = read_as(record, RulingRecord)
        if ruling.outcome != "deny":
            return None
        return f"{ruling.operation or UNKNOWN_OPERATION}{SEP}denied"
    outcome = WRITE_OUTCOMES.get(record.kind)
    if outcome is None:
        return None
    return f"{operations.get(item_of(record), UNKNOWN_OPERATION)}{SEP}{outcome}"


def add(totals: Totals, known: Sequence[Record], new: Sequence[Record]) -> Totals:
    """`totals` with each of `new` counted once; `known` (records kept before) name operations."""
    runs, writes = Counter(totals.runs), Counter(totals.writes)
    tokens_in, tokens_out, micro = totals.input_tokens, totals.output_tokens, totals.cost_micro_usd
    first = totals.first_run_at
    operations = _operations([*known, *new])
    for record in new:
        if record.kind == "finished":
            first = first or record.at
            key, more_in, more_out, more_micro = _run_counts(read_as(record, Finished))
            runs[key] += 1
            tokens_in, tokens_out, micro = (
                tokens_in + more_in,
                tokens_out + more_out,
                micro + more_micro,
            )
            continue
        write = _write_key(record, operations)
        if write is not None:
            writes[write] += 1
    return Totals(
        runs=dict(runs),
        writes=dict(writes),
        input_tokens=tokens_in,
        output_tokens=tokens_out,
        cost_micro_usd=micro,
        first_run_at=first,
    )


def ended_runs(records: Sequence[Record]) -> list[Record]:
    """The `finished` records of scheduled runs, not those that close a killed run."""
    return [r for r, ended in of_kind(records, Finished) if not ended.closed_by]


def succeeded_runs(ended: Sequence[Record]) -> list[Record]:
    """Of `ended`, the runs that exited 0."""
    return [r for r, data in of_kind(ended, Finished) if data.exit_code == 0]


def run_index(records: Sequence[Record]) -> list[Record]:
    """The `finished` records `figures_of` reads: the newest run's and the newest success's."""
    ended = ended_runs(records)
    succeeded = succeeded_runs(ended)
    return [*ended[-1:], *succeeded[-1:]]
