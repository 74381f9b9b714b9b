"""The one write chain: dispatched -> the hub call -> receipt, failed, stale or unknown.

Every hub write leaves through `send`: a run's own, a reconcile's re-send, an approved item's.
`unknown` does not close the chain: no answer came (deadline, lost connection, a signal during a
retry wait), so the write may have landed, and the next run settles it by observing the hub.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from custodian_runtime.core.contract import Task
from custodian_runtime.core.journal.kinds import (
    Dispatched,
    Failed,
    LandingProbe,
    Receipt,
    Stale,
    Unknown,
)
from custodian_runtime.core.outcomes import OutcomeKind, stale_message, task_changed
from custodian_runtime.errors import (
    HubError,
    HubUnavailable,
    Interrupted,
)
from custodian_runtime.journal.run_journal import Journal
from custodian_runtime.statehub import HubPreconditionFailed
from custodian_runtime.statehub.client import HubWrite, StateHubClient
from custodian_runtime.writes._dispatch import Calls, perform

UNKNOWN_NOTE = "the next run settles it by observing the hub"


@dataclass(frozen=True)
class Sent:
    """What one write came to: a hub id, an error, stale, or unknown (no answer came)."""

    hub_id: str | None = None
    error: str | None = None
    stale: str | None = None
    current_status: str | None = None
    unknown: str | None = None
    # The hub answered from its idempotency store (`Idempotent-Replayed: true`): nothing changed.
    replayed: bool = False

    @property
    def kind(self) -> OutcomeKind:
        """executed, failed, stale or unknown."""
        if self.unknown:
            return "unknown"
        return "stale" if self.stale else "failed" if self.error else "executed"


@dataclass(frozen=True)
class Write:
    """One write to send: what, with which key, and whether this memory sent that key before."""

    index: int | str
    operation: str
    params: dict[str, Any]
    run_id: str
    key: str
    # A reconcile's re-send names the run whose write it is.
    reconciles: str | None = None
    observed_task: Task | None = None
    # A reconcile's re-send of a dispatched write: the hub may replay its first answer.
    sent_before: bool = False
    # A probe (core/ruling/proof.py): the version the write carried, sent as If-Match with
    # its own key once that version is gone, so only a replay can answer 2xx.
    if_match: int | None = None
    # A probe: the task as the write's authorization saw it (its `planned_on`), for the record.
    planned_on: dict[str, Any] | None = None


def send(
    journal: Journal,
    client: StateHubClient,
    calls: Calls,
    *,
    index: int | str,
    operation: str,
    params: dict[str, Any],
    run_id: str,
    key: str,
    reconciles: str | None = None,
    observed_task: Task | None = None,
    sent_before: bool = False,
    if_match: int | None = None,
    planned_on: dict[str, Any] | None = None,
) -> Sent:
    """dispatched -> the hub call -> receipt, failed, stale or unknown; through `calls` only.

    A status write goes out only on the state it was planned on (`observed_task`): with the
    observed version as `If-Match`, or, from a hub without versions, after reading the task again.
    A replayed answer counts only for a key this memory sent before (`sent_before`, or an
    earlier attempt of this call); otherwise it is a failure, never executed. A probe
    (`if_match`: the version the write carried) answered 412 closes the write as `stale`: the
    hub did not replay its key, so it never landed.
    """
    write = Write(
        index, operation, params, run_id, key, reconciles, observed_task, sent_before, if_match,
        planned_on,
    )  # fmt: skip
    return _send(journal, client, calls, write)


def _send(journal: Journal, client: StateHubClient, calls: Calls, write: Write) -> Sent:
    journal.write(Dispatched(index=write.index, idempotency_key=write.key, **_marker(write)))
    try:
        changed = _changed_since(client, write.observed_task)
    except (HubError, Interrupted) as exc:
        # The re-read before the write failed: the write itself never left, so it failed.
        message = f"not sent: the task could not be read again first ({exc.message})"
        _failed(journal, write, message, getattr(exc, "status", None), getattr(exc, "code", None))
        if isinstance(exc, Interrupted):
            raise
        return Sent(error=message)
    if changed is not None:
        return _stale(journal, write, changed)
    return _written(journal, client, calls, write)


def _written(journal: Journal, client: StateHubClient, calls: Calls, write: Write) -> Sent:
    """The write itself: receipt, stale (412), unknown (no answer came) or failed (refused)."""
    try:
        return _call(journal, client, calls, write)
    except HubPreconditionFailed as exc:
        if write.if_match is not None:
            return _never_landed(journal, write, exc.current)
        return _stale(journal, write, exc.current)
    except Interrupted as exc:
        _unknown(journal, write, exc.message)
        raise
    except HubUnavailable as exc:
        return _unknown(journal, write, exc.message)
    except HubError as exc:
        return _failed(journal, write, exc.message, exc.status, exc.code)
    except (KeyError, ValueError) as exc:
        # Raised before any request left (unknown operation, bad params). Close the chain, or
        # every later run would reconcile it and fail the same way.
        message = f"{write.operation} cannot be sent to the hub with these params ({exc!r})"
        return _failed(journal, write, message, None, None)


def _call(journal: Journal, client: StateHubClient, calls: Calls, write: Write) -> Sent:
    task = write.observed_task
    done = perform(
        calls,
        client,
        write.operation,
        write.params,
        run_id=write.run_id,
        idempotency_key=write.key,
        if_match=write.if_match if write.if_match is not None else _version(task),
    )
    if done.replayed and done.attempts == 1 and not write.sent_before:
        message = (
            f"the hub replayed an earlier answer to key {write.key}, which this memory never "
            "sent before: another writer used the key, or the hub's memory is not this "
            "journal's; nothing is known to have changed. Check the hub, then plan again"
        )
        return _failed(journal, write, message, done.status_code, "replayed_unknown_key")
    journal.write(_receipt(write, done))
    return Sent(hub_id=getattr(done.resource, "id", None), replayed=done.replayed)


@dataclass(frozen=True)
class Probed:
    """What a closed write's probe came to: replayed (it landed, as `hub_id`), refused with 412
    and no replay (`never_landed`), or neither (`error`: nothing is proven; the next run asks)."""

    hub_id: str | None = None
    never_landed: bool = False
    error: str | None = None
    # A 2xx with `Idempotent-Replayed: true`; without it, the probe itself was applied.
    replayed: bool = False


def probe_closed(
    journal: Journal, client: StateHubClient, calls: Calls, write: Write, late: str
) -> Probed:
    """Ask the hub whether a closed write landed: its own key, body and carried If-Match.

    Journaled `landing_probe` before it leaves (it can apply nothing: the version it names is
    gone), then a replay's late `receipt` (`late`: how the write was closed). A 412 or an error
    is journaled by the caller, which knows what the hub shows.
    """
    journal.write(
        LandingProbe(index=write.index, idempotency_key=write.key, if_match=write.if_match,
                     **_marker(write))
    )  # fmt: skip
    try:
        done = perform(calls, client, write.operation, write.params, run_id=write.run_id,
                       idempotency_key=write.key, if_match=write.if_match)  # fmt: skip
    except HubPreconditionFailed:
        return Probed(never_landed=True)
    except HubError as exc:
        return Probed(error=exc.message)
    except (KeyError, ValueError) as exc:
        return Probed(error=f"{write.operation} cannot be sent to the hub ({exc!r})")
    receipt = _receipt(write, done).model_copy(update={"found_on_hub": True, "late": late})
    journal.write(receipt)
    return Probed(hub_id=getattr(done.resource, "id", None), replayed=done.replayed)


def _version(task: Task | None) -> int | None:
    return task.version if task is not None else None


def _never_landed(journal: Journal, write: Write, current: Task | None) -> Sent:
    """A probe answered 412 without a replay: the write never landed; closed as stale."""
    now = f"{current.status} (version {current.version})" if current is not None else "unknown"
    message = (
        f"the hub did not replay key {write.key} and refused it at version {write.if_match}, "
        f"the version it carried: it never landed; the task is now {now}"
    )
    journal.write(
        Stale(index=write.index, error=message, observed=write.planned_on,
              current=task_state(current), closed="stale", **_marker(write))
    )  # fmt: skip
    return Sent(stale=message, current_status=current.status if current is not None else None)


def _failed(
    journal: Journal, write: Write, message: str, status: int | None, code: str | None
) -> Sent:
    marker = _marker(write)
    journal.write(Failed(index=write.index, error=message, status=status, code=code, **marker))
    return Sent(error=message)


def _unknown(journal: Journal, write: Write, message: str) -> Sent:
    """No answer came: journaled `unknown`, left open for the next run to settle."""
    error = f"no answer came ({message}); {UNKNOWN_NOTE}"
    journal.write(Unknown(index=write.index, error=error, **_marker(write)))
    return Sent(unknown=error)


def _marker(write: Write) -> dict[str, str]:
    """A reconcile's records name the run whose write they settle; a run's own name none."""
    return {"reconciles": write.reconciles} if write.reconciles is not None else {}


def _receipt(write: Write, done: HubWrite[Any]) -> Receipt:
    """What the hub answered to one write, as its `receipt` record."""
    after = task_state(done.resource) if isinstance(done.resource, Task) else None
    return Receipt(
        index=write.index,
        status_code=done.status_code,
        hub_id=getattr(done.resource, "id", None),
        replayed=done.replayed,
        response_sha256=done.response_sha256,
        attempts=done.attempts,
        # The task as the write left it: a later change by someone else shows against it.
        **({"task_after": after} if after is not None else {}),
        **_marker(write),
    )


def _changed_since(client: StateHubClient, observed: Task | None) -> Task | None:
    """From a hub without task versions: the task as it is now, if it changed since observed."""
    if observed is None or observed.version is not None:
        return None
    current = client.get_task(observed.id)
    return current if task_changed(observed, current) else None


def _stale(journal: Journal, write: Write, current: Task | None) -> Sent:
    observed = write.observed_task
    observed_status = observed.status if observed is not None else "unknown"
    current_status = current.status if current is not None else None
    message = stale_message(observed_status, current_status)
    journal.write(
        Stale(
            index=write.index,
            error=message,
            observed=task_state(observed),
            current=task_state(current),
            **_marker(write),
        )
    )
    return Sent(stale=message, current_status=current_status)


def task_state(task: Task | None) -> dict[str, Any] | None:
    """A task's status, update time and version, as the journal records them."""
    if task is None:
        return None
    return {
        "status": task.status,
        "updated_at": None if task.updated_at is None else task.updated_at.isoformat(),
        "version": task.version,
    }
