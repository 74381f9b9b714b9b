"""What of the canon a run was shown is cited: in the journal, the note, `inspect`, `replay` and
on the review page; and an edit to the canon is seen by the next run."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from custodian_hub import ReferenceHub
from custodian_runtime.core.digest import sha256_hex
from custodian_runtime.core.journal.kinds import PromptRecord, of_kind
from custodian_runtime.journal.reader import JournalReader
from custodian_runtime.review.views import Views
from support.review import review_settings
from support.runs import CANON, plan_response, run_cli, run_plan

LEGAL = """---
domains: [website]
---
# Legal reviews

Who signs what off.

## Legal sign-off blockers

A task blocked on legal sign-off (a cookies banner, terms) waits for counsel; flag it after a week.

## Payroll calendar

Salaries are paid on the last working day.
"""
SECTION = LEGAL.split("## Legal sign-off blockers")[1].split("## Payroll")[0]
EVENT = {"workstream_id": "web-ws-1", "event_type": "note", "summary": "Checked the site."}


def _prompt_record(memory: Path, run_id: str) -> PromptRecord:
    reader = JournalReader(memory)
    ((_, prompt),) = of_kind(reader.run_records("website", run_id), PromptRecord)
    return prompt


def test_a_run_cites_the_canon_it_was_shown_and_the_next_run_sees_an_edit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    canon = tmp_path / "canon"
    shutil.copytree(CANON, canon)
    (canon / "adr").mkdir()
    (canon / "adr" / "legal.md").write_text(LEGAL, "utf-8")
    memory = tmp_path / "memory"
    first = run_plan(
        tmp_path,
        monkeypatch,
        small_hub.url,
        {"progress_events": [EVENT]},
        "--json",
        "--show-prompt",
        canon=tmp_path / "canon",
    ).ok()
    run_id = first.json()["run_id"]
    assert "flag it after a week" in first.stderr  # the prompt, shown on stderr
    assert "Salaries are paid" not in first.stderr
    (orient,) = [line for line in first.stderr.splitlines() if "orient" in line and "ok" in line]
    assert "canon_sections=2" in orient and "canon_of=3" in orient, orient

    prompt = _prompt_record(memory, run_id)
    cited = {(c.file, c.heading, c.whole): c.sha256 for c in prompt.canon or ()}
    constitution = (canon / "constitution.md").read_text("utf-8")
    assert cited[("constitution.md", "The Custodian's Constitution", True)] == sha256_hex(
        constitution
    )
    assert ("domains/website.md", "Domain guidance: `website`", True) in cited
    section = "## Legal sign-off blockers" + SECTION.rstrip()
    assert cited[("adr/legal.md", "Legal sign-off blockers", False)] == sha256_hex(section)
    assert prompt.canon_sections == 3

    (note,) = (memory / "working").glob("*-website.md")
    text = note.read_text("utf-8")
    assert "## Canon shown" in text
    assert f"- `adr/legal.md § Legal sign-off blockers sha256={sha256_hex(section)[:12]}`" in text
    assert "2 file(s) whole, 2 of 3 section(s) retrieved" in text

    inspected = run_cli(["inspect", run_id, "--memory", str(memory)], tmp_path, monkeypatch)
    assert inspected.code == 0, inspected.stderr
    assert "canon 2 file(s) whole, 2 of 3 section(s) retrieved" in inspected.stdout
    assert "  canon adr/legal.md § Legal sign-off blockers sha256=" in inspected.stdout

    replay = ["replay", run_id, "--memory", str(memory), "--canon", str(canon)]
    same = run_cli(replay, tmp_path, monkeypatch)
    assert same.code == 0, same.stdout + same.stderr
    assert "canon as shown (2 file(s) whole, 2 of 3 section(s) retrieved)" in same.stdout

    page = Views(review_settings(memory, "embedded", tmp_path, canon)).get(f"/runs/{run_id}", "c")
    html = page.body.decode()
    assert "Canon the model was shown" in html
    assert "<li><code>adr/legal.md § Legal sign-off blockers sha256=" in html

    edited = LEGAL.replace("flag it after a week", "flag it after two days")
    (canon / "adr" / "legal.md").write_text(edited, "utf-8")
    changed = run_cli(replay, tmp_path, monkeypatch)
    assert changed.code == 0  # the same decisions; the canon is said to have changed
    assert "canon 1 of 4 piece(s) changed since the run: adr/legal.md § Legal sign-off" in (
        changed.stdout
    )
    second = run_plan(
        tmp_path,
        monkeypatch,
        small_hub.url,
        {"progress_events": [EVENT]},
        "--json",
        "--show-prompt",
        canon=tmp_path / "canon",
    ).ok()
    assert second.json()["status"] != "skipped"  # a changed canon is a change
    assert "flag it after two days" in second.stderr
    assert "flag it after a week" not in second.stderr
    assert len(list((memory / "index").glob("canon-*.sqlite"))) == 1


def test_a_run_of_a_canon_without_library_keeps_its_note_as_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    shutil.copytree(CANON, tmp_path / "canon")
    run_id = (
        run_plan(
            tmp_path,
            monkeypatch,
            small_hub.url,
            {"progress_events": [EVENT]},
            "--json",
            canon=tmp_path / "canon",
        )
        .ok()
        .json()["run_id"]
    )
    (note,) = (tmp_path / "memory" / "working").glob("*-website.md")
    assert "## Canon shown" not in note.read_text("utf-8")
    prompt = _prompt_record(tmp_path / "memory", run_id)
    assert [(c.file, c.whole) for c in prompt.canon or ()] == [
        ("constitution.md", True),
        ("domains/website.md", True),
    ]
    assert prompt.canon_sections is None
    assert not (tmp_path / "memory" / "index").exists()


def test_an_edit_to_any_canon_file_ends_the_skip_of_an_unchanged_domain(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    canon = tmp_path / "canon"
    shutil.copytree(CANON, canon)
    (canon / "adr").mkdir()
    (canon / "adr" / "legal.md").write_text(LEGAL, "utf-8")
    answer = tmp_path / "answer.md"
    answer.write_text(plan_response({}), "utf-8")  # no writes: the domain stays as it was
    argv = ["run", "--domain", "website", "--hub", small_hub.url, "--llm", f"file:{answer}"]
    argv += ["--memory", str(tmp_path / "memory"), "--canon", str(canon), "--json"]

    def status() -> str:
        result = run_cli(argv, tmp_path, monkeypatch)
        assert result.code == 0, result.stderr
        return str(result.json()["status"])

    assert status() == "completed"
    assert status() == "skipped"
    (canon / "adr" / "legal.md").write_text(LEGAL.replace("a week", "two days"), "utf-8")
    assert status() == "completed"
    assert status() == "skipped"
