"""Exactly once on a real Redmine, which has no idempotency keys: a write whose answer was lost is
found by its mark before it is sent again, counted on Redmine itself; and `custodian run` looks
after a domain kept there, by its `redmine+http://` URL.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import httpx
import pytest

from custodian_runtime.clock import utc_now
from custodian_runtime.core.contract import (
    NewEvent,
    NewFlag,
    NewTask,
    NewWorkstream,
    TaskStatusUpdate,
)
from custodian_runtime.core.journal.keys import run_key
from custodian_runtime.settings import HubSettings
from custodian_runtime.statehub import StateHubClient
from custodian_runtime.statehub.connect import open_hub
from support.redmine import Redmine
from support.runs import CANON, plan_response, run_cli
from support.trackers import KILLED_ON_THE_ANSWER, AnswerLostOnce, seed_domain

KEY = run_key("r20261207T070010Z-7029e2", "0749ef9be7d331c33636acd7995601a0", "a1b2c3d4e5f6")

# A process that sends one event through the Redmine backend and is SIGKILLed the moment
# Redmine's answer to its write arrives: the note is kept there, its receipt never recorded.
KILLED_AFTER_THE_WRITE = (
    KILLED_ON_THE_ANSWER
    + """
from custodian_runtime.core.contract import NewEvent

url, target, key = sys.argv[1:]
hub = HubSettings(url=url, max_attempts=1)
with open_hub(hub, None, utc_now, transport=KilledOnTheAnswer()) as client:
    event = NewEvent(workstream_id=target, event_type="note", summary=key, source="custodian")
    client.add_event(event, idempotency_key=key)
"""
)


def _client(
    redmine: Redmine,
    tmp_path: Path,
    transport: httpx.BaseTransport | None = None,
    attempts: int = 1,
) -> AbstractContextManager[StateHubClient]:
    hub = HubSettings(url=redmine.hub_url, max_attempts=attempts)
    return open_hub(hub, tmp_path, utc_now, transport=transport)


def _issue(redmine: Redmine, contract_id: str) -> dict[str, Any]:
    """An issue as Redmine itself gives it, with its journals (as its admin)."""
    response = httpx.get(
        f"{redmine.web}/issues/{contract_id[1:]}.json",
        params={"include": "journals"},
        headers={"X-Redmine-API-Key": redmine.key},
    )
    response.raise_for_status()
    issue: dict[str, Any] = response.json()["issue"]
    return issue


def _count(redmine: Redmine, project: str, subject: str) -> int:
    response = httpx.get(
        f"{redmine.web}/issues.json",
        params={"project_id": project, "status_id": "*", "subject": subject},
        headers={"X-Redmine-API-Key": redmine.key},
    )
    response.raise_for_status()
    return int(response.json()["total_count"])


def _domain(redmine: Redmine, tmp_path: Path, name: str) -> tuple[str, str]:
    with _client(redmine, tmp_path) as client:
        return seed_domain(client, name)


@pytest.mark.parametrize("what", ["event", "flag", "status"])
def test_a_lost_answer_is_found_by_its_mark_and_not_written_twice(
    redmine: Redmine, tmp_path: Path, what: str
) -> None:
    domain = f"rm-lost-{what}"
    workstream, task = _domain(redmine, tmp_path, domain)
    lossy = AnswerLostOnce()
    with _client(redmine, tmp_path, lossy, attempts=3) as client:
        if what == "event":
            event = NewEvent(
                workstream_id=workstream,
                task_id=task,
                event_type="note",
                summary="Lost once.",
                source="custodian",
            )
            sent: Any = client.add_event(event, idempotency_key=KEY)
        elif what == "flag":
            flag = NewFlag(task_id=task, note="Who signs?", raised_by="custodian")
            sent = client.add_flag(flag, idempotency_key=KEY)
        else:
            start = TaskStatusUpdate(status="in_progress")
            sent = client.update_task_status(task, start, idempotency_key=KEY, if_match=1)
    assert (sent.attempts, sent.replayed) == (2, True)
    assert lossy.writes == 1  # the retry found the mark: nothing was sent twice
    notes = [j for j in _issue(redmine, task)["journals"] if j["notes"]]
    if what == "event":
        assert [j["notes"].split("\n")[0] for j in notes] == ["Lost once."]
    elif what == "flag":
        assert _count(redmine, domain, "Who signs?") == 1
    else:
        journals = _issue(redmine, task)["journals"]
        assert [d["name"] for j in journals for d in j["details"]][:1] == ["status_id"]
        assert len(journals) == 1 and sent.resource.version == 2


def test_a_process_killed_after_redmine_kept_its_note_is_not_written_twice(
    redmine: Redmine, tmp_path: Path
) -> None:
    workstream, _ = _domain(redmine, tmp_path, "rm-killed")
    key = "rm-killed-1"
    killed = subprocess.run(
        [sys.executable, "-c", KILLED_AFTER_THE_WRITE, redmine.hub_url, workstream, key],
        capture_output=True,
        timeout=60,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    with _client(redmine, tmp_path) as client:  # the next run sends the same write again
        event = NewEvent(
            workstream_id=workstream, event_type="note", summary=key, source="custodian"
        )
        again = client.add_event(event, idempotency_key=key)
    notes = [j for j in _issue(redmine, workstream)["journals"] if j["notes"]]
    assert len(notes) == 1 and again.resource.id == f"e{notes[0]['id']}"
    assert again.replayed is True


def test_custodian_run_and_watch_look_after_a_domain_kept_in_redmine(
    redmine: Redmine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    domain = "rm-run"
    with _client(redmine, tmp_path) as client:
        ws = client.create_workstream(
            NewWorkstream(domain=domain, title="Launch"), idempotency_key="rm-run-w"
        )
        task = NewTask(workstream_id=ws.resource.id, title="Sign the contract", status="blocked")
        made = client.create_task(task, idempotency_key="rm-run-t").resource
    argv = ["run", "--domain", domain, "--llm", "offline", "--memory", str(tmp_path / "memory")]
    argv += ["--canon", str(CANON), "--hub", redmine.hub_url, "--json"]
    first = run_cli(argv, tmp_path, monkeypatch)
    assert first.code == 0, first.stderr
    with _client(redmine, tmp_path) as client:
        flags = client.list_flags(domain=domain)
    assert [f.task_id for f in flags] == [made.id]  # the blocked task was flagged, in Redmine
    again = run_cli(argv, tmp_path, monkeypatch)
    assert again.code == 0, again.stderr
    watch = ["watch", "--domains", domain, "--once", *argv[3:-1]]  # the same, as one pass
    watched = run_cli(watch, tmp_path, monkeypatch)
    assert watched.code == 0, watched.stderr
    with _client(redmine, tmp_path) as client:
        assert len(client.list_flags(domain=domain)) == 1  # and not twice, nor a third time


def test_a_person_approves_a_queued_task_on_redmine_and_inspect_replays_it(
    redmine: Redmine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    domain = "rm-approve"
    with _client(redmine, tmp_path) as client:
        ws = client.create_workstream(
            NewWorkstream(domain=domain, title="Launch"), idempotency_key="rm-approve-w"
        ).resource
    create = {
        "operation": "create_task",
        "rationale": "The launch needs a sitemap.",
        "params": {"workstream_id": ws.id, "title": "Add a sitemap"},
    }
    (tmp_path / "answer.md").write_text(plan_response({"proposals": [create]}), encoding="utf-8")
    memory = ["--memory", str(tmp_path / "memory")]
    run = ["run", "--domain", domain, "--llm", "file:answer.md", *memory, "--canon", str(CANON)]
    queued = run_cli([*run, "--hub", redmine.hub_url, "--json"], tmp_path, monkeypatch)
    assert queued.code == 0, queued.stderr
    [item] = queued.json()["queued"]
    listed = run_cli(["approvals", *memory, "list"], tmp_path, monkeypatch)
    assert item["approval_id"] in listed.stdout
    approve = ["approvals", "approve", item["approval_id"], "--hub", redmine.hub_url, *memory]
    approved = run_cli(approve, tmp_path, monkeypatch)
    assert approved.code == 0, approved.stdout + approved.stderr
    again = run_cli(approve, tmp_path, monkeypatch)  # decided once: nothing is sent again
    assert again.code != 0
    with _client(redmine, tmp_path) as client:
        summary = client.domain_summary(domain)
    titles = [task.title for w in summary.workstreams for task in w.tasks]
    assert titles.count("Add a sitemap") == 1
    inspected = run_cli(["inspect", "--domain", domain, *memory], tmp_path, monkeypatch)
    assert inspected.code == 0, inspected.stderr
    assert inspected.stdout.rstrip().endswith("replay: ok"), inspected.stdout
