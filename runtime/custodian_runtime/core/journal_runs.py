"""What the journal says about whole runs: status, counts, and the last completed observation."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple

from custodian_runtime.core._journal_spine import group_runs, is_approval_run
from custodian_runtime.core.journal_records import Record, parse_at


class CompletedObservation(NamedTuple):
    """The state the last completed run acted on: lets the next run skip when nothing changed."""

    finished_at: datetime
    state_digest: str
    summary: dict[str, Any]
    snapshot: str | None = None
    generated_at: str | None = None
    # Contract v1.2 and later journals (additive: absent from older `observed` records).
    run_id: str | None = None
    revision: int | None = None  # the domain's revision as the hub named it
    inputs_digest: str | None = None  # canon, policy and grants (core/unchanged.inputs_digest)
    workstream_digests: dict[str, str] | None = None  # per workstream, as core/digest makes them


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
    rulings = [r.data.get("outcome") for r in run if r.kind == "ruling"]
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
        status = str(finished.data.get("status"))
        exit_code = finished.data.get("exit_code")
        counts = dict(finished.data.get("counts") or {})
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
    if run[0].kind == "settled_by_hand":
        return f"settled by hand by {run[0].data.get('by')}"
    return f"approval {run[0].data.get('decision')}"


def _model(run: Sequence[Record]) -> str | None:
    started = next((r for r in run if r.kind == "run_started"), None)
    answer = next((r for r in run if r.kind in ("model_response", "model_failed")), None)
    spec = str(started.data.get("model_spec")) if started is not None else None
    if answer is None or answer.kind == "model_failed":
        return spec
    provider, model = answer.data.get("provider"), answer.data.get("model")
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
        if record.kind != "finished" or record.data.get("status") != "completed":
            continue
        # The last observation of the run: the state after its own writes, when it took one.
        observed = next(
            (r for r in reversed(records) if r.kind == "observed" and r.run_id == record.run_id),
            None,
        )
        if observed is not None:
            return CompletedObservation(
                finished_at=parse_at(record.at),
                state_digest=str(observed.data.get("state_digest")),
                summary=dict(observed.data.get("summary") or {}),
                snapshot=_text_or_none(observed.data.get("snapshot")),
                generated_at=_text_or_none(observed.data.get("generated_at")),
                run_id=record.run_id,
                revision=_revision(observed.data.get("revision")),
                inputs_digest=_text_or_none(observed.data.get("inputs_digest")),
                workstream_digests=_digests(observed.data.get("workstream_digests")),
            )
    return None


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _revision(value: Any) -> int | None:
    ok = isinstance(value, int) and not isinstance(value, bool) and value >= 0
    return value if ok else None


def _digests(value: Any) -> dict[str, str] | None:
    if not isinstance(value, dict):
        return None
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        return None
    return dict(value)
