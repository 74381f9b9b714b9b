"""An approval's write whose answer never came stays open; approving again settles it first.

Each authorization has its own key, so approving an item again while an earlier authorization of
it is open could be a second write: the new approval observes the hub first, closes the open
write that did not land, and only then sends its own, once. An approval cut off at its deadline
is `unknown` (exit 5), never `failed`, and the next run that finds it makes the item executed.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

from support.runs import hub_get
from support.spine import (
    HOLD_TIMEOUT_S,
    WriteHold,
    clean_env,
    custodian_cli,
    finish,
    held_hub,
    journal,
    run_argv,
    start_run,
    write_plan,
)

BLOCK = {"tasks_to_update": [{"task_id": "web-t-3", "status": "blocked", "reason": "waits"}]}
QUIET = {"observations": ["Nothing to do."]}


def _queue(tmp_path: Path, hub_url: str) -> str:
    llm = write_plan(tmp_path / "block.md", BLOCK)
    code, out, err = finish(start_run(tmp_path, run_argv(hub_url, llm, tmp_path / "memory")))
    assert code == 0, err
    [queued] = json.loads(out)["queued"]
    return str(queued["approval_id"])


def _approve_argv(tmp_path: Path, hub_url: str, aid: str) -> list[str]:
    memory = str(tmp_path / "memory")
    return [
        sys.executable,
        "-m",
        "custodian_runtime",
        "approvals",
        "--memory",
        memory,
        "approve",
        aid,
        "--by",
        "ana",
        "--hub",
        hub_url,
    ]


def _settling_run(tmp_path: Path, hub_url: str) -> dict[str, object]:
    quiet = write_plan(tmp_path / "quiet.md", QUIET)
    code, out, err = finish(
        start_run(tmp_path, run_argv(hub_url, quiet, tmp_path / "memory", "--force"))
    )
    assert code == 0, err
    [report] = json.loads(out)["reconciled"]
    return dict(report)


def test_approving_again_after_a_killed_approve_settles_its_write_then_writes_once(
    tmp_path: Path,
) -> None:
    hold = WriteHold(nth=1, phase="before_commit")
    with held_hub(tmp_path, hold) as hub:
        aid = _queue(tmp_path, hub.url)
        proc = subprocess.Popen(
            _approve_argv(tmp_path, hub.url, aid),
            cwd=tmp_path,
            env=clean_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert hold.reached.wait(HOLD_TIMEOUT_S), "the approval never reached its write"
        proc.kill()
        proc.communicate(timeout=30)
        hold.release(abort=True)
        item = json.loads((tmp_path / "memory" / "approvals" / f"{aid}.json").read_text())
        assert item["status"] == "pending"

        again = subprocess.run(
            _approve_argv(tmp_path, hub.url, aid),
            cwd=tmp_path,
            env=clean_env(),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert again.returncode == 0, again.stdout + again.stderr
        assert hub_get(hub, "/tasks/web-t-3")["status"] == "blocked"
        assert hub_get(hub, "/tasks/web-t-3")["version"] == 2  # written once
        records = journal(tmp_path / "memory")
        assert len([r for r in records if r.kind == "authorized"]) == 2
        [closed] = [r for r in records if r.kind == "failed" and r.data.get("reconciles")]
        assert "approved the item again" in closed.data["error"]
        item = json.loads((tmp_path / "memory" / "approvals" / f"{aid}.json").read_text())
        assert item["status"] == "executed"

        quiet = write_plan(tmp_path / "quiet.md", {"observations": ["Nothing to do."]})
        code, out, err = finish(start_run(tmp_path, run_argv(hub.url, quiet, tmp_path / "memory")))
        assert code == 0, err
        assert json.loads(out)["reconciled"] == []
        assert hub_get(hub, "/tasks/web-t-3")["version"] == 2


def test_an_approval_cut_off_at_its_deadline_is_unknown_and_found_by_the_next_run(
    tmp_path: Path,
) -> None:
    hold = WriteHold(nth=1, phase="after_commit")
    with held_hub(tmp_path, hold) as hub:
        aid = _queue(tmp_path, hub.url)
        env = clean_env(STATE_HUB_MAX_TOTAL_S="1", STATE_HUB_MAX_ATTEMPTS="1")
        proc = subprocess.Popen(
            _approve_argv(tmp_path, hub.url, aid),
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert hold.reached.wait(HOLD_TIMEOUT_S), "the approval never reached its write"
        threading.Timer(3.0, hold.release).start()
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 5, err
        assert f"{aid}: Approved by ana on " in out and "no answer came" in out
        item = json.loads((tmp_path / "memory" / "approvals" / f"{aid}.json").read_text())
        assert item["status"] == "unknown"
        kinds = [r.kind for r in journal(tmp_path / "memory") if r.run_id.startswith("approval-")]
        assert kinds[-2:] == ["dispatched", "unknown"] and "failed" not in kinds

        report = _settling_run(tmp_path, hub.url)
        assert report["outcome"] == "found"
        item = json.loads((tmp_path / "memory" / "approvals" / f"{aid}.json").read_text())
        assert item["status"] == "executed"
        inspected = custodian_cli(
            tmp_path, "inspect", "--domain", "website", "--memory", str(tmp_path / "memory")
        )
        assert inspected.returncode == 0, inspected.stdout
