"""Seals that can't be off by accident (#19, finding 11).

An empty seal key is a configuration error, not "no seals". Without a key every run and
`inspect` say "unsealed" once; the edit an unsealed memory cannot see (one emptied field of the
checkpoint, which lets a status a person reversed execute again) is caught with a key.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from custodian_hub import ReferenceHub
from support.runs import CliResult, hub_get, run_cli, run_plan

KEY = "k" * 20 + "-seal-key-for-tests-0123456789"
SEAL_VARIABLES = ("CUSTODIAN_SEAL_KEY", "CUSTODIAN_SEAL_KEY_PREVIOUS")


def _unsealed_run(
    tmp_path: Path, mp: pytest.MonkeyPatch, hub: ReferenceHub, plan: dict[str, Any], **env: str
) -> CliResult:
    for name in SEAL_VARIABLES:
        mp.delenv(name, raising=False)
    return run_plan(tmp_path, mp, hub.url, plan, "--json", "--force", **env)


def _inspect(tmp_path: Path, mp: pytest.MonkeyPatch, **env: str) -> CliResult:
    argv = ["inspect", "--domain", "website", "--memory", str(tmp_path / "memory")]
    return run_cli(argv, tmp_path, mp, **env)


@pytest.mark.parametrize(
    ("env", "dotenv", "named", "fix"),
    [
        ({"CUSTODIAN_SEAL_KEY": ""}, None, "CUSTODIAN_SEAL_KEY is set but empty", "unset it"),
        ({}, "CUSTODIAN_SEAL_KEY=\n", "CUSTODIAN_SEAL_KEY is set but empty", "32 characters"),
        (
            {"CUSTODIAN_SEAL_KEY": KEY, "CUSTODIAN_SEAL_KEY_PREVIOUS": ""},
            None,
            "CUSTODIAN_SEAL_KEY_PREVIOUS is set but empty",
            "unset it",
        ),
        (
            {"CUSTODIAN_SEAL_KEY_PREVIOUS": KEY},
            None,
            "CUSTODIAN_SEAL_KEY is not",
            "set CUSTODIAN_SEAL_KEY to the new key",
        ),
        (
            {"CUSTODIAN_SEAL_KEY": KEY, "CUSTODIAN_SEAL_KEY_PREVIOUS": "short"},
            None,
            "CUSTODIAN_SEAL_KEY_PREVIOUS: a seal key needs at least 32",
            "openssl rand",
        ),
    ],
)
def test_an_empty_or_lone_key_is_a_configuration_error(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    small_hub: ReferenceHub,
    env: dict[str, str],
    dotenv: str | None,
    named: str,
    fix: str,
) -> None:
    if dotenv is not None:
        (tmp_path / ".env").write_text(dotenv, encoding="utf-8")
    for name in SEAL_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    result = _unsealed_run(tmp_path, monkeypatch, small_hub, {"observations": ["x"]}, **env)
    assert result.code == 2, result.stderr
    assert named in result.stderr and fix in result.stderr
    assert "custodian: configuration error:" in result.stderr
    assert KEY not in result.stderr + result.stdout
    assert not (tmp_path / "memory" / "journal").exists()  # nothing written


def _milestone_then_reversal(
    tmp_path: Path, mp: pytest.MonkeyPatch, hub: ReferenceHub, **env: str
) -> dict[str, Any]:
    """Custodian sets web-t-1 done on a milestone; a person sets it back. Returns the plan."""
    body = {"workstream_id": "web-ws-1", "task_id": "web-t-1", "event_type": "milestone",
            "summary": "Pricing page shipped.", "source": "ben"}  # fmt: skip
    httpx.post(f"{hub.url}/events", json=body, timeout=5).raise_for_status()
    (said,) = hub_get(hub, "/events?task_id=web-t-1")["events"]
    done = {"tasks_to_update": [{"task_id": "web-t-1", "status": "done", "evidence": [said["id"]]}]}
    first = _unsealed_run(tmp_path, mp, hub, done, **env)
    assert [e["operation"] for e in first.json()["executed"]] == ["update_task_status"]
    back = {"status": "in_progress"}
    httpx.patch(f"{hub.url}/tasks/web-t-1", json=back, timeout=5).raise_for_status()
    note = {**body, "event_type": "note", "summary": "Not done: wrong prices.", "source": "ana"}
    httpx.post(f"{hub.url}/events", json=note, timeout=5).raise_for_status()
    return done


def _empty_the_writes_of_the_checkpoint(tmp_path: Path) -> None:
    """What someone who can write the memory volume can do: forget Custodian's own writes."""
    path = tmp_path / "memory" / "journal" / "website.checkpoint.json"
    saved = json.loads(path.read_text(encoding="utf-8"))
    assert saved["checkpoint"]["writes"]
    saved["checkpoint"]["writes"] = []
    path.write_text(json.dumps(saved, sort_keys=True, separators=(",", ":")), encoding="utf-8")


def test_unsealed_an_emptied_checkpoint_field_goes_unseen_and_the_output_says_unsealed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    _milestone_then_reversal(tmp_path, monkeypatch, small_hub)
    _empty_the_writes_of_the_checkpoint(tmp_path)
    # A milestone newer than the reversal: only Custodian's own write (forgotten) still defers.
    body = {"workstream_id": "web-ws-1", "task_id": "web-t-1", "event_type": "milestone",
            "summary": "Pricing page shipped again.", "source": "ben"}  # fmt: skip
    newer = httpx.post(f"{small_hub.url}/events", json=body, timeout=5).json()["id"]
    done = {"tasks_to_update": [{"task_id": "web-t-1", "status": "done", "evidence": [newer]}]}

    second = _unsealed_run(tmp_path, monkeypatch, small_hub, done)

    assert second.code == 0, second.stderr
    # The person's reversal is overridden: this is what an unsealed memory cannot detect ...
    assert [e["operation"] for e in second.json()["executed"]] == ["update_task_status"]
    assert hub_get(small_hub, "/tasks/web-t-1")["status"] == "done"
    # ... and every run says so, once.
    assert second.stderr.count("custodian: seals: unsealed") == 1
    assert "CUSTODIAN_SEAL_KEY is not set" in second.stderr
    court = _inspect(tmp_path, monkeypatch)
    assert court.code == 0 and court.stdout.rstrip().endswith("replay: ok")
    assert court.stdout.count("seals     unsealed: CUSTODIAN_SEAL_KEY is not set") == 1
    listing = run_cli(["inspect", "--memory", str(tmp_path / "memory")], tmp_path, monkeypatch)
    assert listing.stdout.count("seals     unsealed") == 1


def test_sealed_the_same_edit_is_detected_and_the_reversal_stands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    done = _milestone_then_reversal(tmp_path, monkeypatch, small_hub, CUSTODIAN_SEAL_KEY=KEY)
    _empty_the_writes_of_the_checkpoint(tmp_path)

    second = _unsealed_run(tmp_path, monkeypatch, small_hub, done, CUSTODIAN_SEAL_KEY=KEY)

    assert second.code == 0, second.stderr
    assert "journal: rebuilt" in second.stderr
    assert "reason=checkpoint carries no valid seal" in second.stderr
    assert "unsealed" not in second.stderr
    assert second.json()["executed"] == [] and second.json()["queued"] == []
    (held,) = second.json()["denied"]  # the rebuilt journal still knows ana's reversal: held
    assert held["code"] == "held_deference" and "'ana' set task web-t-1" in held["reason"]
    assert hub_get(small_hub, "/tasks/web-t-1")["status"] == "in_progress"
    court = _inspect(tmp_path, monkeypatch, CUSTODIAN_SEAL_KEY=KEY)
    assert court.code == 0 and "seals     verified: all" in court.stdout
    assert "unsealed" not in court.stdout
