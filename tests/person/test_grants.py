"""Grants through the CLI against a real reference hub: a covered proposal runs without a card.

Everything else still applies, and a proposal outside every live grant is queued as today.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from custodian_runtime.core.journal.kinds import GrantUsed, decode
from support.runs import hub_get
from support.spine import custodian_cli, finish, held_hub, journal, run_argv, start_run, write_plan


def _block(task: str, status: str = "blocked") -> dict[str, Any]:
    return {
        "operation": "set_task_status",
        "params": {"task_id": task, "status": status},
        "rationale": "the vendor has not answered",
    }


def _summary(tmp_path: Path, hub_url: str, memory: Path, *items: dict[str, Any]) -> Any:
    plan = {"observations": ["Tasks wait on others."], "proposals": list(items)}
    llm = write_plan(tmp_path / "plan.md", plan)
    code, out, err = finish(start_run(tmp_path, run_argv(hub_url, llm, memory, "--force")))
    assert code == 0, err
    return json.loads(out)


def _items_of_run(tmp_path: Path, hub_url: str, memory: Path, *items: dict[str, Any]) -> list[Any]:
    return list(_summary(tmp_path, hub_url, memory, *items)["items"])


def _issue(tmp_path: Path, hub_url: str, memory: Path, *extra: str) -> str:
    done = custodian_cli(
        tmp_path, "grants", "issue", "--domain", "website", "--operation", "set_task_status",
        "--hub", hub_url, "--memory", str(memory), "--by", "ana", "--reason", "routine blocks",
        *extra,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout.strip()


def _grants(tmp_path: Path, memory: Path) -> list[dict[str, Any]]:
    done = custodian_cli(tmp_path, "grants", "list", "--json", "--memory", str(memory))
    assert done.returncode == 0, done.stderr
    return list(json.loads(done.stdout))


def test_a_covered_proposal_executes_under_the_grant_once_and_its_use_is_journaled(
    tmp_path: Path,
) -> None:
    memory = tmp_path / "memory"
    with held_hub(tmp_path, None) as hub:
        grant = _issue(tmp_path, hub.url, memory, "--max", "1", "--expires", "7d")
        assert grant.startswith("grant-")
        summary = _summary(tmp_path, hub.url, memory, _block("web-t-4"))
        first = summary["items"]
        assert first[0]["outcome"] == "executed", first
        assert first[0]["grant"] == grant
        assert f"executes under grant {grant}" in first[0]["reason"]
        assert summary["modes"]["set_task_status"] == "ask"
        note = Path(summary["note"]).read_text("utf-8")
        assert f"executed (grant {grant})" in note.lower() and '"set_task_status": "ask"' in note
        replay = custodian_cli(tmp_path, "replay", summary["run_id"], "--memory", str(memory))
        assert replay.returncode == 0, replay.stdout + replay.stderr
        assert hub_get(hub, "/tasks/web-t-4")["status"] == "blocked"
        used = [decode(r) for r in journal(memory) if r.kind == "grant_used"]
        assert used == [GrantUsed(grant_id=grant, index=0, operation="set_task_status",
                                  fingerprint=used[0].fingerprint)]  # fmt: skip
        authorized = [r for r in journal(memory) if r.kind == "authorized"]
        assert authorized[-1].data["by"] == f"grant:{grant}"
        [listed] = _grants(tmp_path, memory)
        assert (listed["uses"], listed["left"], listed["state"]) == (1, 0, "used up")
        # Past --max: queued as today.
        second = _items_of_run(tmp_path, hub.url, memory, _block("web-t-1"))
        assert second[0]["outcome"] == "queued", second
        assert hub_get(hub, "/tasks/web-t-1")["status"] == "in_progress"
        inspected = custodian_cli(
            tmp_path, "inspect", "--domain", "website", "--memory", str(memory)
        )
        assert inspected.returncode == 0, inspected.stdout + inspected.stderr


def test_where_mismatch_revoke_and_another_hub_leave_the_proposal_queued(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    other = tmp_path / "other"
    other.mkdir()
    with held_hub(tmp_path, None) as hub, held_hub(other, None) as elsewhere:
        _issue(tmp_path, hub.url, memory, "--max", "5", "--expires", "36h",
               "--where", "task_id=web-t-2")  # fmt: skip
        _issue(tmp_path, elsewhere.url, memory, "--max", "5", "--expires", "7d")
        revoked = _issue(tmp_path, hub.url, memory, "--max", "5", "--expires", "7d")
        done = custodian_cli(
            tmp_path, "grants", "revoke", revoked, "--by", "bo", "--reason", "too broad",
            "--memory", str(memory),
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        outcome = _items_of_run(tmp_path, hub.url, memory, _block("web-t-4"))
        assert outcome[0]["outcome"] == "queued", outcome
        assert hub_get(hub, "/tasks/web-t-4")["status"] == "in_progress"
        states = sorted(g["state"] for g in _grants(tmp_path, memory))
        assert states == ["live", "live", "revoked"]
        # The narrowed grant covers the task it names.
        covered = _items_of_run(tmp_path, hub.url, memory, _block("web-t-2", "cancelled"))
        assert covered[0]["outcome"] == "executed", covered


def test_a_grant_never_skips_the_rolling_budget_of_one_task(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    with held_hub(tmp_path, None) as hub:
        _issue(tmp_path, hub.url, memory, "--max", "5", "--expires", "7d")
        assert (
            _items_of_run(tmp_path, hub.url, memory, _block("web-t-4"))[0]["outcome"] == "executed"
        )
        again = _items_of_run(tmp_path, hub.url, memory, _block("web-t-4", "cancelled"))
        assert again[0]["outcome"] == "queued", again
        assert "rolling budget" in again[0]["reason"]
        assert hub_get(hub, "/tasks/web-t-4")["status"] == "blocked"


def test_never_grantable_operations_and_bad_bounds_are_refused_with_exit_2(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    with held_hub(tmp_path, None) as hub:
        for op in ("write_canon", "resolve_decision", "add_progress_event"):
            done = custodian_cli(
                tmp_path, "grants", "issue", "--domain", "website", "--operation", op,
                "--max", "3", "--expires", "7d", "--hub", hub.url, "--memory", str(memory),
                "--by", "ana", "--reason", "x",
            )  # fmt: skip
            assert done.returncode == 2, done.stderr
            assert "grantable" in done.stderr or "cannot be granted" in done.stderr
        too_long = custodian_cli(
            tmp_path, "grants", "issue", "--domain", "website", "--operation", "create_task",
            "--max", "3", "--expires", "31d", "--hub", hub.url, "--memory", str(memory),
            "--by", "ana", "--reason", "x",
        )  # fmt: skip
        assert too_long.returncode == 2 and "at most 30 days" in too_long.stderr
        assert _grants(tmp_path, memory) == []
