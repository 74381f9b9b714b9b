"""`custodian replay` and `custodian inspect` on the journals of real runs: decisions, tampering."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from custodian_hub import ReferenceHub
from custodian_runtime.core.authority import authorize as authority
from support.runs import CANON, CliResult, run_cli, run_plan
from support.spine import THREE_WRITES, journal

PLAN: dict[str, Any] = {
    **THREE_WRITES,
    "progress_events": [
        {
            "workstream_id": "web-ws-1",
            "event_type": "note",
            "rests_on": ["web-t-1"],
            "summary": f"event number {n}",
        }
        for n in range(3)
    ],
    "proposals": [
        {
            "operation": "create_task",
            "rationale": "needed",
            "params": {"workstream_id": "web-ws-1", "title": "Add a sitemap"},
        }
    ],
}


def _run_id_of_a_run(tmp_path: Path, mp: pytest.MonkeyPatch, hub: ReferenceHub) -> str:
    return str(run_plan(tmp_path, mp, hub.url, PLAN, "--json", "--force").ok().json()["run_id"])


def _replay(tmp_path: Path, mp: pytest.MonkeyPatch, run_id: str, **env: str) -> CliResult:
    argv = ["replay", run_id, "--memory", str(tmp_path / "memory"), "--canon", str(CANON)]
    return run_cli([*argv, "--json"], tmp_path, mp, **env)


def _inspect(tmp_path: Path, mp: pytest.MonkeyPatch, *args: str) -> CliResult:
    return run_cli(["inspect", *args, "--memory", str(tmp_path / "memory")], tmp_path, mp)


def test_replay_of_a_real_run_gives_the_same_decisions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    run_id = _run_id_of_a_run(tmp_path, monkeypatch, small_hub)
    # The run's own proposal is pending now; replay judges it by the history recorded then.
    assert list((tmp_path / "memory" / "approvals").glob("*.json"))
    replayed = _replay(tmp_path, monkeypatch, run_id)
    assert replayed.code == 0, replayed.stdout + replayed.stderr
    report = replayed.json()
    assert report["differences"] == []
    assert report["constitution"] == "unchanged" and report["policy"] == "unchanged"
    assert "6 item(s) re-decided" in report["verdict"]
    text = run_cli(
        ["replay", run_id, "--memory", str(tmp_path / "memory"), "--canon", str(CANON)],
        tmp_path,
        monkeypatch,
    )
    assert text.code == 0 and "replay: same decisions" in text.stdout


def test_replay_shows_what_a_stricter_policy_today_would_decide(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    run_id = _run_id_of_a_run(tmp_path, monkeypatch, small_hub)
    replayed = _replay(tmp_path, monkeypatch, run_id, CUSTODIAN_MAX_EVENTS="1")
    assert replayed.code == 1
    report = replayed.json()
    assert report["policy"].startswith("changed: recorded {")
    assert "'max_events': 20" in report["policy"] and "'max_events': 1" in report["policy"]
    changed = [(d["index"], d["operation"]) for d in report["differences"]]
    assert changed == [(1, "add_progress_event"), (2, "add_progress_event")]
    assert all(d["recorded"].startswith("execute:") for d in report["differences"])
    assert all("at most 1 add_progress_event" in d["today"] for d in report["differences"])


def test_replay_shows_what_changed_code_would_decide(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    run_id = _run_id_of_a_run(tmp_path, monkeypatch, small_hub)
    original = authority._rule_sanctioned

    def stricter(item: Any, label: str, *rest: Any) -> tuple[str, str]:
        if item.operation == "flag_for_human":
            return "deny", f"{label} is denied: flags need a person now."
        outcome, reason = original(item, label, *rest)
        return outcome, reason

    monkeypatch.setattr(authority, "_rule_sanctioned", stricter)
    report = _replay(tmp_path, monkeypatch, run_id)
    assert report.code == 1
    (difference,) = report.json()["differences"]
    assert difference["operation"] == "flag_for_human"
    assert difference["today"].endswith("flags need a person now.")


def _flip(path: Path, seq: int, old: bytes, new: bytes) -> None:
    """Change one byte inside record `seq` (line `seq`) of a journal file."""
    lines = path.read_bytes().split(b"\n")
    line = lines[seq - 1]
    assert old in line
    at = line.index(old)
    lines[seq - 1] = line[:at] + new + line[at + len(old) :]
    path.write_bytes(b"\n".join(lines))


def test_a_flipped_byte_in_a_past_record_fails_the_replay_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    first = _run_id_of_a_run(tmp_path, monkeypatch, small_hub)
    _run_id_of_a_run(tmp_path, monkeypatch, small_hub)
    assert _inspect(tmp_path, monkeypatch, "--domain", "website").code == 0
    ruling = next(r for r in journal(tmp_path / "memory") if r.kind == "ruling")
    path = tmp_path / "memory" / "journal" / "website.jsonl"
    _flip(path, ruling.seq, b"executes", b"executeS")
    inspected = _inspect(tmp_path, monkeypatch, first)
    assert inspected.code == 6
    assert f"record {ruling.seq} (ruling, run {first}): hash mismatch" in inspected.stdout
    assert "replay: FAILED" in inspected.stdout


def test_a_byte_that_breaks_a_past_line_is_damage_named_by_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    _run_id_of_a_run(tmp_path, monkeypatch, small_hub)
    _run_id_of_a_run(tmp_path, monkeypatch, small_hub)
    path = tmp_path / "memory" / "journal" / "website.jsonl"
    _flip(path, 3, b'"kind"', b"'kind\"")
    inspected = _inspect(tmp_path, monkeypatch, "--domain", "website")
    assert inspected.code == 6
    assert "website.jsonl line 3: not valid JSON" in inspected.stdout


def test_a_run_refuses_to_extend_a_tampered_journal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    _run_id_of_a_run(tmp_path, monkeypatch, small_hub)
    ruling = next(r for r in journal(tmp_path / "memory") if r.kind == "ruling")
    path = tmp_path / "memory" / "journal" / "website.jsonl"
    _flip(path, ruling.seq, b"executes", b"executeS")
    # Without its checkpoint the run scans the whole journal, and every record must verify.
    (tmp_path / "memory" / "journal" / "website.checkpoint.json").unlink()
    before = path.read_bytes()
    answer = tmp_path / "answer.md"
    argv = ["run", "--domain", "website", "--hub", small_hub.url, "--llm", f"file:{answer}"]
    argv += ["--memory", str(tmp_path / "memory"), "--canon", str(CANON), "--json", "--force"]
    result = run_cli(argv, tmp_path, monkeypatch)
    assert result.code == 6, result.stderr
    assert f"record {ruling.seq}" in json.loads(result.stdout)["message"]
    assert path.read_bytes() == before
