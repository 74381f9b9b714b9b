"""`resolve_flag`: close an open flag."""

from __future__ import annotations

from typing import Any

from custodian_runtime.core.operations._common import closed, in_domain
from custodian_runtime.core.operations._spec import Lookup, OperationSpec, Params
from custodian_runtime.core.operations.schema import ResolveFlag


def _call(client: Any, p: Params, run_id: str, key: str) -> Any:
    return client.resolve_flag(p["flag_id"], idempotency_key=key)


def _describe(p: Params, lookup: Lookup) -> str:
    return f"Resolve {lookup.named('flag', p['flag_id'])}{in_domain(lookup)}"


def _done(p: Params, lookup: Lookup) -> str:
    return f"resolved {lookup.named('flag', p['flag_id'])}{in_domain(lookup)}"


SPEC = OperationSpec(
    name="resolve_flag",
    section="proposals",
    params=ResolveFlag,
    default="approvable",
    fields="{flag_id}",
    request="PATCH /flags/{id}",
    landed=lambda p, landing: closed(p.get("flag_id"), landing.view.flags),
    describe=_describe,
    done=_done,
    call=_call,
    targets=("flag_id",),
)
