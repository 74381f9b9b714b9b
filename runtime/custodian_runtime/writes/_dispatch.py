"""Turn an authorized operation into the one client call that performs it.

This module performs; it never decides. Whether an operation may run was decided before, by
`core.authority.authorize` for a run or by a person's approval. Each hub call is its operation's
spec's (core/operations/); the two tables below are read from the registry when a write is sent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from custodian_runtime.core import operations
from custodian_runtime.core.operations import OperationSpec
from custodian_runtime.core.ruling.reconcile import Authority
from custodian_runtime.statehub.client import HubWrite, StateHubClient

# (client, params, run_id, idempotency_key[, if_match]): a status write also takes `if_match`.
Call = Callable[..., HubWrite[Any]]


def _sanctioned_sends(spec: OperationSpec) -> bool:
    """The writes a run may make on its own."""
    return spec.default == "sanctioned"


def _person_sends(spec: OperationSpec) -> bool:
    """The writes a person may approve: every approvable one, and every sanctioned one (queued by
    the authority or a person's `ask` mode); a canon write is a file, handled by approvals."""
    return spec.person_sends


class _Table(Mapping[str, Call]):
    """The hub calls of the registered operations an authority may send, read when used."""

    def __init__(self, sends: Callable[[OperationSpec], bool]) -> None:
        self._sends = sends

    def _specs(self) -> dict[str, OperationSpec]:
        found = (s for s in operations.all_specs() if s.call is not None and self._sends(s))
        return {s.name: s for s in found}

    def __getitem__(self, name: str) -> Call:
        call = self._specs()[name].call
        assert call is not None  # _specs keeps only hub writes
        return call

    def __iter__(self) -> Iterator[str]:
        return iter(self._specs())

    def __len__(self) -> int:
        return len(self._specs())


@dataclass(frozen=True)
class Calls:
    """The hub writes one authority may send, and no others: the sanctioned one's, or a person's.

    The two tables are never merged: a run's own write goes out only through
    `SANCTIONED_CALLS`, an approved item (and its reconcile) only through `APPROVED_CALLS`.
    """

    authority: Authority
    table: Mapping[str, Call]

    def __contains__(self, operation: object) -> bool:
        return operation in self.table


SANCTIONED_CALLS = Calls("sanctioned", _Table(_sanctioned_sends))
APPROVED_CALLS = Calls("person", _Table(_person_sends))


def calls_of(authority: Authority) -> Calls:
    """The table of the authority that allowed a write (core: `ReconcileStep.authority`)."""
    return APPROVED_CALLS if authority in ("person", "grant") else SANCTIONED_CALLS


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
    if operation in operations.status_writes():
        return call(client, params, run_id, idempotency_key, if_match)
    if if_match is not None:
        raise ValueError(f"{operation} is not a task status write; if_match does not apply")
    return call(client, params, run_id, idempotency_key)
