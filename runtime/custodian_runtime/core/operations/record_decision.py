"""`record_decision`: an open decision for people to take, titled as no open decision is."""

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
from custodian_runtime.core.operations.schema import RecordDecision
from custodian_runtime.core.view import View


def _same(p: Params, view: View) -> list[str]:
    return same_titles(list(view.decisions.values()), p["title"])


def _already(p: Params, view: View) -> str | None:
    return titled("the domain already has an open decision titled", _same(p, view), p["title"])


def _repeats(p: Params, view: View) -> str | None:
    parent = p.get("workstream_id")
    pool = [d for d in view.decisions.values() if d.workstream_id == parent]
    return nearly("decision", near_titles(pool, p["title"]), "in its workstream")


def _repeats_elsewhere(p: Params, view: View) -> str | None:
    parent = p.get("workstream_id")
    pool = [d for d in view.decisions.values() if d.workstream_id != parent]
    return near_elsewhere("decision", near_titles(pool, p["title"]), "in another workstream")


def _call(client: Any, p: Params, run_id: str, key: str) -> Any:
    return client.create_decision(contract.NewDecision(**p), idempotency_key=key)


def _describe(p: Params, lookup: Lookup) -> str:
    where = f" on {lookup.named('workstream', p['workstream_id'])}" if "workstream_id" in p else ""
    return f"Record the open decision ‘{p['title']}’{where}{in_domain(lookup)}"


def _done(p: Params, lookup: Lookup) -> str:
    where = f" on {lookup.named('workstream', p['workstream_id'])}" if "workstream_id" in p else ""
    return f"recorded the open decision ‘{p['title']}’{where}{in_domain(lookup)}"


SPEC = OperationSpec(
    name="record_decision",
    section="proposals",
    params=RecordDecision,
    default="approvable",
    fields="{title, context?, options?, workstream_id?}",
    request="POST /decisions",
    landed=lambda p, landing: created(_same(p, landing.view), landing),
    describe=_describe,
    done=_done,
    call=_call,
    targets=("workstream_id",),
    already_done=_already,
    repeats=_repeats,
    repeats_elsewhere=_repeats_elsewhere,
    creates=_same,
    in_domain=True,
)
