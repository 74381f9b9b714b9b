"""A person's change made in a Roundup tracker is their word, as a person's on the hub (#41).

The same scenarios run on the reference hub and on a real Roundup tracker. On the hub a person
sets a status with `PATCH /tasks` and says so with a `status_change` event of theirs; in Roundup a
person changes the task as the user they logged in as, and the tracker's detector says so for
them (a `status_change` event made as them). A person's event made in the tracker is theirs:
its `source` is their username, whatever was typed. The runtime then defers to it and counts it
as evidence exactly as on the hub.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args

import httpx
import pytest

from custodian_hub import ReferenceHub
from custodian_runtime.clock import utc_now
from custodian_runtime.core.contract import (
    EVENT_TYPES,
    TASK_STATUSES,
    WORKSTREAM_STATUSES,
    DecisionStatus,
    FlagStatus,
    NewTask,
    NewWorkstream,
)
from custodian_runtime.core.trackers import roundup as rd
from custodian_runtime.settings import HubSettings
from custodian_runtime.statehub import StateHubClient
from custodian_runtime.statehub.connect import open_hub
from support.roundup import SCHEMA, Person, Tracker
from support.runs import run_plan

_names = itertools.count()


@dataclass(frozen=True)
class World:
    """A hub of one backend, a domain with one task Custodian made, and how a person acts."""

    url: str
    domain: str
    workstream: str
    task: str
    write: Callable[[str, str, str], str]  # (who, event_type, summary) on the task: its id
    set_status: Callable[[str, str], None]  # (who, status) of the task, as a person does
    resolve_flag: Callable[[str, str], None]  # (who, flag id), as a person does

    def client(self) -> Any:
        return open_hub(HubSettings(url=self.url, max_attempts=1), Path("."), utc_now)


def _seed(url: str, domain: str) -> tuple[str, str]:
    with open_hub(HubSettings(url=url), Path("."), utc_now) as client:
        ws = NewWorkstream(domain=domain, title="Launch", owner="ana")
        w = client.create_workstream(ws, idempotency_key=f"{domain}-1").resource.id
        task = NewTask(workstream_id=w, title="Pricing page", status="in_progress")
        return w, client.create_task(task, idempotency_key=f"{domain}-2").resource.id


def _on_the_hub(hub: ReferenceHub, domain: str) -> World:
    w, t = _seed(hub.url, domain)

    def write(who: str, event_type: str, summary: str) -> str:
        body = {"workstream_id": w, "task_id": t, "event_type": event_type,
                "summary": summary, "source": who}  # fmt: skip
        made = httpx.post(f"{hub.url}/events", json=body, timeout=5)
        made.raise_for_status()
        return str(made.json()["id"])

    def set_status(who: str, status: str) -> None:
        httpx.patch(f"{hub.url}/tasks/{t}", json={"status": status}, timeout=5).raise_for_status()
        write(who, "status_change", f"I set it to {status}.")  # the hub cannot tell who: they say

    def resolve_flag(who: str, flag: str) -> None:
        resolved = {"status": "resolved"}
        httpx.patch(f"{hub.url}/flags/{flag}", json=resolved, timeout=5).raise_for_status()

    return World(hub.url, domain, w, t, write, set_status, resolve_flag)


def _in_roundup(tracker: Tracker, domain: str, people: dict[str, Person]) -> World:
    w, t = _seed(tracker.hub_url, domain)

    def person(who: str) -> Person:
        return people.setdefault(who, Person(tracker, who))

    def write(who: str, event_type: str, summary: str) -> str:
        return person(who).write(t, event_type, summary)  # no source typed: the tracker knows

    def set_status(who: str, status: str) -> None:
        person(who).set_status(t, status).raise_for_status()  # nothing said: the tracker says

    def resolve_flag(who: str, flag: str) -> None:
        person(who).resolve_flag(flag).raise_for_status()

    return World(tracker.hub_url, domain, w, t, write, set_status, resolve_flag)


@pytest.fixture(params=("state-hub", "roundup"))
def world(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[World]:
    """A fresh domain on each backend."""
    domain = f"people-{next(_names)}"
    if request.param == "state-hub":
        with ReferenceHub(tmp_path / "hub.sqlite3") as hub:
            yield _on_the_hub(hub, domain)
        return
    people: dict[str, Person] = {}
    yield _in_roundup(request.getfixturevalue("roundup"), domain, people)
    for person in people.values():
        person.close()


def _task(world: World) -> Any:
    client: StateHubClient
    with world.client() as client:
        return client.get_task(world.task)


def test_a_persons_word_counts_as_evidence_and_their_setting_back_is_held(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shipped = world.write("ben", "milestone", "Pricing page shipped.")
    done = {"tasks_to_update": [{"task_id": world.task, "status": "done", "evidence": [shipped]}]}
    first = run_plan(
        tmp_path, monkeypatch, world.url, done, "--force", "--json", domain=world.domain
    ).ok()
    # Ben's milestone is a person's word: it carries the sanctioned move on its own.
    assert [e["operation"] for e in first.json()["executed"]] == ["update_task_status"], str(
        first.json()
    )
    assert _task(world).status == "done"
    world.set_status("ana", "in_progress")
    world.write("ana", "note", "Not done: the pricing table is still wrong.")
    second = run_plan(
        tmp_path, monkeypatch, world.url, done, "--force", "--json", domain=world.domain
    ).ok()
    assert second.json()["executed"] == [] and second.json()["queued"] == []
    (held,) = second.json()["denied"]
    assert held["code"] == "held_deference", held
    assert (
        f"is held: 'ana' set task {world.task} to in_progress after Custodian set it to done"
        in held["reason"]
    ), held["reason"]
    assert f"(run {first.json()['run_id']})" in held["reason"]
    after = _task(world)
    assert after.status == "in_progress" and after.version == 3


def test_a_status_a_person_set_is_held_with_their_word_not_asked_again(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    world.set_status("ana", "todo")
    with world.client() as client:
        said = [e for e in client.list_events(task_id=world.task) if e.source == "ana"]
    (event,) = said
    assert event.event_type == "status_change"
    block = {"operation": "set_task_status", "rationale": "stuck",
             "params": {"task_id": world.task, "status": "blocked"}}  # fmt: skip
    result = run_plan(
        tmp_path,
        monkeypatch,
        world.url,
        {"proposals": [block]},
        "--force",
        "--json",
        domain=world.domain,
    ).ok()
    assert result.json()["queued"] == [] and result.json()["executed"] == []
    (held,) = result.json()["denied"]
    assert held["code"] == "held_deference", held
    assert f"'ana' set task {world.task} to todo on the hub (event {event.id})" in held["reason"]
    assert _task(world).status == "todo"


def test_a_flag_a_person_resolved_stays_resolved_until_a_person_writes_again(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    flag = {"tasks_to_flag": [{"task_id": world.task, "note": "The pricing has no owner."}]}
    (raised,) = (
        run_plan(tmp_path, monkeypatch, world.url, flag, "--force", "--json", domain=world.domain)
        .ok()
        .json()["executed"]
    )
    world.resolve_flag("ana", raised["hub_id"])
    second = (
        run_plan(tmp_path, monkeypatch, world.url, flag, "--force", "--json", domain=world.domain)
        .ok()
        .json()
    )
    assert second["executed"] == [] and second["queued"] == []
    (held,) = second["denied"]
    assert held["code"] == "held_deference", held
    assert f"held: a person resolved flag {raised['hub_id']}" in held["reason"]
    world.write("ben", "note", "Still nobody owns the pricing.")
    again = {"tasks_to_flag": [{"task_id": world.task, "note": "Ben says: still no owner."}]}
    third = (
        run_plan(tmp_path, monkeypatch, world.url, again, "--force", "--json", domain=world.domain)
        .ok()
        .json()
    )
    assert [e["operation"] for e in third["executed"]] == ["flag_for_human"]
    with world.client() as client:
        flags = client.list_flags(domain=world.domain)
    assert [(f.status, f.resolved_at is not None) for f in flags] == [
        ("resolved", True),
        ("open", False),
    ]


# --- what only the tracker does: it knows who -------------------------------------------------


def test_an_event_a_person_makes_in_the_tracker_is_theirs_whatever_they_type(
    roundup: Tracker,
) -> None:
    world = _in_roundup(roundup, f"people-{next(_names)}", people := {})
    ben = people.setdefault("ben", Person(roundup, "ben"))
    try:
        typed = ben.write(world.task, "note", "Signed off.", source="custodian")
        refused = ben.make_event({"task": world.task[1:], "summary": "no type"})
        moved = ben.set_status(world.task, "finished")
        ben.edit_event(typed, {"source": "custodian", "summary": "Signed off, twice."})
    finally:
        ben.close()
    with world.client() as client:
        events = {e.id: e for e in client.list_events(task_id=world.task)}
        task = client.get_task(world.task)
    assert events[typed].source == "ben" and events[typed].workstream_id == world.workstream
    assert events[typed].summary == "Signed off, twice."  # edited, and still ben's
    assert refused.status_code >= 400 and "event_type must be one of" in refused.text
    assert moved.status_code >= 400 and "status must be one of" in moved.text
    # Custodian's own writes carry their marks: they make no person's event.
    assert [e.source for e in events.values()] == ["ben"] and task.status == "in_progress"


def test_a_persons_edit_of_a_tasks_title_is_a_change_no_one_said_they_made(
    roundup: Tracker, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = _in_roundup(roundup, f"people-{next(_names)}", {})
    ana = Person(roundup, "ana")
    try:
        ana.edit_task(world.task, {"title": "Pricing page, in euros"}).raise_for_status()
    finally:
        ana.close()
    with world.client() as client:
        assert not client.list_events(task_id=world.task)  # no status moved: nothing said
    block = {"operation": "set_task_status", "rationale": "stuck",
             "params": {"task_id": world.task, "status": "blocked"}}  # fmt: skip
    (asked,) = (
        run_plan(
            tmp_path,
            monkeypatch,
            world.url,
            {"proposals": [block]},
            "--force",
            "--json",
            domain=world.domain,
        )
        .ok()
        .json()["queued"]
    )
    assert asked["code"] == "deferred", asked
    assert (
        f"task {world.task} was changed on the hub by someone other than Custodian"
        in (asked["reason"])
    )


def test_the_detector_knows_the_contracts_words() -> None:
    tree = ast.parse((SCHEMA / "custodian-detector.py.in").read_text(encoding="utf-8"))
    words = {
        target.id: ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name) and target.id.isupper() and target.id != "STATUSES"
    }
    assert words["TASK_STATUSES"] == TASK_STATUSES and words["EVENT_TYPES"] == EVENT_TYPES
    assert words["WORKSTREAM_STATUSES"] == WORKSTREAM_STATUSES
    assert words["OPEN_OR_RESOLVED"] == get_args(FlagStatus) == get_args(DecisionStatus)


def test_times_are_the_detectors_to_the_microsecond_else_roundups_own() -> None:
    item = {
        "creation": "2026-12-07.07:49:27",
        "activity": "2026-12-07.07:50:00",
        "created_at": "2026-12-07T07:49:27.757328Z",
        "updated_at": "typed by hand",
    }
    assert rd.stamp(item, "created_at", "creation") == "2026-12-07T07:49:27.757328Z"
    assert rd.stamp(item, "updated_at", "activity") == "2026-12-07T07:50:00Z"
    assert rd.task({"id": "3", **item})["updated_at"] == "2026-12-07T07:50:00Z"
