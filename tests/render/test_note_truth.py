"""Notes that are true: each sentence below was once written where it was false."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from custodian_hub import ReferenceHub
from custodian_runtime.core.authority.authorize import ApprovalHistory, authorize
from custodian_runtime.core.limits import Limits
from custodian_runtime.core.plan.extract import extract_plan
from custodian_runtime.core.presentation.display import status_change
from custodian_runtime.render.note import NoteAction, SessionNote, render_note
from support.authority import markdown, website
from support.runs import plan_response, run_in_process

AT = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def _status_and_note(tmp_path: Path, hub: ReferenceHub, llm: str) -> tuple[str, str]:
    """One run against the real reference hub; its status and its note's text."""
    result = run_in_process(tmp_path, hub, llm)
    assert result.note_path is not None, result.message
    return result.status, Path(result.note_path).read_text("utf-8")


def _answer(tmp_path: Path, text: str) -> str:
    path = tmp_path / "answer.md"
    path.write_text(text, encoding="utf-8")
    return f"file:{path}"


def test_a_first_run_does_not_claim_changes_since_an_earlier_run(
    tmp_path: Path, small_hub: ReferenceHub
) -> None:
    _, first = _status_and_note(tmp_path, small_hub, "offline")
    assert "Changed since the last completed run" not in first
    assert "No completed run of this domain came before this one" in first
    _, second = _status_and_note(tmp_path, small_hub, "offline")
    assert "Changed since the last completed run: 0 workstreams." in second


def test_a_completed_run_without_prose_does_not_say_it_ended_early(
    tmp_path: Path, small_hub: ReferenceHub
) -> None:
    only_json = "```json\n" + json.dumps({"observations": ["nothing to do"]}) + "\n```\n"
    status, note = _status_and_note(tmp_path, small_hub, _answer(tmp_path, only_json))
    assert status == "completed"
    assert "The run ended before the model gave any reasoning" not in note
    assert "_The model gave its plan without any reasoning._" in note


def test_an_item_without_a_target_is_not_shown_on_a_dash(
    tmp_path: Path, small_hub: ReferenceHub
) -> None:
    answer = plan_response({"observations": ["x"], "foo": 1})
    _, note = _status_and_note(tmp_path, small_hub, _answer(tmp_path, answer))
    assert "`foo`" in note
    assert "on `-`" not in note


def test_a_status_change_shows_from_to_and_what_each_cited_event_says(
    tmp_path: Path, small_hub: ReferenceHub
) -> None:
    change = {"task_id": "web-t-4", "status": "done", "evidence": ["ev-1", "ev-404"]}
    answer = plan_response({"tasks_to_update": [change]})
    _, note = _status_and_note(tmp_path, small_hub, _answer(tmp_path, answer))
    assert "status in_progress → done" in note
    assert "ev-1 “CDN config deployed to production and verified.”" in note
    assert "verified.”, ev-404" in note  # an event the summary lacks: its id alone


def test_an_unknown_operation_reads_as_one_sentence() -> None:
    plan = extract_plan(markdown({"archive_everything": [{"domain": "website"}]}))
    (ruling,) = authorize(plan, website(), Limits(), ApprovalHistory())
    assert "does not know that Custodian may not make" not in ruling.reason
    assert ruling.outcome == "deny"
    assert "'archive_everything' is not a plan section" in ruling.reason


def test_a_cited_events_text_is_inert_and_one_line() -> None:
    params = {"task_id": "t-1", "status": "done", "evidence": ["e-1"]}
    said = {"e-1": "Done.\n## Executed\n\x1b[31m<b>x</b> " + "long " * 60}
    detail = status_change("update_task_status", params, "in_progress", said)
    assert detail.startswith("status in_progress → done, evidence e-1 “Done.")
    assert "\n" not in detail and "\x1b" not in detail
    assert detail.endswith("…”")  # cut, so one event cannot fill the note
    note = render_note(
        SessionNote(
            run_id="r", domain="website", status="completed", started_at=AT, finished_at=AT,
            headline="The run completed.", front={},
            actions=[NoteAction("executed", "update_task_status", "t-1", detail, "")],
        )
    )  # fmt: skip
    assert "\n## Executed" not in note and "<b>" not in note
