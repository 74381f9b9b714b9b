"""An event or a flag that names a workstream and a task apart is refused alike on each backend.

The Roundup backend reads only the task when the write's workstream is the task's own (its link
says the workstream exists), so these cases are where it could differ from the hub.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from custodian_hub import ReferenceHub
from custodian_runtime.clock import utc_now
from custodian_runtime.core.contract import NewEvent, NewFlag, NewTask, NewWorkstream
from custodian_runtime.errors import HubError
from custodian_runtime.settings import HubSettings
from custodian_runtime.statehub.connect import open_hub

_names = itertools.count()


@pytest.fixture(params=("state-hub", "roundup"))
def hub_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A running hub of each backend."""
    if request.param == "roundup":
        yield request.getfixturevalue("roundup").hub_url
        return
    with ReferenceHub(tmp_path / "hub.sqlite3") as hub:
        yield hub.url


def _answer(call: Callable[[], Any]) -> tuple[Any, ...]:
    try:
        made = call()
    except HubError as exc:
        return (exc.status, exc.code)
    return (made.status_code, made.resource.workstream_id)


def test_events_and_flags_on_a_task_of_another_or_of_no_workstream(hub_url: str) -> None:
    domain = f"refusals-{next(_names)}"
    keys = (f"{domain}-{n}" for n in itertools.count())
    with open_hub(HubSettings(url=hub_url, max_attempts=1), Path("."), utc_now) as client:
        w, o = (
            client.create_workstream(
                NewWorkstream(domain=domain, title=title), idempotency_key=next(keys)
            ).resource.id
            for title in ("Site", "Docs")
        )
        t = client.create_task(
            NewTask(workstream_id=w, title="Page"), idempotency_key=next(keys)
        ).resource.id

        def event(workstream: str, task: str | None) -> tuple[Any, ...]:
            body = NewEvent(workstream_id=workstream, task_id=task, event_type="note",
                            summary="x", source="custodian")  # fmt: skip
            return _answer(lambda: client.add_event(body, idempotency_key=next(keys)))

        def flag(workstream: str | None, task: str | None) -> tuple[Any, ...]:
            body = NewFlag(workstream_id=workstream, task_id=task, note="x", raised_by="custodian")
            return _answer(lambda: client.add_flag(body, idempotency_key=next(keys)))

        answers = [
            event(w, t),
            event(o, t),
            event("w999999", t),
            event(w, "t999999"),
            event(o, None),
            flag(None, t),
            flag(w, t),
            flag(o, t),
            flag("w999999", t),
            flag("w999999", None),
            flag(o, None),
        ]
    assert answers == [
        (201, w),
        (422, "validation_error"),
        (404, "not_found"),
        (404, "not_found"),
        (201, o),
        (201, w),
        (201, w),
        (422, "validation_error"),
        (422, "validation_error"),
        (404, "not_found"),
        (201, o),
    ]
