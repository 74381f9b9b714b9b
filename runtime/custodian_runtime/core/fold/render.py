"""The court record: one run replayed from the journal as lines a person can read and check."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from custodian_runtime.core.digest import canonical_json
from custodian_runtime.core.fold.runs import RunSummary, counts_text, run_summaries
from custodian_runtime.core.journal.cited import citation, summary
from custodian_runtime.core.journal.kinds import (
    ApprovalDecided,
    Dispatched,
    Entry,
    Failed,
    Finished,
    LandingProbe,
    ModelFailed,
    ModelResponse,
    NoteWritten,
    Observed,
    PlanRecord,
    PromptRecord,
    Queued,
    Receipt,
    Reconciled,
    RecordDataError,
    RulingRecord,
    SameValue,
    SettledByHand,
    Shadowed,
    ShadowMatched,
    Stale,
    Unknown,
    WriteStep,
    decode,
    of_kind,
)
from custodian_runtime.core.journal.records import SCHEMA_VERSION, Problem, Record, verify_chain
from custodian_runtime.core.journal.seal_key import UNSEALED as UNSEALED
from custodian_runtime.core.journal.seals import SealKey, seals_seen, verify_seals
from custodian_runtime.core.ruling.spine import verify_spine
from custodian_runtime.core.ruling.trace import ItemTrace, trace_items


@dataclass(frozen=True)
class _Court:
    """What every part of the court record needs: item traces, queued records, problems."""

    items: dict[Any, ItemTrace]
    queued: dict[Any, tuple[Record, Queued]]
    problems: Sequence[str]


def _short(value: Any, width: int = 12) -> str:
    text = str(value)
    return text if len(text) <= width else text[:width] + "…"


def replay_problems(
    records: Sequence[Record], extra: Sequence[str] = (), seal_key: SealKey | None = None
) -> list[str]:
    """Everything wrong with a domain journal: store damage first, then chain, seals, spine."""
    found = [*verify_chain(records), *verify_spine(records)]
    if seal_key is not None:
        found.extend(verify_seals(records, seal_key))
    return [*extra, *(str(p) for p in sorted(found, key=lambda p: p.seq))]


def replay_lines(problems: Sequence[str]) -> list[str]:
    """`replay: ok`, or a count followed by one line per problem."""
    if not problems:
        return ["replay: ok"]
    return [f"replay: FAILED, {len(problems)} problem(s):", *(f"  {p}" for p in problems)]


def render_run(
    records: Sequence[Record],
    run_id: str,
    extra_problems: Sequence[str] = (),
    seal_key: SealKey | None = None,
) -> list[str]:
    """The court record of `run_id` within its domain journal, ending with the replay verdict."""
    if not records:
        return [f"no run {run_id} in this journal", *replay_lines(["run not found"])]
    problems = replay_problems(records, extra_problems, seal_key)
    seals = seal_lines(records, seal_key)
    return court_record(records, run_id, problems, (len(records), records[-1].ref), seals)


def court_record(
    context: Sequence[Record],
    run_id: str,
    problems: Sequence[str],
    totals: tuple[int, str],
    seals: Sequence[str] = (),
) -> list[str]:
    """The court record of `run_id` from the records around it and the domain's verdict.

    `context` holds the run and what its items need (the journal's checkpoint before it and the
    runs after it); `problems`, `totals` (record count, last record) and the `seals` lines are
    of the whole domain.
    """
    run = [r for r in context if r.run_id == run_id]
    if not run:
        return [f"no run {run_id} in this journal", *replay_lines(["run not found"])]
    summary = next(s for s in run_summaries(context) if s.run_id == run_id)
    queued = {(r.run_id, q.index): (r, q) for r, q in of_kind(run, Queued)}
    ctx = _Court(trace_items(context), queued, list(problems))
    lines = _header(summary, totals)
    lines[-1:-1] = seals
    for record in run:
        lines.extend(_render_record(record, ctx))
    return [*lines, *replay_lines(problems)]


def _header(summary: RunSummary, totals: tuple[int, str]) -> list[str]:
    exit_code = "" if summary.exit_code is None else f" (exit {summary.exit_code})"
    counts = counts_text(summary.counts)
    count, last = totals
    return [
        f"run       {summary.run_id}",
        f"domain    {summary.domain}",
        f"status    {summary.status}{exit_code}",
        f"model     {summary.model or '-'}",
        f"counts    {counts or '-'}",
        f"started   {summary.started_at}",
        f"journal   {summary.records} record(s) in this run "
        f"({summary.domain}:{summary.first_seq} … {summary.domain}:{summary.last_seq}); "
        f"{count} in the domain, schema v{SCHEMA_VERSION}, last {last}",
        "",
    ]


# Said once by every run and by `inspect` when no seal key is set (docs/operator.md, Seals).


def seal_lines(records: Sequence[Record], seal_key: SealKey | None) -> list[str]:
    """Whether the domain's seals verified; nothing when no record is sealed and no key is set."""
    bad = verify_seals(records, seal_key) if seal_key is not None else []
    return seal_summary(len(records), seals_seen(records), bad, keyed=seal_key is not None)


def seal_summary(total: int, sealed: int, bad: Sequence[Problem], *, keyed: bool) -> list[str]:
    """The `seals` line of a court record from counts over the whole domain."""
    if not keyed:
        if not sealed:
            return [f"seals     unsealed: {UNSEALED}"]
        return [
            f"seals     not checked: {sealed} of {total} record(s) sealed, "
            "CUSTODIAN_SEAL_KEY is not set"
        ]
    if not bad:
        return [f"seals     verified: all {total} record(s) in the domain"]
    return [
        f"seals     FAILED: {len(bad)} of {total} record(s) without a valid seal, "
        f"first {bad[0].seq} ({bad[0].kind})"
    ]


def _render_record(record: Record, ctx: _Court) -> list[str]:
    try:
        entry = decode(record)
    except RecordDataError as exc:
        return [f"{record.kind:<14} at {record.ref}: {exc}"]
    if isinstance(entry, RulingRecord):
        return _render_ruling(record, entry, ctx)
    if isinstance(entry, Reconciled):
        item = ctx.items.get(entry.item(record.run_id) or ("", None))
        head = (
            f"reconciled at {record.ref}: item #{entry.index} of run "
            f"{entry.run_id_of_the_interrupted_run} key={entry.idempotency_key}"
        )
        if entry.action:
            head += f" {entry.action}: {entry.reason}"
        return [head, *_item_lines(item, record, ctx.problems), ""]
    if isinstance(entry, ApprovalDecided):
        return _render_approval(record, entry, ctx)
    if isinstance(entry, Receipt) and entry.late:
        return [
            f"FOUND LATE at {record.ref}: item #{entry.index} of run {entry.reconciles}, closed "
            f"({entry.late}) earlier, landed as {entry.hub_id}; for a person to check",
            "",
        ]
    if isinstance(entry, SameValue):
        return [
            f"SAME VALUE at {record.ref}: item #{entry.index} of run {entry.reconciles}, closed "
            f"({entry.closed}) earlier; the hub shows its value on {entry.hub_id}, not made by "
            f"it: {entry.reason}",
            "",
        ]
    return _simple_line(record, entry)


def _simple_line(record: Record, entry: Entry) -> list[str]:
    text = _simple_text(entry)
    if text is None:
        return []
    return [f"{record.kind:<14} at {record.ref}: {text}", *_kept_answer(entry), *_canon(entry)]


SHOWN_ANSWER_LINES = 200  # of a kept answer, in the court record; the journal keeps the rest


def _canon(entry: Entry) -> list[str]:
    """What of the canon a prompt showed, one piece a line (core/journal/cited.py)."""
    if not isinstance(entry, PromptRecord) or not entry.canon:
        return []
    return [f"  canon {citation(c)}" for c in entry.canon]


def _kept_answer(entry: Entry) -> list[str]:
    """The answer a failed call kept (cut off, refused), line by line, for a person to debug."""
    if not isinstance(entry, ModelFailed) or not entry.answer:
        return []
    lines = entry.answer.splitlines()
    whole = entry.answer_chars or len(entry.answer)
    head = f"  the answer it gave ({whole} characters"
    head += f", the first {len(entry.answer)} kept):" if entry.answer_chars else "):"
    shown = [f"  | {line}" for line in lines[:SHOWN_ANSWER_LINES]]
    more = len(lines) - SHOWN_ANSWER_LINES
    tail = [f"  ({more} more lines in the journal's model_failed record)"] if more > 0 else []
    return [head, *shown, *tail]


def _simple_text(e: Entry) -> str | None:
    if isinstance(e, Observed):
        return f"state sha256={_short(e.state_digest)}"
    if isinstance(e, PromptRecord):
        shown = f"; canon {summary(e.canon, e.canon_sections)}" if e.canon else ""
        return f"about {e.estimated_tokens} token(s){shown}"
    if isinstance(e, ModelResponse):
        return _usage(e)
    if isinstance(e, ModelFailed):
        return f"{e.provider} failed: {e.error}"
    if isinstance(e, PlanRecord):
        return f"accepted, {e.items} item(s)" if e.status == "accepted" else f"rejected: {e.reason}"
    if isinstance(e, NoteWritten):
        return f"{e.path} sha256={_short(e.sha256)}"
    if isinstance(e, Finished):
        return _finished(e)
    if isinstance(e, SettledByHand):
        return (
            f"item #{e.index} of run {e.run_id_of_the_open_write} closed by "
            f"hand by {e.by}: {e.reason}"
        )
    return _shadow_text(e)


def _shadow_text(e: Entry) -> str | None:
    if isinstance(e, Shadowed):
        return f"item #{e.index} ({e.operation}) shadowed: it would {e.would}, nothing was done"
    if isinstance(e, ShadowMatched):
        return f"a person made {e.operation} of {e.shadow} on the hub, as {e.hub_id}"
    return None


def _finished(data: Finished) -> str:
    if data.closed_by:
        return f"{data.status} (closed by run {data.closed_by})"
    return f"{data.status} exit {data.exit_code}"


def _usage(data: ModelResponse) -> str:
    usage = data.usage or {}
    tokens_in, tokens_out = usage.get("input_tokens"), usage.get("output_tokens")
    parts = [f"{data.provider}/{data.model}"]
    if tokens_in is None and tokens_out is None:
        parts.append("usage not reported")
    else:
        parts.append(f"{_or_unknown(tokens_in)} in / {_or_unknown(tokens_out)} out")
    if usage.get("cost_usd") is not None:
        parts.append(f"${usage['cost_usd']}")
    if data.request_id:
        parts.append(f"request {data.request_id}")
    return ", ".join(parts)


def _or_unknown(value: Any) -> str:
    return "?" if value is None else str(value)


def _render_ruling(ruling: Record, data: RulingRecord, ctx: _Court) -> list[str]:
    lines = [
        f"request {ruling.ref} #{data.index} {data.operation} "
        f"target={data.target} fingerprint={_short(data.fingerprint)}"
    ]
    outcome, reason = data.outcome, data.reason
    if outcome == "deny":
        lines.append(f"  DENIED at {ruling.ref}: {reason} (no execution, no receipt)")
    elif outcome == "queue":
        queued = ctx.queued.get((ruling.run_id, data.index))
        approval = (
            f"approval {queued[1].approval_id} at {queued[0].ref}"
            if queued is not None
            else "no queued record"
        )
        lines.append(f"  QUEUED at {ruling.ref}: {str(reason).rstrip('.')}; {approval}")
    else:
        lines.append(f"  ruled execute at {ruling.ref}: {reason}")
        item = ctx.items.get((ruling.run_id, data.index))
        lines.extend(_item_lines(item, ruling, ctx.problems))
    return [*lines, ""]


def _render_approval(decided: Record, data: ApprovalDecided, ctx: _Court) -> list[str]:
    # An approval carries a note only when the person gave one: none is said, not `None`.
    said = f": {data.reason}" if data.reason else ""
    lines = [f"approval {data.approval_id} at {decided.ref}: {data.decision} by {data.by}{said}"]
    for (run_id, _), item in ctx.items.items():
        if run_id == decided.run_id:
            lines.extend(_item_lines(item, decided, ctx.problems))
    return [*lines, ""]


def _item_lines(item: ItemTrace | None, start: Record, problems: Sequence[str]) -> list[str]:
    if item is None:
        return ["  not authorized (the run stopped before acting on it)"]
    auth = item.authorized
    lines = [
        f"  authorized at {auth.ref} by {item.grant.by} key={item.key} "
        f"params={_short(canonical_json(item.grant.params), 60)}"
    ]
    for step in item.steps:
        lines.extend(_step_lines(step))
    chain = [start, auth, *item.steps] if start.seq < auth.seq else [auth, *item.steps]
    lines.append(
        "    chain: " + " → ".join(r.ref for r in chain) + " " + _verdict(item, chain, problems)
    )
    return lines


def _step_lines(step: Record) -> list[str]:
    entry = decode(step)
    if isinstance(entry, Reconciled):
        return [f"  reconciled at {step.ref} by run {step.run_id}"]
    if isinstance(entry, SettledByHand):
        return [
            f"  CLOSED BY HAND at {step.ref} by {entry.by}: {entry.reason} "
            "(whether it landed is for that person to know)"
        ]
    if not isinstance(entry, WriteStep):
        return []
    for_run = f" (for run {entry.reconciles})" if entry.reconciles else ""
    return _write_step_lines(step, entry, for_run)


def _receipt_lines(step: Record, e: Receipt, for_run: str) -> list[str]:
    if e.path is not None:
        # A canon write's receipt: a file was written in the canon; no hub answered.
        return [
            f"  receipt at {step.ref}{for_run}: the canon file {e.path} was written",
            f"    effect: content sha256={_short(e.response_sha256)}",
        ]
    replayed = "yes" if e.replayed else "no"
    return [
        f"  receipt at {step.ref}{for_run}: status {e.status_code}, attempts {e.attempts}",
        f"    effect: hub_id={e.hub_id} replayed={replayed} "
        f"response sha256={_short(e.response_sha256)}",
    ]


def _write_step_lines(step: Record, e: WriteStep, for_run: str) -> list[str]:
    if isinstance(e, Dispatched):
        return [f"  dispatched at {step.ref}{for_run}"]
    if isinstance(e, Receipt) and e.found_on_hub:
        late = f" (after it was closed: {e.late})" if e.late else ""
        proven = ", proven: the hub replayed its key" if e.replayed else ""
        return [f"  receipt at {step.ref}{for_run}: found on the hub as {e.hub_id}{late}{proven}"]
    if isinstance(e, LandingProbe):
        return [f"  PROBED at {step.ref}{for_run}: its key re-sent with If-Match {e.if_match}"]
    if isinstance(e, SameValue):
        who = "set by someone else" if e.by_other else "not proven to be this write's"
        return [f"  SAME VALUE at {step.ref}{for_run}: the hub shows {e.hub_id} as it, {who}"]
    if isinstance(e, Failed) and e.closed:
        return [f"  CLOSED ({e.closed}) at {step.ref}{for_run}: {e.error}"]
    if isinstance(e, Receipt):
        return _receipt_lines(step, e, for_run)
    if isinstance(e, Stale):
        return [f"  STALE at {step.ref}{for_run}: {e.error} (nothing written)"]
    if isinstance(e, Unknown):
        return [f"  UNKNOWN at {step.ref}{for_run}: {e.error}"]
    if isinstance(e, Failed):
        return [f"  FAILED at {step.ref}{for_run}: {e.error} (status {e.status}, code {e.code})"]
    return []


def _verdict(item: ItemTrace, chain: Sequence[Record], problems: Sequence[str]) -> str:
    named = {f"record {r.seq} (" for r in chain}
    if item.outcome is None:
        return "INCOMPLETE (no receipt)"
    if any(p.startswith(tuple(named)) for p in problems):
        return "BROKEN (see the problems below)"
    if any(a.seq >= b.seq for a, b in itertools.pairwise(chain)):
        return "OUT OF ORDER"
    return "ordered ok"
