"""`resolve_decision`: close an open decision with its resolution."""

from __future__ import annotations

from typing import Any

import custodian_runtime.core.contract as contract
from custodian_runtime.core.operations._common import closed, in_domain, quoted
from custodian_runtime.core.operations._spec import Lookup, OperationSpec, Params
from custodian_runtime.core.operations.schema import ResolveDecision


def _call(client: Any, p: Params, run_id: str, key: str) -> Any:
    body = contract.DecisionResolution(resolution=p["resolution"])
    return client.resolve_decision(p["decision_id"], body, idempotency_key=key)


def _describe(p: Params, lookup: Lookup) -> str:
    named = lookup.named("decision", p["decision_id"])
    return f"Resolve {named}{in_domain(lookup)}: {quoted(p['resolution'])}"


def _done(p: Params, lookup: Lookup) -> str:
    named = lookup.named("decision", p["decision_id"])
    return f"resolved {named}{in_domain(lookup)}: {quoted(p['resolution'])}"


SPEC = OperationSpec(
    name="resolve_decision",
    section="proposals",
    params=ResolveDecision,
    default="approvable",
    fields="{decision_id, resolution}",
    request="POST /decisions/{id}/resolve",
    landed=lambda p, landing: closed(p.get("decision_id"), landing.view.decisions),
    describe=_describe,
    done=_done,
    call=_call,
    targets=("decision_id",),
    never_granted="resolving a decision is a person's judgement on that decision",
)
