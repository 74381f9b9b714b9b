"""Record: the session note a person reads after a run."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import TextIO

from custodian.core.authority import Ruling
from custodian.memory.notes import NoteAction, SessionNote, write_note
from custodian.orient import Orientation
from custodian.runlog import ActionLine, RunResult
from custodian.settings import Settings

HEADLINES = {
    "completed": "The run completed.",
    "partial": "The run completed, but some authorized writes failed; the next run retries none "
    "of them on its own (see Actions).",
    "interrupted": "The run was stopped before it finished; writes not yet sent were not sent.",
    "rejected": "The model's answer could not be used as a plan; nothing was written to the hub.",
    "failed": "The run failed before it could act; nothing was written to the hub.",
}


def _actions(result: RunResult, rulings: Sequence[Ruling]) -> list[NoteAction]:
    executed = {(a.operation, a.target): a for a in result.executed}
    failed = {(a.operation, a.target): a for a in result.failed}
    queued = {(a.operation, a.target): a for a in result.queued}
    actions = []
    for r in rulings:
        key = (r.item.operation, r.item.target)
        outcome, outcome_result = _outcome(r, key, executed, failed, queued)
        actions.append(
            NoteAction(
                outcome=outcome,
                operation=r.item.operation,
                target=r.item.target or "-",
                detail=_detail(r),
                reason=r.reason,
                result=outcome_result,
            )
        )
    return actions


def _outcome(
    r: Ruling,
    key: tuple[str, str | None],
    executed: dict[tuple[str, str | None], ActionLine],
    failed: dict[tuple[str, str | None], ActionLine],
    queued: dict[tuple[str, str | None], ActionLine],
) -> tuple[str, str | None]:
    if r.outcome == "deny":
        return "denied", None
    if r.outcome == "queue":
        q = queued.get(key)
        return "queued", f"approval `{q.approval_id}`" if q else None
    if key in executed:
        return "executed", f"hub id `{executed[key].hub_id}`"
    if key in failed:
        return "failed", failed[key].reason
    return "not_sent", None


def _detail(r: Ruling) -> str:
    p = r.item.params
    for field in ("status", "summary", "note", "title", "resolution", "path"):
        if field in p and isinstance(p[field], str):
            text = p[field].replace("\n", " ")
            return f"{field} “{text[:200]}”" if field != "status" else f"status → {text}"
    return ""


def write_session_note(
    settings: Settings,
    result: RunResult,
    started_at: datetime,
    finished_at: datetime,
    status: str,
    *,
    prose: str = "",
    rulings: Sequence[Ruling] = (),
    observations: Sequence[str] = (),
    problem: str | None = None,
    raw: str | None = None,
) -> Path:
    """Write `memory/working/<UTC timestamp>-<domain>.md` atomically; return its path."""
    counts = {
        "executed": len(result.executed),
        "queued": len(result.queued),
        "denied": len(result.denied),
        "failed": len(result.failed),
    }
    front = {
        "run_id": result.run_id,
        "domain": result.domain,
        "status": status,
        "started_at": _ts(started_at),
        "finished_at": _ts(finished_at),
        "hub": result.hub,
        "model_spec": result.model_spec,
        "model": result.model,
        "input_tokens": result.usage.get("input_tokens"),
        "output_tokens": result.usage.get("output_tokens"),
        "cost_usd": result.usage.get("cost_usd"),
        "counts": counts,
    }
    note = SessionNote(
        run_id=result.run_id,
        domain=result.domain,
        status=status,
        started_at=started_at,
        finished_at=finished_at,
        headline=HEADLINES.get(status, status),
        front=front,
        prose=prose,
        actions=_actions(result, rulings),
        observations=list(observations),
        problem=problem,
        raw_response=raw,
    )
    path, _ = write_note(settings.memory_dir / "working", note)
    return path


def file_sha256(path: Path) -> str:
    """SHA-256 of a file's bytes."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def show_prompt(o: Orientation, stream: TextIO) -> None:
    """Print the rendered prompt (for --show-prompt)."""
    stream.write("===== system prompt =====\n" + o.prompt.system.rstrip() + "\n")
    stream.write("===== user prompt =====\n" + o.prompt.user.rstrip() + "\n")
    stream.write(f"===== about {o.rendered.estimated_tokens} tokens =====\n")
    stream.flush()


def _ts(value: datetime) -> str:
    return value.isoformat().replace("+00:00", "Z")
