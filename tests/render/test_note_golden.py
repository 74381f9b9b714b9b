"""The session note a person reads, pinned by a golden file.

Regenerate after an intended change with
`UPDATE_GOLDEN=1 .venv/bin/pytest tests/render/test_note_golden.py` and review the diff.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

from custodian_runtime.notes.store import last_note_prose
from custodian_runtime.notes.store import write_note as write_text
from custodian_runtime.render.note import NoteAction, SessionNote, render_note
from support.paths import SUPPORT

GOLDEN = SUPPORT / "golden" / "note.md"
STARTED = datetime(2026, 11, 29, 8, 0, 0, tzinfo=UTC)
FINISHED = datetime(2026, 11, 29, 8, 0, 42, tzinfo=UTC)


def write_note(directory: Path, note: SessionNote) -> tuple[Path, str]:
    """Render a note and write it as a run does."""
    text = render_note(note)
    return write_text(directory, note.domain, note.started_at, text), text


def _note(**changes: object) -> SessionNote:
    fields: dict[str, object] = {
        "run_id": "r20261129T080000Z-abc123",
        "domain": "website",
        "status": "completed",
        "started_at": STARTED,
        "finished_at": FINISHED,
        "headline": "The run completed.",
        "front": {
            "run_id": "r20261129T080000Z-abc123",
            "domain": "website",
            "status": "completed",
            "hub": "embedded",
            "model_spec": "anthropic",
            "model": "claude-sonnet-4-5",
            "input_tokens": 6120,
            "output_tokens": 412,
            "cost_usd": None,
            "counts": {"executed": 2, "queued": 1, "denied": 1, "failed": 0, "stale": 1},
        },
        "prose": "The CDN task shipped (ev-1).\n\nThe cookie banner has waited 9 days on legal.",
        "actions": [
            NoteAction(
                "executed",
                "update_task_status",
                "web-t-4",
                "status in_progress → done, evidence ev-1 “CDN config is live.”",
                "",
                None,
                title="Launch the new CDN config",
            ),
            NoteAction(
                "executed",
                "flag_for_human",
                "web-t-2",
                "note “Blocked 9 days.”",
                "",
                "hub id `flag-000007`",
                title="Cookie banner v2",
            ),
            NoteAction(
                "stale",
                "update_task_status",
                "web-t-1",
                "status in_progress → done, evidence ev-3 “Cleanup finished.”",
                "The task changed under the run (observed in_progress; it is now cancelled on the "
                "hub); nothing was written, and the next run plans from the new state.",
                "the hub shows `cancelled`",
                title="Old theme cleanup",
            ),
            NoteAction(
                "queued",
                "create_task",
                "web-ws-1",
                "title “Add a sitemap”",
                "",
                "approval `apr-1a2b3c4d5e6f`",
                title="Marketing site redesign",
                rationale="Search console reports the sitemap missing (ev-2).",
            ),
            NoteAction(
                "denied",
                "update_task_status",
                "plat-t-1",
                "status → done, no evidence cited",
                "Task plat-t-1 is not in the observed domain website.",
            ),
        ],
        "observations": ["ev-1 says the CDN config is live.", "No flag on web-t-2 yet."],
    }
    fields.update(changes)
    return SessionNote(**fields)  # type: ignore[arg-type]


def test_the_note_matches_the_golden_file() -> None:
    text = render_note(_note())
    if os.environ.get("UPDATE_GOLDEN"):
        GOLDEN.write_text(text, encoding="utf-8")
    assert text == GOLDEN.read_text(encoding="utf-8")


def test_a_rejected_plan_keeps_the_raw_response_inert() -> None:
    raw = "Sure!\n~~~~~~~~\n```json\n{}\n```\n```json\n{}\n```"
    text = render_note(
        _note(status="rejected", prose="", actions=[], problem="two json blocks", raw_response=raw)
    )
    assert "## What went wrong\n\ntwo json blocks" in text
    assert text.count("~~~~~~~~") == 2, "the raw response cannot close the fence it sits in"
    assert "No actions were proposed." in text


def test_continuity_reads_back_only_the_prose_of_the_newest_note(tmp_path: Path) -> None:
    write_note(tmp_path, _note(prose="older"))
    write_note(tmp_path, _note(started_at=FINISHED, prose="newer <!-- /custodian:prose --> tail"))
    write_note(tmp_path, _note(domain="platform", started_at=FINISHED, prose="other domain"))
    assert last_note_prose(tmp_path, "website") == "newer &lt;!-- /custodian:prose --> tail"
    assert last_note_prose(tmp_path, "platform") == "other domain"
    assert last_note_prose(tmp_path, "nowhere") is None


def test_two_notes_in_the_same_second_do_not_overwrite(tmp_path: Path) -> None:
    first, _ = write_note(tmp_path, _note(prose="one"))
    second, _ = write_note(tmp_path, _note(prose="two"))
    assert first != second and first.read_text() != second.read_text()
