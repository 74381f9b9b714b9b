"""Turn an authorized operation into the one client call that performs it.

This module performs; it never decides. Whether an operation may run was settled before, by
`core.authority` for a run or by a person's approval.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from custodian_runtime.core import contract as c
from custodian_runtime.core.authority_path import Authority
from custodian_runtime.core.marks import with_run_mark
from custodian_runtime.core.outcomes import STATUS_WRITES
from custodian_runtime.statehub.client import HubWrite, StateHubClient

SOURCE = "custodian"

Call = Callable[[StateHubClient, Mapping[str, Any], str, str], HubWrite[Any]]


def _with_run(text: str, run_id: str) -> str:
    # Every write names the run that made it, so a person can find the session note and journal.
    return with_run_mark(text, run_id)


def _event(client: StateHubClient, p: Mapping[str, Any], run_id: str, key: str) -> HubWrite[Any]:
    body = c.NewEvent(
        workstream_id=p["workstream_id"],
        task_id=p.get("task_id"),
        event_type=p["event_type"],
        summary=_with_run(p["summary"], run_id),
        source=SOURCE,
    )
    return client.add_event(body, idempotency_key=key)


def _status(
    client: StateHubClient,
    p: Mapping[str, Any],
    run_id: str,
    key: str,
    if_match: int | None = None,
) -> HubWrite[Any]:
    body = c.TaskStatusUpdate(status=p["status"])
    return client.update_task_status(p["task_id"], body, idempotency_key=key, if_match=if_match)


def _flag(client: StateHubClient, p: Mapping[str, Any], run_id: str, key: str) -> HubWrite[Any]:
    body = c.NewFlag(
        task_id=p.get("task_id"),
        workstream_id=p.get("workstream_id"),
        note=_with_run(p["note"], run_id),
        raised_by=SOURCE,
    )
    return client.add_flag(body, idempotency_key=key)


def _create_workstream(
    client: StateHubClient, p: Mapping[str, Any], run_id: str, key: str
) -> HubWrite[Any]:
    return client.create_workstream(c.NewWorkstream(**p), idempotency_key=key)


def _create_task(
    client: StateHubClient, p: Mapping[str, Any], run_id: str, key: str
) -> HubWrite[Any]:
    return client.create_task(c.NewTask(**p), idempotency_key=key)


def _record_decision(
    client: StateHubClient, p: Mapping[str, Any], run_id: str, key: str
) -> HubWrite[Any]:
    return client.create_decision(c.NewDecision(**p), idempotency_key=key)


def _resolve_decision(
    client: StateHubClient, p: Mapping[str, Any], run_id: str, key: str
) -> HubWrite[Any]:
    body = c.DecisionResolution(resolution=p["resolution"])
    return client.resolve_decision(p["decision_id"], body, idempotency_key=key)


def _resolve_flag(
    client: StateHubClient, p: Mapping[str, Any], run_id: str, key: str
) -> HubWrite[Any]:
    return client.resolve_flag(p["flag_id"], idempotency_key=key)


@dataclass(frozen=True)
class Calls:
    """The hub writes one authority may send, and no others: the policy's, or a person's.

    The two tables are never merged: a run's own write goes out only through
    `SANCTIONED_CALLS`, an approved item (and its reconcile) only through `APPROVED_CALLS`.
    """

    authority: Authority
    table: Mapping[str, Call]

    def __contains__(self, operation: object) -> bool:
        return operation in self.table


# The three writes a run may make on its own.
SANCTIONED_CALLS = Calls(
    "policy",
    MappingProxyType(
        {"add_progress_event": _event, "update_task_status": _status, "flag_for_human": _flag}
    ),
)

# The hub writes a person may approve (write_canon is a file write, handled by approvals).
# update_task_status is among them: moving a task out of `cancelled` waits for a person.
APPROVED_CALLS = Calls(
    "person",
    MappingProxyType(
        {
            "set_task_status": _status,
            "update_task_status": _status,
            # Queued when a person set the operation's mode to `ask` (core/modes.py).
            "add_progress_event": _event,
            "flag_for_human": _flag,
            "create_workstream": _create_workstream,
            "create_task": _create_task,
            "record_decision": _record_decision,
            "resolve_decision": _resolve_decision,
            "resolve_flag": _resolve_flag,
        }
    ),
)


def calls_of(authority: Authority) -> Calls:
    """The table of the authority that allowed a write (core: `ReconcileStep.authority`)."""
    return APPROVED_CALLS if authority == "person" else SANCTIONED_CALLS


def perform(
    calls: Calls,
    client: StateHubClient,
    operation: str,
    params: Mapping[str, Any],
    *,
    run_id: str,
    idempotency_key: str,
    if_match: int | None = None,
) -> HubWrite[Any]:
    """Send one write; a KeyError here means an operation reached the wrong table, unauthorized.

    `if_match` is the task version the write was planned on: a status write sends it as
    `If-Match`, so a task that changed since is refused (412) instead of overwritten.
    """
    call = calls.table[operation]
    if operation in STATUS_WRITES:
        return _status(client, params, run_id, idempotency_key, if_match)
    if if_match is not None:
        raise ValueError(f"{operation} is not a task status write; if_match does not apply")
    return call(client, params, run_id, idempotency_key)
