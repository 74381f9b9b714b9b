"""`create_workstream`: a new workstream in the domain, titled as no workstream there is."""

from __future__ import annotations

from typing import Any

import custodian_runtime.core.contract as contract
from custodian_runtime.core.operations._common import (
    created,
    near_titles,
    nearly,
    same_titles,
    titled,
)
from custodian_runtime.core.operations._spec import Lookup, OperationSpec, Params
from custodian_runtime.core.operations.schema import CreateWorkstream
from custodian_runtime.core.view import View


def _same(p: Params, view: View) -> list[str]:
    return same_titles(list(view.workstreams.values()), p["title"])


def _already(p: Params, view: View) -> str | None:
    return titled("the domain already has a workstream titled", _same(p, view), p["title"])


def _repeats(p: Params, view: View) -> str | None:
    pool = [w for w in view.workstreams.values() if w.status != "done"]
    return nearly("workstream", near_titles(pool, p["title"]), "in the domain")


def _call(client: Any, p: Params, run_id: str, key: str) -> Any:
    return client.create_workstream(contract.NewWorkstream(**p), idempotency_key=key)


def _describe(p: Params, lookup: Lookup) -> str:
    owner = f", owned by {p['owner']}" if "owner" in p else ""
    return f"Create workstream ‘{p['title']}’ in {p['domain']}{owner}"


def _done(p: Params, lookup: Lookup) -> str:
    return f"created workstream ‘{p['title']}’ in {p['domain']}"


SPEC = OperationSpec(
    name="create_workstream",
    section="proposals",
    params=CreateWorkstream,
    default="approvable",
    fields="{domain, title, owner?}",
    request="POST /workstreams",
    landed=lambda p, landing: created(_same(p, landing.view), landing),
    describe=_describe,
    done=_done,
    call=_call,
    targets=("domain",),
    already_done=_already,
    repeats=_repeats,
    creates=_same,
)
