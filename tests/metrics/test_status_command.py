"""`custodian status`: the figures of every domain, read from memory/ after real runs."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from custodian_runtime.core.fold.prune import parse_keep
from custodian_runtime.metrics import EXIT_OVERDUE, StatusRequest, status_command
from support.runs import run_cli, run_plan

PLAN = {
    "tasks_to_flag": [{"task_id": "web-t-2", "note": "Blocked 9 days on legal, no flag yet."}],
    "proposals": [
        {
            "operation": "create_task",
            "params": {"workstream_id": "web-ws-2", "title": "Check redirects of old blog URLs"},
            "rationale": "the migration will change every post's URL",
        }
    ],
}


def _status(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *extra: str) -> Any:
    return run_cli(["status", "--memory", str(tmp_path / "memory"), *extra], tmp_path, monkeypatch)


def test_status_prints_the_figures_three_ways_and_exits_8_when_overdue(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: Any
) -> None:
    run_plan(tmp_path, monkeypatch, small_hub.url, PLAN, "--json").ok()

    text = _status(tmp_path, monkeypatch)
    assert text.code == 0, text.stderr
    head, detail = text.stdout.splitlines()
    assert head.startswith("website  ok  last success 0s ago; last run 0s ago: completed, exit 0")
    assert "executed 1 queued 1 denied 0 failed 0; pending 1 (oldest 0s)" in detail

    as_json = _status(tmp_path, monkeypatch, "--json")
    (domain,) = json.loads(as_json.stdout)["domains"]
    assert domain["domain"] == "website" and domain["overdue"] is False
    assert domain["items"] == {"executed": 1, "queued": 1, "denied": 0, "failed": 0}
    assert domain["pending"] == 1 and domain["exit_code"] == 0
    assert domain["cost_usd"] is None and domain["input_tokens"] is None  # `file:` reports none

    exposed = _status(tmp_path, monkeypatch, "--prometheus")
    values = {
        (s.name, s.labels.get("outcome")): s.value
        for family in text_string_to_metric_families(exposed.stdout)
        for s in family.samples
        if s.labels.get("domain") == "website"
    }
    assert values[("custodian_run_items", "executed")] == 1
    assert values[("custodian_pending_approvals", None)] == 1
    assert values[("custodian_run_exit_code", None)] == 0

    # Three hours on, with a threshold of two: overdue (the time comes in as a parameter).
    later, out = datetime.now(UTC) + timedelta(hours=3), io.StringIO()
    request = StatusRequest(parse_keep("2h"))
    assert status_command(tmp_path / "memory", None, request, out, later) == EXIT_OVERDUE == 8
    assert out.getvalue().startswith("website  OVERDUE  last success 3h ago")
    assert _status(tmp_path, monkeypatch, "--max-age", "2h").code == 0


def test_status_reads_the_checkpoint_not_the_whole_journal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: Any
) -> None:
    run_plan(tmp_path, monkeypatch, small_hub.url, PLAN, "--json").ok()
    run_plan(tmp_path, monkeypatch, small_hub.url, PLAN, "--json", "--force").ok()
    journal = tmp_path / "memory" / "journal" / "website.jsonl"
    lines = journal.read_bytes().split(b"\n")
    lines[0] = lines[0].replace(b"run_started", b"run_startex")  # damage before the checkpoint
    journal.write_bytes(b"\n".join(lines))
    done = _status(tmp_path, monkeypatch, "--json")
    assert done.code == 0, done.stderr
    assert json.loads(done.stdout)["domains"][0]["last_run_status"] == "completed"
    assert (
        run_cli(
            ["inspect", "--domain", "website", "--memory", str(tmp_path / "memory")],
            tmp_path,
            monkeypatch,
        ).code
        != 0
    )  # `inspect` reads it all and finds it


def test_no_domain_is_overdue_too_and_a_bad_max_age_says_the_form(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "memory").mkdir()
    empty = _status(tmp_path, monkeypatch)
    assert empty.code == 8 and "no domain" in empty.stdout
    bad = _status(tmp_path, monkeypatch, "--max-age", "two days")
    assert bad.code == 2 and "--max-age 'two days': give a count and a unit" in bad.stderr


def test_a_check_after_the_last_run_is_named_beside_it() -> None:
    from custodian_runtime.core.metrics import Figures, RunFacts, status_data, status_lines

    now = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
    ran = RunFacts(now - timedelta(hours=5, seconds=3), now - timedelta(hours=5), 0, "completed",
                   {"executed": 0}, None, {})  # fmt: skip
    quiet = Figures("quiet", ran, ran.ended_at, 0, None, last_check=now - timedelta(minutes=2))
    data = status_data(quiet, now, timedelta(hours=48))
    assert (data["last_run_at"], data["last_check_at"]) == (
        "2026-12-01T07:00:00Z",
        "2026-12-01T11:58:00Z",
    )
    assert status_lines(quiet, now, timedelta(hours=48))[0].endswith("; last check 2m ago")
    never = Figures("new", None, None, 0, None, last_check=now - timedelta(minutes=1))
    assert status_lines(never, now, timedelta(hours=48))[0].endswith(
        "no run recorded; last check 1m ago"
    )
    ran_only = Figures("ran", ran, ran.ended_at, 0, None)  # no watch: the run was the last look
    assert (
        status_data(ran_only, now, timedelta(hours=48))["last_check_at"] == "2026-12-01T07:00:00Z"
    )
