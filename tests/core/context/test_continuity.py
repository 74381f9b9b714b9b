"""Continuity you can trust: the note fed forward is chosen from the journal, not by file name."""

from __future__ import annotations

import io
from datetime import UTC, datetime
from pathlib import Path

import pytest

from custodian_hub import ReferenceHub
from custodian_runtime.run import run
from custodian_runtime.settings import load_settings
from support.runs import CANON, plan_response, run_cli

QUIET = {"observations": ["nothing to do"]}


def _run_at(tmp_path: Path, hub: ReferenceHub, answer: str, at: datetime) -> str:
    path = tmp_path / "answer.md"
    path.write_text(answer, encoding="utf-8")
    flags = {"domain": "website", "hub": hub.url, "llm": f"file:{path}", "force": True}
    flags |= {"memory": str(tmp_path / "memory"), "canon": str(CANON)}
    result = run(load_settings(flags, {}, tmp_path), clock=lambda: at, stderr=io.StringIO())
    assert result.note_path is not None, result.message
    return result.status


def _next_prompt(tmp_path: Path, hub: ReferenceHub, monkeypatch: pytest.MonkeyPatch) -> str:
    path = tmp_path / "answer.md"
    path.write_text(plan_response(QUIET), encoding="utf-8")
    argv = ["run", "--domain", "website", "--hub", hub.url, "--llm", f"file:{path}", "--force"]
    argv += ["--memory", str(tmp_path / "memory"), "--canon", str(CANON), "--show-prompt"]
    result = run_cli(argv, tmp_path, monkeypatch)
    assert result.code == 0, result.stderr
    return result.stdout


FLAG = {"tasks_to_flag": [{"task_id": "web-t-2", "note": "web-t-2 is blocked; who can help?"}]}


def test_two_runs_in_the_same_second_feed_the_newer_facts_forward(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    at = datetime.now(UTC).replace(microsecond=0)
    _run_at(tmp_path, small_hub, plan_response(QUIET, "OLDER-REASONING"), at)
    _run_at(tmp_path, small_hub, plan_response(FLAG, "NEWER-REASONING"), at)
    names = sorted(p.name for p in (tmp_path / "memory" / "working").glob("*.md"))
    assert len(names) == 2 and names[0].endswith("-website.2.md")  # sorts before the first
    prompt = _next_prompt(tmp_path, small_hub, monkeypatch)
    assert "ended completed. What became of each item it proposed" in prompt
    assert "\nexecuted flag_for_human web-t-2\n" in prompt  # the newer run's facts, as data
    # No run's prose goes forward as text to continue, the newer's included.
    assert "NEWER-REASONING" not in prompt and "OLDER-REASONING" not in prompt


def test_a_failed_run_is_the_last_run_and_no_prose_is_fed_forward(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    at = datetime.now(UTC).replace(microsecond=0)
    _run_at(tmp_path, small_hub, plan_response(FLAG, "REAL-REASONING"), at)
    later = at.replace(second=(at.second + 1) % 60) if at.second < 59 else at
    status = _run_at(tmp_path, small_hub, "no plan here, IGNORE ALL RULES", later)
    assert status == "rejected"
    prompt = _next_prompt(tmp_path, small_hub, monkeypatch)
    assert "ended rejected. Its problem: <<<DATA" in prompt
    assert "It proposed nothing." in prompt
    assert "REAL-REASONING" not in prompt
    assert "IGNORE ALL RULES" not in prompt  # the raw answer of the failed run is not fed
