"""End-to-end runs against the reference hub over loopback, with `file:` and `cmd:` models."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from custodian_hub import ReferenceHub
from support.runs import (
    CANON,
    hub_get,
    plan_response,
    run_cli,
    run_plan,
    tree_digest,
)


def _custodian_events(hub: ReferenceHub) -> list[dict[str, Any]]:
    events = hub_get(hub, "/events?domain=website&limit=1000")["events"]
    return [e for e in events if e["source"] == "custodian"]


BENIGN = {
    "observations": ["web-t-4 looks finished: ev-1 says it was deployed and verified."],
    "progress_events": [
        {
            "workstream_id": "web-ws-1",
            "task_id": "web-t-4",
            "event_type": "observation",
            "rests_on": ["web-t-4"],
            "summary": "Deployment verified in ev-1; marking done.",
        }
    ],
    "tasks_to_update": [
        {"task_id": "web-t-4", "status": "done", "evidence": ["ev-1"], "reason": "ev-1"}
    ],
    "tasks_to_flag": [{"task_id": "web-t-2", "note": "Blocked 9 days with no flag."}],
}


def test_a_benign_plan_is_executed_and_visible_in_the_hub(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    result = run_plan(tmp_path, monkeypatch, small_hub.url, BENIGN, "--json")
    assert result.code == 0, result.stderr
    summary = result.json()
    assert summary["status"] == "completed"
    assert sorted(a["operation"] for a in summary["executed"]) == [
        "add_progress_event",
        "flag_for_human",
        "update_task_status",
    ]
    assert hub_get(small_hub, "/tasks/web-t-4")["status"] == "done"
    events = _custodian_events(small_hub)
    assert len(events) == 1 and summary["run_id"] in events[0]["summary"]
    flags = hub_get(small_hub, "/flags?domain=website&status=open")["flags"]
    assert any(f["task_id"] == "web-t-2" and f["raised_by"] == "custodian" for f in flags)
    note = Path(summary["note"]).read_text(encoding="utf-8")
    assert note.startswith("---\nrun_id: ")
    assert "Looked at the website domain." in note and "## Actions" in note
    assert "web-t-4 looks finished" in note


def test_unsanctioned_proposals_are_queued_and_never_reach_the_hub(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    plan = {
        "tasks_to_update": [{"task_id": "web-t-3", "status": "cancelled"}],
        "proposals": [
            {
                "operation": "create_task",
                "rationale": "needed",
                "params": {"workstream_id": "web-ws-1", "title": "Add a sitemap"},
            },
            {
                "operation": "resolve_decision",
                "rationale": "obvious",
                "params": {"decision_id": "dec-1", "resolution": "A"},
            },
            {"operation": "drop_database", "params": {}, "rationale": "attacker"},
        ],
    }
    before = hub_get(small_hub, "/domains/website/summary")
    result = run_plan(tmp_path, monkeypatch, small_hub.url, plan, "--json")
    assert result.code == 0, result.stderr
    queued = result.json()["queued"]
    assert sorted(q["operation"] for q in queued) == [
        "create_task",
        "resolve_decision",
        "set_task_status",
    ]
    # An operation Custodian does not know is denied, never queued (no one could approve it).
    assert [d["operation"] for d in result.json()["denied"]] == ["drop_database"]
    files = sorted((tmp_path / "memory" / "approvals").glob("*.json"))
    assert len(files) == 3
    stored = [json.loads(f.read_text()) for f in files]
    assert all(s["status"] == "pending" and s["domain"] == "website" for s in stored)
    after = hub_get(small_hub, "/domains/website/summary")
    for key in ("workstreams", "open_decisions", "open_flags", "recent_events"):
        assert after[key] == before[key]


def test_ids_outside_the_domain_are_denied(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    plan = {
        "tasks_to_update": [{"task_id": "plat-t-1", "status": "done"}],
        "tasks_to_flag": [{"task_id": "nope-404", "note": "x"}],
        "progress_events": [
            {
                "workstream_id": "plat-ws-1",
                "event_type": "note",
                "rests_on": ["plat-t-1"],
                "summary": "x",
            }
        ],
    }
    result = run_plan(tmp_path, monkeypatch, small_hub.url, plan, "--json")
    assert result.code == 0
    assert len(result.json()["denied"]) == 3 and result.json()["executed"] == []
    assert hub_get(small_hub, "/tasks/plat-t-1")["status"] == "todo"
    assert hub_get(small_hub, "/events?domain=platform")["events"] == []


def test_the_event_cap_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    events = [
        {
            "workstream_id": "web-ws-1",
            "event_type": "note",
            "rests_on": ["web-t-1"],
            "summary": f"event number {n}",
        }
        for n in range(25)
    ]
    result = run_plan(tmp_path, monkeypatch, small_hub.url, {"progress_events": events}, "--json")
    assert result.code == 0
    assert len(result.json()["executed"]) == 20
    assert len(result.json()["denied"]) == 5
    assert len(_custodian_events(small_hub)) == 20


def test_two_json_blocks_reject_the_plan_and_write_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    response = plan_response(BENIGN) + "\nAnd also:\n" + plan_response(BENIGN)
    result = run_plan(tmp_path, monkeypatch, small_hub.url, response, "--json")
    assert result.code == 4
    assert result.json()["status"] == "rejected"
    assert _custodian_events(small_hub) == []
    assert hub_get(small_hub, "/tasks/web-t-4")["status"] == "in_progress"
    note = Path(result.json()["note"]).read_text(encoding="utf-8")
    assert "## What went wrong" in note and "## Raw model response" in note


def test_hub_down_exits_3_and_never_calls_the_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = tmp_path / "calls.txt"
    script = tmp_path / "model.py"
    script.write_text(
        f"import sys\nopen({str(calls)!r}, 'a').write('called\\n')\nprint('no plan')\n"
    )
    argv = [
        "run",
        "--domain",
        "website",
        "--hub",
        "http://127.0.0.1:9",
        "--llm",
        f"cmd:{sys.executable} {script}",
        "--memory",
        str(tmp_path / "memory"),
        "--canon",
        str(CANON),
        "--json",
    ]
    result = run_cli(
        argv, tmp_path, monkeypatch, STATE_HUB_MAX_ATTEMPTS="2", STATE_HUB_MAX_TOTAL_S="2"
    )
    assert result.code == 3, result.stderr
    assert not calls.exists()
    assert result.json()["status"] == "failed"


def test_a_dry_run_leaves_the_hub_and_memory_untouched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    memory = tmp_path / "memory"
    first = run_plan(tmp_path, monkeypatch, small_hub.url, {"observations": ["x"]}, "--json")
    assert first.code == 0
    before_memory = tree_digest(memory)
    before_hub = hub_get(small_hub, "/domains/website/summary")
    result = run_plan(
        tmp_path,
        monkeypatch,
        small_hub.url,
        plan_response(BENIGN),
        "--json",
        "--dry-run",
        "--force",
    )
    assert result.code == 0, result.stderr
    summary = result.json()
    assert summary["dry_run"] is True
    assert len(summary["would_execute"]) == 3 and summary["executed"] == []
    assert summary["counts"] == {"would_execute": 3, "would_queue": 0, "denied": 0}
    assert [i["outcome"] for i in summary["items"]] == ["would_execute"] * 3
    assert "executed" not in result.stderr, "a dry run's phase lines never say executed"
    assert tree_digest(memory) == before_memory
    after_hub = hub_get(small_hub, "/domains/website/summary")
    before_hub.pop("generated_at")
    after_hub.pop("generated_at")
    assert after_hub == before_hub


def test_an_unchanged_state_skips_the_model_unless_forced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    quiet = plan_response({"observations": ["nothing to do"]})
    assert run_plan(tmp_path, monkeypatch, small_hub.url, quiet, "--json").code == 0
    second = run_plan(tmp_path, monkeypatch, small_hub.url, quiet, "--json")
    assert second.code == 0 and second.json()["status"] == "skipped"
    forced = run_plan(tmp_path, monkeypatch, small_hub.url, quiet, "--json", "--force")
    assert forced.json()["status"] == "completed"


def test_no_hub_configured_is_a_configuration_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = run_cli(["run", "--domain", "website", "--llm", "offline"], tmp_path, monkeypatch)
    assert result.code == 2
    assert "STATE_HUB_URL" in result.stderr and "--hub embedded" in result.stderr


def test_an_unknown_domain_names_the_known_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    argv = [
        "run",
        "--domain",
        "nowhere",
        "--hub",
        small_hub.url,
        "--llm",
        "offline",
        "--memory",
        str(tmp_path / "memory"),
        "--canon",
        str(CANON),
    ]
    result = run_cli(argv, tmp_path, monkeypatch)
    assert result.code == 2
    assert "platform" in result.stderr and "website" in result.stderr


def test_a_tampered_journal_stops_the_next_run_before_it_acts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    quiet = plan_response({"observations": ["nothing to do"]})
    assert run_plan(tmp_path, monkeypatch, small_hub.url, quiet, "--json").code == 0
    journal = tmp_path / "memory" / "journal" / "website.jsonl"
    lines = journal.read_text(encoding="utf-8").splitlines(keepends=True)
    # The checkpoint's head: the run reads it back, finds its hash broken, and scans it all.
    lines[-1] = lines[-1].replace('"completed"', '"complete"', 1)
    journal.write_text("".join(lines), encoding="utf-8")
    result = run_plan(tmp_path, monkeypatch, small_hub.url, BENIGN, "--json", "--force")
    assert result.code == 6
    assert "does not verify" in result.stderr
    assert _custodian_events(small_hub) == []
    assert hub_get(small_hub, "/tasks/web-t-4")["status"] == "in_progress"


def test_a_repeated_plan_does_not_write_the_same_event_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    plan = plan_response({"progress_events": BENIGN["progress_events"]})
    assert run_plan(tmp_path, monkeypatch, small_hub.url, plan, "--json").code == 0
    again = run_plan(tmp_path, monkeypatch, small_hub.url, plan, "--json", "--force")
    assert again.code == 0
    (denied,) = again.json()["denied"]
    assert "already records it" in denied["reason"]
    assert len(_custodian_events(small_hub)) == 1


def test_what_the_prompt_left_out_is_reported_in_json_the_note_and_the_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hub: ReferenceHub
) -> None:
    quiet = plan_response({"observations": ["nothing to do"]})
    monkeypatch.setenv("CUSTODIAN_TOKEN_BUDGET", "5000")
    result = run_plan(tmp_path, monkeypatch, hub.url, quiet, "--json", "--force")
    assert result.code == 0, result.stderr
    summary = result.json()
    omitted = summary["omitted"]
    assert omitted and all(isinstance(n, int) and n > 0 for n in omitted.values())
    assert set(omitted) <= {"workstreams", "in_progress", "blocked", "todo", "decisions",
                            "flags", "events", "pending", "rejected", "closed"}  # fmt: skip
    note = Path(summary["note"]).read_text(encoding="utf-8")
    assert f"\nomitted: {json.dumps(omitted)}\n" in note
    orient = [line for line in result.stderr.splitlines() if "orient" in line]
    assert orient and f"omitted={sum(omitted.values())}" in orient[0], orient
