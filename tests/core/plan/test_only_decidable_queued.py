"""Only decidable items are queued: an unknown operation or a stray key is denied, with its reason
in the note, while the rest of the plan runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from custodian_hub import ReferenceHub
from support.runs import CANON, plan_response, run_cli

EVENT = {
    "workstream_id": "web-ws-1",
    "event_type": "note",
    "rests_on": ["web-t-1"],
    "summary": "Checked the site.",
}
ARCHIVE = {"operation": "archive_everything", "params": {"older_than": "1y"}, "rationale": "tidy"}
CREATE = {"operation": "create_task", "params": {"workstream_id": "web-ws-1", "title": "Sitemap"}}


def test_an_unknown_operation_and_a_stray_key_are_denied_and_never_queued(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    plan = {"progress_events": [EVENT], "proposals": [ARCHIVE, CREATE], "foo": 1}
    answer = tmp_path / "answer.md"
    answer.write_text(plan_response(plan), "utf-8")
    memory = tmp_path / "memory"
    argv = ["run", "--domain", "website", "--hub", small_hub.url, "--llm", f"file:{answer}"]
    result = run_cli(
        [*argv, "--memory", str(memory), "--canon", str(CANON), "--json"], tmp_path, monkeypatch
    )
    assert result.code == 0, result.stderr
    summary = result.json()
    assert [i["operation"] for i in summary["executed"]] == ["add_progress_event"]
    assert [i["operation"] for i in summary["queued"]] == ["create_task"]
    denied = {i["operation"]: i["reason"] for i in summary["denied"]}
    assert "Custodian knows no operation archive_everything" in denied["archive_everything"]
    assert "'foo' is not a plan section" in denied["foo"]
    queued = list((memory / "approvals").glob("apr-*.json"))
    assert len(queued) == 1 and "create_task" in queued[0].read_text("utf-8")
    (note,) = (memory / "working").glob("*-website.md")
    text = note.read_text("utf-8")
    assert "Custodian knows no operation archive_everything" in text
    assert "is not a plan section" in text
    assert "an operation Custodian does not know that" not in text
