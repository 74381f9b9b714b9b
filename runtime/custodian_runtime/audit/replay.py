"""`custodian replay RUN_ID`: today's extraction and authorization on a stored run.

No model call and no write: the stored snapshot and the stored model response go through
today's code and today's configuration (the per-run caps), and every decision that differs
from the recorded one is shown. The approval history is the one recorded with the run: the
queue has moved on since (the run's own proposals are pending in it now), and judging the run
against it would report differences no change of code or limits caused. The modes and grants
are re-derived from the journal's records before the run's plan; where the standing the plan
record kept disagrees (a grant or a use the journal does not record), that is a difference.
A regression check for changes to the limits, the validator or the canon.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TextIO

from custodian_runtime.canon.library import read_canon_dir
from custodian_runtime.core.approvals.history import ApprovalHistory
from custodian_runtime.core.authority.budgets import RecentWrites
from custodian_runtime.core.authority.evidence import Evidence
from custodian_runtime.core.authority.own_writes import OwnWrite
from custodian_runtime.core.contract import DomainSummary, ProgressEvent
from custodian_runtime.core.digest import digest
from custodian_runtime.core.fold import api as core_journal
from custodian_runtime.core.inert import for_terminal
from custodian_runtime.core.journal.cited import changed_since, citation, summary
from custodian_runtime.core.journal.kinds import (
    E,
    GrantRevoked,
    ModelResponse,
    Observed,
    PlanRecord,
    PolicySet,
    PromptRecord,
    RulingRecord,
    RunStarted,
    of_kind,
    read_as,
    with_entry,
)
from custodian_runtime.core.journal.records import parse_at
from custodian_runtime.core.limits import Limits
from custodian_runtime.core.plan.extract import extract_plan
from custodian_runtime.core.ruling.path import Grounds, rule_plan
from custodian_runtime.core.standing.ledger import rederived
from custodian_runtime.core.standing.record import STANDING_KINDS, Standing, standing_of
from custodian_runtime.errors import ConfigError, JournalError, PlanRejected, RunNotFound
from custodian_runtime.journal.reader import JournalReader
from custodian_runtime.journal.snapshots import SnapshotStore, observed_summary
from custodian_runtime.journal.store import JournalStore
from custodian_runtime.settings import Settings


@dataclass(frozen=True)
class Difference:
    """One item whose decision today differs from the recorded one."""

    index: int
    operation: str
    recorded: str
    today: str


def find_run(store: JournalStore, run_id: str) -> list[core_journal.Record]:
    """The records of `run_id`, from whichever domain's journal holds it."""
    reader = JournalReader(store.memory_dir, seal_key=store.seal_key)
    domain = reader.find_run(run_id)
    if domain is not None:
        snapshots = SnapshotStore(store.memory_dir)
        return [_inline(r, snapshots) for r in reader.run_records(domain, run_id)]
    raise RunNotFound(
        f"no run {run_id!r} in any journal under {store.journal_dir}; "
        "`custodian inspect` lists the runs"
    )


def _inline(record: core_journal.Record, snapshots: SnapshotStore) -> core_journal.Record:
    """An `observed` record with its snapshot loaded by digest into `summary`."""
    if record.kind != "observed":
        return record
    seen = read_as(record, Observed)
    if seen.summary is not None:
        return record
    summary = observed_summary(snapshots, record.domain, seen)
    return with_entry(record, seen.model_copy(update={"summary": summary}))


def _first(records: Sequence[core_journal.Record], model: type[E]) -> E | None:
    return next((entry for _, entry in of_kind(records, model)), None)


def limits_of(settings: Settings) -> Limits:
    """The caps configured today."""
    return settings.limits


def compare(
    records: Sequence[core_journal.Record],
    limits: Limits,
    standing: Sequence[core_journal.Record] = (),
) -> tuple[list[Difference], str]:
    """Re-decide the stored run under `limits`; return the differences and a verdict.

    `standing` are the domain's modes, grants and uses records, from which the standing the run
    ruled with is re-derived.
    """
    observed, response = _first(records, Observed), _first(records, ModelResponse)
    if observed is None or response is None:
        raise JournalError("this run stored no observation or no model response: nothing to replay")
    plan_record = _first(records, PlanRecord) or PlanRecord()
    recorded = {ruling.index: ruling for _, ruling in of_kind(records, RulingRecord)}
    try:
        plan = extract_plan(
            str(response.text), limits.max_plan_items, bare=bool(response.structured)
        )
    except PlanRejected as exc:
        if plan_record.status == "rejected":
            return [], f"plan rejected, as recorded: {exc.message}"
        return [Difference(-1, "plan", "accepted", f"rejected: {exc.message}")], "plan now rejected"
    if plan_record.status == "rejected":
        return [Difference(-1, "plan", "rejected", "accepted")], "plan now accepted"
    grounds = Grounds(
        limits,
        ApprovalHistory.from_record(plan_record.history or {}),
        _evidence(observed, plan_record),
        _recent_of(plan_record),
        unavailable=dict(plan_record.unavailable or {}),
    )
    grounds, differences = _with_standing(grounds, records, standing)
    rulings = rule_plan(plan, DomainSummary.model_validate(observed.summary), grounds)
    for ruling in rulings:
        was = recorded.get(ruling.item.index)
        then = f"{was.outcome}: {in_todays_words(was.reason)}" if was else "no ruling recorded"
        now = f"{ruling.outcome}: {ruling.reason}"
        if then != now:
            differences.append(Difference(ruling.item.index, ruling.item.operation, then, now))
    return differences, f"plan accepted, {len(rulings)} item(s) re-decided"


# Older words of a ruling that say the same decision: a grant's write was "executes: executed
# (grant G), issued by …" before it was "executes under grant G, issued by …".
_OLDER_WORDS = ((re.compile(r" executes: executed \(grant ([^)\s]+)\), issued by "),
                 r" executes under grant \1, issued by "),)  # fmt: skip


def in_todays_words(reason: str | None) -> str | None:
    """A recorded ruling's sentence in today's words, so that a rewording is no difference."""
    if reason is None:
        return None
    for older, today in _OLDER_WORDS:
        reason = older.sub(today, reason)
    return reason


def _with_standing(
    grounds: Grounds,
    records: Sequence[core_journal.Record],
    standing: Sequence[core_journal.Record],
) -> tuple[Grounds, list[Difference]]:
    """The grounds with the journal's modes and grants before the plan (and what a person kept
    while the run had the domain's lock, journaled after it), and a difference for each way the
    standing the plan record kept disagrees with them."""
    planned = next((r for r in records if r.kind == PlanRecord.KIND), None)
    plan_record = read_as(planned, PlanRecord) if planned is not None else PlanRecord()
    kept = plan_record.standing
    if planned is None or kept is None or plan_record.ruled_at is None:
        return grounds, []
    before = [r for r in standing if r.seq < planned.seq]
    after = [r for r in standing if r.seq > planned.seq]
    later = frozenset(str(e.grant_id) for _, e in of_kind(after, GrantRevoked))
    set_later = [e for _, e in of_kind(after, PolicySet)]
    derived, disagree = rederived(Standing.from_record(kept), standing_of(before), later,
                                  set_later)  # fmt: skip
    hub_id = kept.get("hub_id")
    hub = None if hub_id is None else str(hub_id)
    ruled = replace(grounds, standing=derived, hub_id=hub, now=parse_at(plan_record.ruled_at))
    return ruled, [Difference(-1, "standing", "kept in the plan record", d) for d in disagree]


def _standing_records(
    store: JournalStore, records: Sequence[core_journal.Record]
) -> list[core_journal.Record]:
    """The domain's modes, grants and uses, as its checkpoint keeps every one of them."""
    if not records:
        return []
    history = store.open(records[0].domain, repair=False).history
    return [r for r in history if r.kind in STANDING_KINDS]


def _evidence(observed: Observed, plan_record: PlanRecord) -> Evidence:
    """The evidence the run ruled with: its summary, the events it fetched, its own receipts."""
    kept = plan_record.evidence or {}
    fetched = [ProgressEvent.model_validate(e) for e in kept.get("fetched", [])]
    summary = DomainSummary.model_validate(observed.summary)
    return Evidence.of(summary, fetched, kept.get("own_ids", []), kept.get("read_tasks", []))


def _recent_of(plan_record: PlanRecord) -> RecentWrites | None:
    """The own writes the run ruled with; None for a run from before they were kept."""
    if plan_record.ruled_at is None:
        return None
    writes = tuple(OwnWrite.model_validate(w) for w in plan_record.recent_writes or ())
    return RecentWrites(parse_at(plan_record.ruled_at), writes)


def replay_command(settings: Settings, run_id: str, out: TextIO, *, as_json: bool = False) -> int:
    """Print how today's code decides the stored run; exit 1 if any decision differs."""
    store = JournalStore(settings.memory_dir, seal_key=settings.seal_key)
    records = find_run(store, run_id)
    limits = limits_of(settings)
    differences, verdict = compare(records, limits, _standing_records(store, records))
    notes = {
        "constitution": _canon_note(settings, records),
        "policy": _limits_note(records, limits),
        "canon": _cited_note(settings, records),
    }
    if as_json:
        shown = [d.__dict__ for d in differences]
        report = {"run_id": run_id, "verdict": verdict, **notes, "differences": shown}
        out.write(json.dumps(report, indent=2) + "\n")
    else:
        _write_text(out, run_id, verdict, notes, differences)
    return 0 if not differences else 1


def _cited_note(settings: Settings, records: Sequence[core_journal.Record]) -> str | None:
    """Whether the canon the run was shown (its prompt record's citations) is still the canon;
    None for a run from before prompts cited it."""
    prompt = _first(records, PromptRecord)
    if prompt is None or not prompt.canon:
        return None
    try:
        files = read_canon_dir(settings.canon_dir).files
    except ConfigError as exc:
        return f"not readable now ({exc})"
    changed = changed_since(prompt.canon, files)
    if not changed:
        return f"as shown ({summary(prompt.canon, prompt.canon_sections)})"
    listed = ", ".join(citation(c) for c in changed)
    return f"{len(changed)} of {len(prompt.canon)} piece(s) changed since the run: {listed}"


def _limits_note(records: Sequence[core_journal.Record], limits: Limits) -> str:
    recorded = (_first(records, PlanRecord) or PlanRecord()).policy
    today = dict(limits.__dict__)
    if recorded is not None:  # a limit added since the run counts as unchanged at its default
        added = {k: v for k, v in today.items() if k not in recorded}
        recorded = {**{k: v for k, v in added.items() if v == getattr(Limits(), k)}, **recorded}
    return (
        "unchanged" if recorded in (None, today) else f"changed: recorded {recorded}, today {today}"
    )


def _canon_note(settings: Settings, records: Sequence[core_journal.Record]) -> str:
    started = _first(records, RunStarted) or RunStarted()
    constitution = settings.canon_dir / "constitution.md"
    today = digest(constitution.read_text("utf-8")) if constitution.is_file() else None
    return "unchanged" if today == started.constitution_digest else "changed since the run"


def _write_text(
    out: TextIO,
    run_id: str,
    verdict: str,
    notes: dict[str, str | None],
    differences: list[Difference],
) -> None:
    head = (
        f"replay {run_id}: {verdict}; constitution {notes['constitution']}; "
        f"policy {notes['policy']}" + (f"; canon {notes['canon']}" if notes["canon"] else "")
    )
    out.write(for_terminal(head) + "\n")
    for d in differences:
        # Journal text is untrusted: each field stays on its line, controls shown escaped.
        out.write(
            f"  item {d.index} {for_terminal(str(d.operation))}\n"
            f"    recorded: {for_terminal(str(d.recorded))}\n"
            f"    today:    {for_terminal(str(d.today))}\n"
        )
    done = "same decisions" if not differences else f"{len(differences)} decision(s) differ"
    out.write(f"replay: {done}\n")
