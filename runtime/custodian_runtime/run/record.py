"""Record: the session note a person reads after a run."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from custodian_runtime.core.authority.authorize import Ruling
from custodian_runtime.core.authority.holds import HELD
from custodian_runtime.core.fold.late_landings import FOUND_LATE, SAME_VALUE
from custodian_runtime.core.inert import code_span
from custodian_runtime.core.journal.cited import citation, summary
from custodian_runtime.core.journal.continuity import note_data
from custodian_runtime.core.operations import status_writes
from custodian_runtime.core.outcomes import ItemOutcome
from custodian_runtime.core.plan.extract import ProposedItem
from custodian_runtime.core.presentation import display
from custodian_runtime.core.presentation.note_outcomes import (
    WAITING_KEY,
    earlier_section,
    still_waiting,
)
from custodian_runtime.core.standing.rule import WOULD
from custodian_runtime.notes.store import write_note
from custodian_runtime.render.note import NoteAction, SessionNote, render_note
from custodian_runtime.run._context import RunContext
from custodian_runtime.run._result import RunSoFar

HEADLINES = {
    "completed": "The run completed.",
    "partial": "The run completed, but some authorized writes failed; the next run retries none "
    "of them on its own (see Actions).",
    "interrupted": "The run was stopped before it finished; writes not yet sent were not sent.",
    "rejected": "The model's answer could not be used as a plan; nothing was written to the hub.",
    "failed": "The run failed before it could act; nothing was written to the hub.",
}


@dataclass(frozen=True)
class _Seen:
    """What the note names from the observed domain."""

    titles: Mapping[str, str]
    statuses: Mapping[str, str]
    said: Mapping[str, str]

    @classmethod
    def of(cls, known: RunSoFar) -> _Seen:
        """From the run's observation (empty when the run saw none)."""
        summary = known.seen
        if summary is None:
            return cls(known.titles, {}, {})
        return cls(known.titles, display.statuses(summary), display.event_summaries(summary))

    def detail(self, item: ProposedItem) -> str:
        """What the item says: a status change from → to with what each cited event says."""
        if item.operation in status_writes():
            before = self.statuses.get(str(item.params.get("task_id")))
            return display.status_change(item.operation, item.params, before, self.said)
        return display.content(item.operation, item.params)


def _actions(
    outcomes: Sequence[ItemOutcome], rulings: Sequence[Ruling], seen: _Seen
) -> list[NoteAction]:
    """One note entry per outcome, matched to its ruling by plan item index."""
    by_index = {r.item.index: r for r in rulings}
    return [_action(o, by_index.get(o.index), seen) for o in outcomes]


def _action(o: ItemOutcome, ruling: Ruling | None, seen: _Seen) -> NoteAction:
    # Only what this item adds: the sentence every executed or ordinary queued item gets is left
    # out (it stays in --json and the journal); a denial says why, a queued item why it was asked.
    said, result = display.why(o), None
    reason = None if said is None else f"**Why:** {said}"
    if o.kind == "executed" and o.hub_id != o.target:
        result = f"hub id {code_span(o.hub_id or '-')}"
    elif o.kind == "queued":
        result = f"approval {code_span(o.approval_id or '-')}"
        reason = f"**Waits because:** {o.waiting}" if o.waiting else reason
    elif o.kind in ("failed", "unknown"):
        result = o.error
    elif o.kind == "stale":
        # The ruling's sentence describes a change that did not happen; say what did.
        why = o.error or "the task changed under the run"
        reason = why[:1].upper() + why[1:].rstrip(".") + "."
        result = f"the hub shows {code_span(o.current_status or 'unknown')}"
    item = ruling.item if ruling is not None else None
    return NoteAction(
        outcome="held" if o.code == HELD else o.kind,
        operation=o.operation,
        target=o.target or "",
        detail=seen.detail(item) if item is not None else "",
        reason=reason or "",
        result=result,
        title=seen.titles.get(o.target or ""),
        rationale=item.reason if item is not None and o.kind in _ASKED else None,
    )


# Outcomes whose entry shows the model's rationale: a person decides on it.
_ASKED = frozenset({"queued", "would_queue"})


@dataclass(frozen=True)
class NoteParts:
    """What the note says beyond the run's facts: the plan, or the problem that ended the run."""

    prose: str = ""
    rulings: Sequence[Ruling] = ()
    observations: Sequence[str] = ()
    problem: str | None = None
    raw: str | None = None


@dataclass(frozen=True)
class NoteWritten:
    """The session note a run wrote."""

    path: Path
    sha256: str


def record(ctx: RunContext, known: RunSoFar, status: str, parts: NoteParts) -> NoteWritten:
    """Write the session note and journal it (`note_written`)."""
    finished_at = ctx.now()
    path = write_session_note(ctx, known, status, finished_at, parts)
    written = NoteWritten(path, file_sha256(path))
    data = note_data(path.name, written.sha256, status, parts.prose, parts.problem)
    ctx.journal.write(data)
    return written


def write_session_note(
    ctx: RunContext, known: RunSoFar, status: str, finished_at: datetime, parts: NoteParts
) -> Path:
    """Write `memory/working/<UTC timestamp>-<domain>.md` atomically; return its path."""
    started_at = ctx.started_at
    front = {
        "run_id": known.run_id,
        "domain": known.domain,
        "status": status,
        "started_at": _ts(started_at),
        "finished_at": _ts(finished_at),
        "hub": known.hub,
        "model_spec": known.model_spec,
        "model": known.model,
        "input_tokens": known.usage.get("input_tokens"),
        "output_tokens": known.usage.get("output_tokens"),
        "cost_usd": known.usage.get("cost_usd"),
        "counts": known.counts(),
        # What became of each item: the next run's prompt shows these facts, not the prose.
        "actions": [
            ["held" if o.code == HELD else o.kind, o.operation, o.target] for o in known.outcomes
        ],
        "omitted": dict(known.omitted),
        "modes": dict(known.modes),
        # Earlier items still waiting: the next run's note says what became of them.
        WAITING_KEY: still_waiting(known.earlier),
    }
    note = SessionNote(
        run_id=known.run_id,
        domain=known.domain,
        status=status,
        started_at=started_at,
        finished_at=finished_at,
        headline=HEADLINES.get(status, status),
        front=front,
        prose=parts.prose,
        actions=_actions(known.outcomes, parts.rulings, _Seen.of(known)),
        observations=list(parts.observations),
        problem=parts.problem,
        raw_response=parts.raw,
        shadow=_matched_text(known.shadow_matched),
        narrowed="\n".join(f"- {line}" for line in known.narrowed) or None,
        canon=tuple(citation(c) for c in known.canon),
        canon_head=_canon_head(known),
        earlier=earlier_section(known.earlier),
    )
    return write_note(ctx.memory_dir / "working", note.domain, started_at, render_note(note))


def _canon_head(known: RunSoFar) -> str | None:
    if not known.canon:
        return None
    shown = summary(known.canon, known.canon_sections)
    return f"What of the canon the model was shown ({shown}), each with the SHA-256 of its text:"


_RECONCILED = {
    "found": "was found on the hub ({hub_id}) and closed without being written again",
    "resent": "was re-sent with its original key ({hub_id})",
    "refused": "was {reason}; closed, and never retried",
    "expired": "was {reason}; closed",
    "stale": "was {reason}; closed as stale, and the next plan decides",
}


def reconcile_text(reports: Sequence[Mapping[str, Any]]) -> str | None:
    """What the run did with writes a killed run left open, for the note (None if nothing)."""
    late = [r for r in reports if r["outcome"] == FOUND_LATE]
    same = [r for r in reports if r["outcome"] == SAME_VALUE]
    left = [r for r in reports if r["outcome"] not in (FOUND_LATE, SAME_VALUE)]
    texts = (_left_open_text(left), _late_text(late), _same_text(same))
    return "\n\n".join(text for text in texts if text) or None


def _late_text(reports: Sequence[Mapping[str, Any]]) -> str | None:
    """Closed writes the hub shows landed anyway: each is for a person to check."""
    if not reports:
        return None
    lines = ["Writes closed earlier that landed anyway (a person should check each):", ""]
    for r in reports:
        lines.append(
            f"- `{r['operation']}` (item #{r['index']} of run `{r['run']}`) was closed "
            f"({r['closed']}) at {r['closed_at']}, but the hub shows it landed as "
            f"`{r['hub_id']}`."
        )
    return "\n".join(lines)


def _same_text(reports: Sequence[Mapping[str, Any]]) -> str | None:
    """Closed writes whose value the hub shows, not proven theirs: a person's decision stands."""
    if not reports:
        return None
    lines = ["Writes closed earlier whose value the hub now shows, not made by them:", ""]
    for r in reports:
        who = "set by someone else" if r.get("by_other") else "and nothing proves this write set it"
        lines.append(
            f"- `{r['operation']}` (item #{r['index']} of run `{r['run']}`) was closed "
            f"({r['closed']}) at {r['closed_at']}; the hub now shows the same value on "
            f"`{r['hub_id']}`, {who} ({r['reason']}). It is not recorded as landed, and a "
            "person's decision on it stands."
        )
    return "\n".join(lines)


def _matched_text(reports: Sequence[Mapping[str, Any]]) -> str | None:
    """Shadow items of earlier runs a person has since made on the hub (None if none)."""
    if not reports:
        return None
    lines = ["Kept back by shadow mode, then made on the hub by a person (`policy report`):", ""]
    for r in reports:
        lines.append(
            f"- `{r['operation']}` (item #{r['index']} of run `{r['run']}`, it "
            f"{WOULD.get(str(r['would']), 'was kept back')}): the hub shows it as `{r['hub_id']}`."
        )
    return "\n".join(lines)


def _left_open_text(reports: Sequence[Mapping[str, Any]]) -> str | None:
    if not reports:
        return None
    lines = ["Writes left open by an earlier run:", ""]
    for r in reports:
        what = _RECONCILED.get(r["outcome"], "{reason}").format(
            hub_id=r.get("hub_id"), reason=r.get("reason")
        )
        line = f"- `{r['operation']}` (item #{r['index']} of run `{r['run']}`) {what}"
        if r["outcome"] == "expired":
            flag = r.get("flag")
            line += f"; flagged for a person as `{flag}`" if flag else "; check it by hand"
        lines.append(line + ".")
    return "\n".join(lines)


def file_sha256(path: Path) -> str:
    """SHA-256 of a file's bytes."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _ts(value: datetime) -> str:
    return value.isoformat().replace("+00:00", "Z")
