"""`create_task`: a new task in a workstream, titled as no task there is."""

from __future__ import annotations

from typing import Any

import custodian_runtime.core.contract as contract
from custodian_runtime.core.operations._common import (
    created,
    in_domain,
    near_elsewhere,
    near_titles,
    nearly,
    same_titles,
    titled,
)
from custodian_runtime.core.operations._spec import Lookup, OperationSpec, Params
from custodian_runtime.core.operations.schema import CreateTask
from custodian_runtime.core.view import View

_OPEN = ("todo", "in_progress", "blocked")


def _same(p: Params, view: View) -> list[str]:
    parent = p.get("workstream_id")
    return same_titles([t for t in view.tasks.values() if t.workstream_id == parent], p["title"])


def _already(p: Params, view: View) -> str | None:
    return titled("its workstream already has a task titled", _same(p, view), p["title"])


def _repeats(p: Params, view: View) -> str | None:
    parent = p.get("workstream_id")
    pool = [t for t in view.tasks.values() if t.workstream_id == parent and t.status in _OPEN]
    return nearly("task", near_titles(pool, p["title"]), "in its workstream")


def _repeats_elsewhere(p: Params, view: View) -> str | None:
    parent = p.get("workstream_id")
    pool = [t for t in view.tasks.values() if t.workstream_id != parent and t.status in _OPEN]
    same = [(t.id, t.title) for t in pool if t.id in same_titles(pool, p["title"])]
    found = sorted(same + near_titles(pool, p["title"]))
    return near_elsewhere("task", found, "in another workstream")


def _call(client: Any, p: Params, run_id: str, key: str) -> Any:
    return client.create_task(contract.NewTask(**p), idempotency_key=key)


def _describe(p: Params, lookup: Lookup) -> str:
    status = f" ({p['status']})" if "status" in p else ""
    where = lookup.named("workstream", p["workstream_id"])
    return f"Create task ‘{p['title']}’{status} in {where}{in_domain(lookup)}"


def _done(p: Params, lookup: Lookup) -> str:
    where = lookup.named("workstream", p["workstream_id"])
    return f"created task ‘{p['title']}’ under {where}{in_domain(lookup)}"


SPEC = OperationSpec(
    name="create_task",
    section="proposals",
    params=CreateTask,
    default="approvable",
    fields="{workstream_id, title, description?, status?, assignee?, due?} (due: YYYY-MM-DD)",
    request="POST /tasks",
    landed=lambda p, landing: created(_same(p, landing.view), landing),
    describe=_describe,
    done=_done,
    call=_call,
    targets=("workstream_id",),
    already_done=_already,
    repeats=_repeats,
    repeats_elsewhere=_repeats_elsewhere,
    creates=_same,
    # State-hub contract: `POST /tasks` takes `status?`; the reference hub holds an omitted one
    # as `todo`, so `--where status=todo` covers a create that says no status.
    hub_defaults={"status": "todo"},
)
