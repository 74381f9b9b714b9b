"""One contract, every backend: the same script of reads and writes on the reference hub (the
oracle), on a real Roundup tracker and on a real Redmine gives the same transcript.

Each backend is reached as the runtime reaches it: `open_hub` with the hub's URL, so the backend
is the one the URL names (`http://...`, `roundup+http://...`, `redmine+http://...`). Each test
works in a domain of its own, so one server per backend serves them all.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest

from custodian_hub import ReferenceHub
from custodian_runtime.clock import utc_now
from custodian_runtime.core.contract import (
    DecisionResolution,
    NewDecision,
    NewEvent,
    NewFlag,
    NewTask,
    NewWorkstream,
    TaskStatusUpdate,
)
from custodian_runtime.errors import HubError
from custodian_runtime.settings import HubSettings
from custodian_runtime.statehub import HubPreconditionFailed, NotModified, StateHubClient
from custodian_runtime.statehub.connect import open_hub

BACKENDS = ("state-hub", "roundup", "redmine")
_names = itertools.count()


@pytest.fixture(scope="module", params=BACKENDS)
def hub_at(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """The URL of a running hub of each backend, empty at first."""
    if request.param in ("roundup", "redmine"):
        yield request.getfixturevalue(request.param).hub_url
        return
    with ReferenceHub(tmp_path_factory.mktemp(request.param) / "hub.sqlite3") as hub:
        yield hub.url


def _client(url: str, tmp_path: Path) -> AbstractContextManager[StateHubClient]:
    return open_hub(HubSettings(url=url, max_attempts=1), tmp_path, utc_now)


def _outcome(call: Callable[[], Any]) -> tuple[Any, ...]:
    """What a call came to, without ids and times: the status and code, or the write's shape."""
    try:
        result = call()
    except HubError as exc:
        return ("error", exc.status, exc.code)
    if isinstance(result, NotModified):
        return ("not modified",)
    replayed = getattr(result, "replayed", None)
    return ("ok", replayed)


def _script(client: StateHubClient, domain: str) -> list[tuple[Any, ...]]:
    """The same reads and writes, in the same order, and what each came to."""
    seen: list[tuple[Any, ...]] = []
    ws = client.create_workstream(
        NewWorkstream(domain=domain, title="Site"), idempotency_key=f"{domain}-1"
    )
    other = client.create_workstream(
        NewWorkstream(domain=domain, title="Docs"), idempotency_key=f"{domain}-2"
    )
    w, o = ws.resource.id, other.resource.id
    seen.append(("workstream", ws.status_code, ws.resource.status, ws.replayed))
    again = NewWorkstream(domain=domain, title="Site")
    seen.append(_outcome(lambda: client.create_workstream(again, idempotency_key=f"{domain}-1")))
    changed = NewWorkstream(domain=domain, title="Elsewhere")
    seen.append(_outcome(lambda: client.create_workstream(changed, idempotency_key=f"{domain}-1")))
    task = client.create_task(
        NewTask(workstream_id=w, title="Write the page"), idempotency_key=f"{domain}-3"
    )
    t = task.resource.id
    seen.append(("task", task.resource.status, task.resource.version, task.resource.description))
    start = TaskStatusUpdate(status="in_progress")
    moved = client.update_task_status(t, start, idempotency_key=f"{domain}-4", if_match=1)
    seen.append(("moved", moved.resource.status, moved.resource.version, moved.replayed))
    # The probe of a write whose answer was lost: the same key, body and If-Match.
    probe = client.update_task_status(t, start, idempotency_key=f"{domain}-4", if_match=1)
    seen.append(("probe", probe.resource.status, probe.resource.version, probe.replayed))
    done = TaskStatusUpdate(status="done")
    try:
        client.update_task_status(t, done, idempotency_key=f"{domain}-5", if_match=1)
    except HubPreconditionFailed as exc:
        seen.append(("stale", exc.status, exc.code, exc.current and exc.current.version))
    note = NewEvent(
        workstream_id=w, task_id=t, event_type="note", summary="Drafted.", source="custodian"
    )
    seen.append(_outcome(lambda: client.add_event(note, idempotency_key=f"{domain}-6")))
    astray = NewEvent(
        workstream_id=o, task_id=t, event_type="note", summary="x", source="custodian"
    )
    seen.append(_outcome(lambda: client.add_event(astray, idempotency_key=f"{domain}-7")))
    nowhere = NewEvent(workstream_id="w999999", event_type="note", summary="x", source="custodian")
    seen.append(_outcome(lambda: client.add_event(nowhere, idempotency_key=f"{domain}-8")))
    flag = client.add_flag(
        NewFlag(task_id=t, note="Who signs off?", raised_by="custodian"),
        idempotency_key=f"{domain}-9",
    )
    seen.append(("flag", flag.resource.workstream_id == w, flag.resource.status))
    summary = client.domain_summary(domain)
    seen.append(_counts(summary))
    seen.append(_outcome(lambda: client.domain_summary(domain, if_none_match=summary.revision)))
    seen.append(
        _outcome(lambda: client.resolve_flag(flag.resource.id, idempotency_key=f"{domain}-10"))
    )
    seen.append(
        _outcome(lambda: client.resolve_flag(flag.resource.id, idempotency_key=f"{domain}-11"))
    )
    decision = client.create_decision(
        NewDecision(domain=domain, title="Which host?", options=("a", "b")),
        idempotency_key=f"{domain}-12",
    )
    seen.append(("decision", decision.resource.options, decision.resource.status))
    answer = DecisionResolution(resolution="a")
    seen.append(
        _outcome(
            lambda: client.resolve_decision(
                decision.resource.id, answer, idempotency_key=f"{domain}-13"
            )
        )
    )
    seen.append(
        _outcome(
            lambda: client.resolve_decision(
                decision.resource.id, answer, idempotency_key=f"{domain}-14"
            )
        )
    )
    later = client.domain_summary(domain, if_none_match=summary.revision)
    assert not isinstance(later, NotModified)
    seen.append(("moved on", (later.revision or 0) > (summary.revision or 0), _counts(later)))
    seen.append(("events", [e.summary for e in client.list_events(domain=domain)]))
    for where in (
        {"task_id": t},
        {"workstream_id": o},
        {"domain": domain, "workstream_id": w},
        {"domain": f"{domain}-none", "workstream_id": w},
        {"task_id": "t999999"},
    ):
        seen.append(("events where", [e.summary for e in client.list_events(**where)]))
    seen.append(
        (
            "no domain",
            client.list_flags(domain=f"{domain}-none"),
            client.list_workstreams(domain=f"{domain}-none"),
        )
    )
    seen.append(("flags", [f.status for f in client.list_flags(domain=domain, status="resolved")]))
    seen.append(("decisions", [d.resolution for d in client.list_decisions(domain=domain)]))
    seen.append(("workstreams", sorted(x.title for x in client.list_workstreams(domain=domain))))
    seen.append(("task", client.get_task(t).status, client.get_task(t).version))
    seen.append(_outcome(lambda: client.get_task("t999999")))
    seen.append(_outcome(lambda: client.domain_summary(f"{domain}-none")))
    overview = next(d for d in client.state_summary().domains if d.domain == domain)
    seen.append(
        ("overview", overview.tasks.in_progress, overview.workstreams.active, overview.open_flags)
    )
    return seen


def _counts(summary: Any) -> tuple[Any, ...]:
    tasks = [t.status for w in summary.workstreams for t in w.tasks]
    return (
        "summary",
        sorted(w.title for w in summary.workstreams),
        tasks,
        len(summary.open_flags),
        len(summary.open_decisions),
        [e.summary for e in summary.recent_events],
    )


ORACLE: list[tuple[Any, ...]] = []


def test_the_script_on_each_backend_gives_the_reference_hubs_transcript(
    hub_at: str, tmp_path: Path
) -> None:
    with _client(hub_at, tmp_path) as client:
        transcript = _script(client, f"contract-{next(_names)}")
    if hub_at.startswith("http://"):  # the oracle: the reference hub runs first
        assert transcript[1] == ("ok", True) and transcript[2][2] == "idempotency_mismatch"
        assert transcript[5] == ("probe", "in_progress", 2, True)
        assert transcript[6] == ("stale", 412, "precondition_failed", 2)
        ORACLE[:] = transcript
    else:
        assert ORACLE, "the reference hub's transcript comes first"
        assert transcript == ORACLE


def test_a_hub_id_is_the_same_for_two_clients_and_says_which_hub(
    hub_at: str, tmp_path: Path
) -> None:
    with _client(hub_at, tmp_path) as one, _client(hub_at, tmp_path) as two:
        first, second = one.health().hub_id, two.health().hub_id
    assert first is not None and first == second
