"""The one hub call both status writes make, and how a person reads a status change, before
and after."""

from __future__ import annotations

from typing import Any

import custodian_runtime.core.contract as contract
from custodian_runtime.core.operations._common import in_domain, status_arrow
from custodian_runtime.core.operations._spec import Lookup, Params

_VERBS = {"done": "Complete", "cancelled": "Cancel", "in_progress": "Start", "blocked": "Block"}
_PAST = {
    "done": "completed",
    "cancelled": "cancelled",
    "in_progress": "started",
    "blocked": "blocked",
    "todo": "reopened",
}


def status_call(client: Any, p: Params, run_id: str, key: str, if_match: int | None = None) -> Any:
    """PATCH the task's status; with `if_match`, only at the version it was planned on."""
    body = contract.TaskStatusUpdate(status=p["status"])
    return client.update_task_status(p["task_id"], body, idempotency_key=key, if_match=if_match)


def describe_status(p: Params, lookup: Lookup) -> str:
    """`Cancel task web-t-05 ‘Set up redirects’ (todo → cancelled) in website`."""
    return _sentence(_VERBS.get(str(p.get("status")), "Set the status of"), p, lookup)


def done_status(p: Params, lookup: Lookup) -> str:
    """`cancelled task web-t-05 ‘Set up redirects’ (todo → cancelled) in website`."""
    return _sentence(_PAST.get(str(p.get("status")), "set the status of"), p, lookup)


def _sentence(verb: str, p: Params, lookup: Lookup) -> str:
    return (
        f"{verb} {lookup.named('task', p['task_id'])} {status_arrow(p, lookup)}{in_domain(lookup)}"
    )
