"""The runs index's fold: each run of a domain journal as one small row, folded record by record.

A row (`RunDigest`) holds what a listing of runs shows: how the run began and ended, its counts,
its model and tokens, its note, the open flags it observed, and the writes it made under a grant.
`fold_runs(state, records)` folds records into the rows of the runs still open (`RunsFold.loose`)
and returns the rows that became final, in the order the runs began: a scheduled run once it has
a `finished` record, a person's run once a later run began. A final row never changes again,
except the outcome of a write under a grant it left open, which `RunsFold.late` keeps. A record
of a run that is no longer open (a journal that breaks the spine) cannot be folded in: the fold
answers None, and its reader reads the whole journal instead. `summary_of(row)` is what
`run_summaries` says of the same run's records (a test compares them).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from custodian_runtime.core.fold.checkpoint import EMPTY_HEAD, Head
from custodian_runtime.core.fold.runs import RunSummary
from custodian_runtime.core.journal.kinds import (
    ApprovalDecided,
    Authorized,
    Finished,
    ModelResponse,
    NoteWritten,
    Observed,
    Receipt,
    RulingRecord,
    RunStarted,
    SettledByHand,
    WriteStep,
    decode,
    read_as,
)
from custodian_runtime.core.journal.records import PERSON_RUN_FIRST, RUN_FIRST_KINDS, Record
from custodian_runtime.core.ruling.spine import group_runs

# 1: the first index. An index of another version is rebuilt by one full scan.
INDEX_VERSION = 1
# How a closed grant use reads, by the kind of the record that closed it (review/standing_history).
_CLOSED = {"receipt": "executed", "failed": "failed", "stale": "stale"}
_COUNTED = {"receipt": "executed", "queued": "queued", "failed": "failed", "stale": "stale"}
_COUNTS = ("executed", "queued", "denied", "failed", "stale")  # as derived_counts says them
ANSWERS = ("model_response", "model_failed")

Place = tuple[int, int]  # (the segment's first seq, the byte offset of the record in it)


class UseRow(BaseModel):
    """One write authorized under a grant, and what became of it (`open` until closed)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    run_id: str
    index: int
    domain: str
    at: str
    operation: str
    params: dict[str, Any]
    grant_id: str
    outcome: str = "open"


class RunDigest(BaseModel):
    """One run as the index keeps it: what its records say, folded."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    run_id: str
    domain: str
    first_seq: int
    last_seq: int
    records: int
    started_at: str
    first_kind: str
    place: Place | None = None
    person_status: str | None = None
    finished: Finished | None = None
    derived: dict[str, int] = {}
    spec: str | None = None
    started: bool = False
    answer: tuple[str, str | None, str | None] | None = None
    usage: dict[str, Any] = {}
    usage_model: str | None = None
    note: str | None = None
    flags_seen: bool = False
    open_flags: int | None = None
    uses: tuple[UseRow, ...] = ()

    @property
    def approval(self) -> bool:
        """A person's run (an approval, a hand settling) has no run_started/finished pair."""
        return self.first_kind in PERSON_RUN_FIRST

    @property
    def asked(self) -> bool:
        """A model was called: its answer or its failure is in the journal."""
        return self.answer is not None


class RunsFold(BaseModel):
    """The index's state: where it stands in the chain, the final rows' count, the open rows."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    v: int = INDEX_VERSION
    domain: str
    start: int = 0  # the seq of the anchor the journal starts after (0: never pruned)
    head: Head = EMPTY_HEAD
    rows: int = 0
    loose: tuple[RunDigest, ...] = ()
    late: tuple[UseRow, ...] = ()


def fold_runs(
    state: RunsFold, records: Iterable[Record], places: Mapping[int, Place] | None = None
) -> tuple[RunsFold, list[RunDigest]] | None:
    """The state after `records` and the rows they made final; None if one cannot be folded."""
    loose = {d.run_id: d for d in state.loose}
    late = {(u.run_id, u.index): u for u in state.late}
    last: Record | None = None
    for r in records:
        digest = loose.get(r.run_id)
        if digest is None and state.rows and r.kind not in RUN_FIRST_KINDS:
            return None  # it may continue a run whose row is final: read the whole journal
        loose[r.run_id] = _step(digest, r, (places or {}).get(r.seq))
        _close_use(r, loose, late)
        last = r
    if last is None:
        return state, []
    ordered = sorted(loose.values(), key=lambda d: d.first_seq)
    done = _final_prefix(ordered)
    for d in ordered[:done]:
        late.update({(u.run_id, u.index): u for u in d.uses if u.outcome == "open"})
    head = Head(seq=last.seq, hash=last.hash, at=last.at)
    new = state.model_copy(
        update={"head": head, "rows": state.rows + done, "loose": tuple(ordered[done:]),
                "late": tuple(late.values())}
    )  # fmt: skip
    return new, ordered[:done]


def _final_prefix(ordered: Sequence[RunDigest]) -> int:
    """How many of the oldest open rows are final (a row waits for every one before it)."""
    done = 0
    for n, d in enumerate(ordered):
        later = n + 1 < len(ordered)
        if (d.approval and not later) or (not d.approval and d.finished is None):
            break
        done += 1
    return done


def _step(digest: RunDigest | None, r: Record, place: Place | None) -> RunDigest:
    if digest is None:
        digest = RunDigest(
            run_id=r.run_id, domain=r.domain, first_seq=r.seq, last_seq=r.seq, records=0,
            started_at=r.at, first_kind=r.kind, place=place, person_status=_person_status(r),
        )  # fmt: skip
    update: dict[str, Any] = {"last_seq": r.seq, "records": digest.records + 1}
    update.update(_facts(digest, r))
    return digest.model_copy(update=update)


def _person_status(first: Record) -> str | None:
    if first.kind not in PERSON_RUN_FIRST:
        return None
    entry = decode(first)
    if isinstance(entry, SettledByHand):
        return f"settled by hand by {entry.by}"
    decision = entry.decision if isinstance(entry, ApprovalDecided) else None
    return f"approval {decision}"


def _facts(d: RunDigest, r: Record) -> dict[str, Any]:
    """What `r` changes in its run's row (as core/fold/runs.py and review/runs.py read it)."""
    kind = r.kind
    if kind == "finished":
        return {} if d.finished is not None else {"finished": read_as(r, Finished)}
    if kind == "run_started":
        spec = str(read_as(r, RunStarted).model_spec)
        return {} if d.started else {"started": True, "spec": spec}
    if kind in ANSWERS:
        return _answered(d, r)
    if kind == "note_written":
        return {"note": str(read_as(r, NoteWritten).path)}
    if kind == "observed" and not d.flags_seen:
        return _flags(d, r)
    if kind == "authorized":
        return _granted(d, r)
    counted = _COUNTED.get(kind) or _denied(r)
    if counted is None:
        return {}
    return {"derived": {**d.derived, counted: d.derived.get(counted, 0) + 1}}


def _denied(r: Record) -> str | None:
    is_deny = r.kind == "ruling" and read_as(r, RulingRecord).outcome == "deny"
    return "denied" if is_deny else None


def _answered(d: RunDigest, r: Record) -> dict[str, Any]:
    found: dict[str, Any] = {}
    if r.kind == "model_response":
        response = read_as(r, ModelResponse)
        found = {"usage": dict(response.usage or {}), "usage_model": response.model}
        if d.answer is None:
            found["answer"] = (r.kind, response.provider, response.model)
    elif d.answer is None:
        found["answer"] = (r.kind, None, None)
    return found


def _flags(d: RunDigest, r: Record) -> dict[str, Any]:
    overview = read_as(r, Observed).overview
    domains = overview.get("domains") if isinstance(overview, dict) else None
    for entry in domains if isinstance(domains, list) else ():
        if isinstance(entry, dict) and entry.get("domain") == d.domain:
            count = entry.get("open_flags")
            known = isinstance(count, int) and not isinstance(count, bool)
            return {"flags_seen": True, "open_flags": count if known else None}
    return {}


def _granted(d: RunDigest, r: Record) -> dict[str, Any]:
    entry = decode(r)
    assert isinstance(entry, Authorized)
    by, index = str(entry.by or ""), entry.index
    known = any(u.index == index for u in d.uses)
    if not by.startswith("grant:") or not isinstance(index, int) or known:
        return {}
    use = UseRow(
        run_id=r.run_id, index=index, domain=r.domain, at=r.at, operation=str(entry.operation),
        params=dict(entry.params or {}), grant_id=by.removeprefix("grant:"),
    )  # fmt: skip
    return {"uses": (*d.uses, use)}


def _close_use(r: Record, loose: dict[str, RunDigest], late: dict[tuple[str, int], UseRow]) -> None:
    """The first record that closes a write under a grant sets its outcome (as the trace does)."""
    if r.kind not in (*_CLOSED, "settled_by_hand"):
        return
    entry = decode(r)
    if isinstance(entry, Receipt) and entry.late:
        return
    assert isinstance(entry, WriteStep | SettledByHand)
    key = entry.item(r.run_id)
    outcome = _CLOSED.get(r.kind, "closed by hand")
    digest = loose.get(key[0]) if key is not None else None
    if digest is not None:
        uses = tuple(_closed(u, key, outcome) for u in digest.uses)
        loose[digest.run_id] = digest.model_copy(update={"uses": uses})
    elif key in late and late[key].outcome == "open":
        late[key] = late[key].model_copy(update={"outcome": outcome})


def _closed(use: UseRow, key: Any, outcome: str) -> UseRow:
    if (use.run_id, use.index) != key or use.outcome != "open":
        return use
    return use.model_copy(update={"outcome": outcome})


def digests_of(records: Sequence[Record]) -> list[RunDigest]:
    """Every run of `records` as a row, in the order the runs began (any journal, read whole)."""
    loose: dict[str, RunDigest] = {}
    for run_id, run in group_runs(records).items():
        digest: RunDigest | None = None
        for r in run:
            digest = _step(digest, r, None)
        assert digest is not None
        loose[run_id] = digest
    late: dict[tuple[str, int], UseRow] = {}
    for r in records:
        _close_use(r, loose, late)
    return list(loose.values())


def with_late(digest: RunDigest, late: Mapping[tuple[str, int], UseRow]) -> RunDigest:
    """The row with each of its grant uses as the index knows it now."""
    if not digest.uses:
        return digest
    uses = tuple(late.get((u.run_id, u.index), u) for u in digest.uses)
    return digest.model_copy(update={"uses": uses})


def summary_of(d: RunDigest) -> RunSummary:
    """The run as `run_summaries` describes it."""
    if d.finished is not None:
        status, exit_code = str(d.finished.status), d.finished.exit_code
        counts: dict[str, Any] = dict(d.finished.counts or {})
    else:
        status = str(d.person_status) if d.approval else "no finished record"
        exit_code = None
        counts = {k: d.derived.get(k, 0) for k in _COUNTS}
    return RunSummary(
        run_id=d.run_id, domain=d.domain, approval=d.approval, first_seq=d.first_seq,
        last_seq=d.last_seq, records=d.records, started_at=d.started_at, status=status,
        exit_code=exit_code, counts=counts, model=_model(d),
    )  # fmt: skip


def _model(d: RunDigest) -> str | None:
    spec = d.spec if d.started else None
    if d.answer is None or d.answer[0] == "model_failed":
        return spec
    _, provider, model = d.answer
    return f"{spec} ({provider}/{model})" if spec else f"{provider}/{model}"
