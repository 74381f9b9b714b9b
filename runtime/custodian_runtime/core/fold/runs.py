"""What the journal says about whole runs: status, counts, and the last completed observation."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from custodian_runtime.core.journal.kinds import (
    ApprovalDecided,
    Finished,
    ModelResponse,
    Observed,
    RulingRecord,
    RunStarted,
    SettledByHand,
    decode,
    of_kind,
    read_as,
)

# Its home is core/journal/observation.py (light: a skip reads it without pydantic).
from custodian_runtime.core.journal.observation import CompletedObservation as CompletedObservation
from custodian_runtime.core.journal.records import Record, parse_at
from custodian_runtime.core.ruling.spine import group_runs, is_approval_run


@dataclass(frozen=True)
class RunSummary:
    """One run as the journal records it."""

    run_id: str
    domain: str
    approval: bool
    first_seq: int
    last_seq: int
    records: int
    started_at: str
    status: str
    exit_code: Any
    counts: dict[str, Any]
    model: str | None

    def brief(self) -> str:
        """One line for a run listing."""
        counts = counts_text(self.counts) or "no counts"
        model = f"  model {self.model}" if self.model else ""
        return (
            f"{self.run_id}  {self.started_at}  {self.status}  seq {self.first_seq}-{self.last_seq}"
            f"  {counts}{model}"
        )


def counts_text(counts: dict[str, Any]) -> str:
    """`executed 1, queued 1, denied 1, failed 0`: the usual four first, then any others."""
    order = ["executed", "queued", "denied", "failed", "stale"]
    keys = [k for k in order if k in counts] + sorted(k for k in counts if k not in order)
    return ", ".join(f"{k} {counts[k]}" for k in keys)


def derived_counts(records: Sequence[Record], run_id: str) -> dict[str, int]:
    """Counts re-derived from the records of one run (used to close an interrupted run)."""
    run = [r for r in records if r.run_id == run_id]
    rulings = [ruling.outcome for _, ruling in of_kind(run, RulingRecord)]
    return {
        "executed": sum(1 for r in run if r.kind == "receipt"),
        "queued": sum(1 for r in run if r.kind == "queued"),
        "denied": rulings.count("deny"),
        "failed": sum(1 for r in run if r.kind == "failed"),
        "stale": sum(1 for r in run if r.kind == "stale"),
    }


def run_summaries(records: Sequence[Record]) -> list[RunSummary]:
    """Every run of one domain journal, in the order the runs began."""
    runs = group_runs(records)
    return [_summarize(run_id, run, records) for run_id, run in runs.items()]


def _summarize(run_id: str, run: Sequence[Record], records: Sequence[Record]) -> RunSummary:
    finished = next((r for r in run if r.kind == "finished"), None)
    approval = is_approval_run(run)
    if finished is not None:
        ended = read_as(finished, Finished)
        status = str(ended.status)
        exit_code = ended.exit_code
        counts = dict(ended.counts or {})
    else:
        status = _person_status(run) if approval else "no finished record"
        exit_code = None
        counts = derived_counts(records, run_id)
    return RunSummary(
        run_id=run_id,
        domain=run[0].domain,
        approval=approval,
        first_seq=run[0].seq,
        last_seq=run[-1].seq,
        records=len(run),
        started_at=run[0].at,
        status=status,
        exit_code=exit_code,
        counts=counts,
        model=_model(run),
    )


def _person_status(run: Sequence[Record]) -> str:
    first = decode(run[0])
    if isinstance(first, SettledByHand):
        return f"settled by hand by {first.by}"
    decision = first.decision if isinstance(first, ApprovalDecided) else None
    return f"approval {decision}"


def _model(run: Sequence[Record]) -> str | None:
    started = next((r for r in run if r.kind == "run_started"), None)
    answer = next((r for r in run if r.kind in ("model_response", "model_failed")), None)
    spec = str(read_as(started, RunStarted).model_spec) if started is not None else None
    if answer is None or answer.kind == "model_failed":
        return spec
    response = read_as(answer, ModelResponse)
    provider, model = response.provider, response.model
    return f"{spec} ({provider}/{model})" if spec else f"{provider}/{model}"


def interrupted_runs(records: Sequence[Record]) -> list[str]:
    """Scheduled runs that began but have no finished record (crashed or still running)."""
    return [
        run_id
        for run_id, run in group_runs(records).items()
        if not is_approval_run(run) and not any(r.kind == "finished" for r in run)
    ]


def latest_run_id(records: Sequence[Record]) -> str | None:
    """The run that began last, preferring scheduled runs over approval runs."""
    runs = group_runs(records)
    scheduled = [rid for rid, run in runs.items() if not is_approval_run(run)]
    candidates = scheduled or list(runs)
    return candidates[-1] if candidates else None


def last_completed_observation(records: Sequence[Record]) -> CompletedObservation | None:
    """(finished_at, state_digest, summary json) of the last completed run, or None."""
    for record in reversed(records):
        if record.kind != "finished" or read_as(record, Finished).status != "completed":
            continue
        # The last observation of the run: the state after its own writes, when it took one.
        observed = next(
            (r for r in reversed(records) if r.kind == "observed" and r.run_id == record.run_id),
            None,
        )
        if observed is not None:
            seen = read_as(observed, Observed)
            return CompletedObservation(
                finished_at=parse_at(record.at),
                state_digest=str(seen.state_digest),
                summary=dict(seen.summary or {}),
                snapshot=seen.snapshot,
                generated_at=seen.generated_at,
                run_id=record.run_id,
                revision=seen.revision,
                inputs_digest=seen.inputs_digest,
                workstream_digests=seen.workstream_digests,
            )
    return None
