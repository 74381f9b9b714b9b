"""A person's change made in Redmine itself, as the Redmine backend reads it: a note they type is
an event of theirs, a status they set moves the task's version and status, and a status the
mapping does not know is refused naming it, not guessed."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from custodian_runtime.clock import utc_now
from custodian_runtime.core.contract import NewTask, NewWorkstream
from custodian_runtime.errors import HubError
from custodian_runtime.settings import HubSettings
from custodian_runtime.statehub.connect import open_hub
from support.redmine import Redmine


def _person(redmine: Redmine, contract_id: str, change: dict[str, object]) -> None:
    """A change made in Redmine (as its admin, the way its own pages would make it)."""
    httpx.put(
        f"{redmine.web}/issues/{contract_id[1:]}.json",
        json={"issue": change},
        headers={"X-Redmine-API-Key": redmine.key},
    ).raise_for_status()


def _status_id(redmine: Redmine, name: str) -> int:
    listed = httpx.get(
        f"{redmine.web}/issue_statuses.json", headers={"X-Redmine-API-Key": redmine.key}
    ).json()["issue_statuses"]
    return int(next(s["id"] for s in listed if s["name"] == name))


def test_a_persons_note_and_status_in_redmine_are_read_as_theirs(
    redmine: Redmine, tmp_path: Path
) -> None:
    hub = HubSettings(url=redmine.hub_url, max_attempts=1)
    with open_hub(hub, tmp_path, utc_now) as client:
        ws = client.create_workstream(
            NewWorkstream(domain="rm-person", title="Launch"), idempotency_key="rm-person-w"
        ).resource.id
        task = client.create_task(
            NewTask(workstream_id=ws, title="Sign"), idempotency_key="rm-person-t"
        ).resource.id
        _person(
            redmine,
            task,
            {"notes": "Signed -- it is done.", "status_id": _status_id(redmine, "Closed")},
        )
        [event] = client.list_events(domain="rm-person")
        assert (event.summary, event.event_type, event.source, event.task_id) == (
            "Signed -- it is done.",
            "note",
            "Redmine Admin",
            task,
        )
        found = client.get_task(task)
        assert (found.status, found.version) == ("done", 2)
        _person(redmine, task, {"status_id": _status_id(redmine, "Resolved")})
        with pytest.raises(HubError, match="status 'Resolved'"):
            client.get_task(task)
        # Until it is fixed in Redmine: then the task reads again (and the overview of every
        # domain, which the same status would refuse, as the session's other tests read it).
        _person(redmine, task, {"status_id": _status_id(redmine, "Closed")})
        assert client.get_task(task).status == "done"
