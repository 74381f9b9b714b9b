"""`custodian run`, `watch`, `approvals` and `inspect` on a Roundup tracker named by its URL.

The commands are the same as on a state-hub; only `--hub roundup+http://...` differs. A dry run
writes nothing to the tracker; a pass of `watch` with the rule-based planner flags the blocked
task, and a run after it does not flag it twice; a person approves a queued task, which the
tracker then holds once; `inspect` replays the journal.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from custodian_runtime.clock import utc_now
from custodian_runtime.core.contract import NewTask, NewWorkstream
from custodian_runtime.settings import HubSettings
from custodian_runtime.statehub.connect import open_hub
from support.roundup import Tracker
from support.runs import CANON, plan_response, run_cli


@pytest.fixture
def tracker(roundup: Tracker) -> Tracker:
    """The session's tracker, whose `website` domain has a blocked task without a flag."""
    with open_hub(HubSettings(url=roundup.hub_url), Path("."), utc_now) as client:
        website = NewWorkstream(domain="website", title="Launch", owner="ana")
        ws = client.create_workstream(website, idempotency_key="cli-website-1").resource.id
        blocked = NewTask(workstream_id=ws, title="Write the copy", status="blocked")
        client.create_task(blocked, idempotency_key="cli-website-2")
        client.create_task(
            NewTask(workstream_id=ws, title="Pick a host"), idempotency_key="cli-website-3"
        )
    return roundup


def _flags(tracker: Tracker) -> list[str]:
    with open_hub(HubSettings(url=tracker.hub_url), Path("."), utc_now) as client:
        return [flag.note for flag in client.list_flags(domain="website")]


def test_run_watch_approvals_and_inspect_on_a_roundup_tracker(
    tracker: Tracker, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = tmp_path / "memory"
    common = ["--domain", "website", "--hub", tracker.hub_url, "--memory", str(memory)]
    run = ["run", *common, "--canon", str(CANON), "--json"]

    dry = run_cli([*run, "--llm", "offline", "--dry-run"], tmp_path, monkeypatch)
    assert dry.code == 0, dry.stderr
    assert _flags(tracker) == []  # a dry run writes nothing

    watch = [
        "watch",
        "--domains",
        "website",
        "--once",
        "--hub",
        tracker.hub_url,
        "--llm",
        "offline",
    ]
    watched = run_cli(
        [*watch, "--memory", str(memory), "--canon", str(CANON)], tmp_path, monkeypatch
    )
    assert watched.code == 0, watched.stderr
    [note] = _flags(tracker)
    assert "Write the copy" in note or "blocked" in note.lower()
    again = run_cli([*run, "--llm", "offline"], tmp_path, monkeypatch)
    assert again.code == 0, again.stderr
    assert len(_flags(tracker)) == 1  # the task has its flag: not raised twice

    with open_hub(HubSettings(url=tracker.hub_url), Path("."), utc_now) as client:
        [workstream] = client.list_workstreams(domain="website")
    create = {
        "operation": "create_task",
        "rationale": "The launch needs a sitemap.",
        "params": {"workstream_id": workstream.id, "title": "Add a sitemap"},
    }
    (tmp_path / "answer.md").write_text(plan_response({"proposals": [create]}), encoding="utf-8")
    # Nothing moved since the last run: the tracker's revision says so, and the run skips.
    skipped = run_cli([*run, "--llm", "file:answer.md"], tmp_path, monkeypatch)
    assert skipped.json()["status"] == "skipped", skipped.stdout
    queued = run_cli([*run, "--llm", "file:answer.md", "--force"], tmp_path, monkeypatch)
    assert queued.code == 0, queued.stderr
    [item] = queued.json()["queued"]

    listed = run_cli(["approvals", "--memory", str(memory), "list"], tmp_path, monkeypatch)
    assert item["approval_id"] in listed.stdout
    approve = ["approvals", "approve", item["approval_id"], "--by", "ana", "--hub", tracker.hub_url]
    approved = run_cli([*approve, "--memory", str(memory), "--json"], tmp_path, monkeypatch)
    assert approved.code == 0, approved.stdout + approved.stderr
    with open_hub(HubSettings(url=tracker.hub_url), Path("."), utc_now) as client:
        summary = client.domain_summary("website")
    titles = [task.title for ws in summary.workstreams for task in ws.tasks]
    assert titles.count("Add a sitemap") == 1

    inspected = run_cli(["inspect", *common[:2], "--memory", str(memory)], tmp_path, monkeypatch)
    assert inspected.code == 0, inspected.stderr
    assert inspected.stdout.rstrip().endswith("replay: ok"), inspected.stdout
    account = json.loads(approved.stdout)
    assert "executed" in account["message"], account["message"]
    assert account["item"]["hub_at"] == tracker.hub_url.replace("custodian:custodian-pw@", "")
