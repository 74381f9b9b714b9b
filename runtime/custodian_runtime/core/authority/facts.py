"""A rejection holds on the facts it was made on: what a person's newer event changed since.

A person rejected a proposal at some time. The same proposal is never asked again on the same
facts; a person's event (not Custodian's own, not under its source, not carrying its run mark)
on the proposal's target, newer than the rejection, changes them: the proposal may be asked
once more, and its card says what changed. Its target is what the operation's spec names
(`targets`): a task by its id, a workstream by its id, a decision or a flag by its workstream
and task. Once asked again, a second rejection is the newer one, and holds on the new facts.
"""

from __future__ import annotations

from datetime import datetime

import custodian_runtime.core.operations as operations
from custodian_runtime.core._timestamps import utc
from custodian_runtime.core.approvals.history import Rejection
from custodian_runtime.core.authority.evidence import Evidence, by_custodian, stamp
from custodian_runtime.core.contract import ProgressEvent
from custodian_runtime.core.operations.schema import short
from custodian_runtime.core.plan.extract import ProposedItem
from custodian_runtime.core.view import View


def changed_since(
    item: ProposedItem, view: View, evidence: Evidence, since: datetime, by: str = ""
) -> ProgressEvent | None:
    """A person's newest event on the item's target written after `since` (not dated ahead of
    the hub's own time); when `by` is named, one of theirs other than a status change (their
    word after the one that set the status); None if none."""
    tasks, workstreams = _targets(item, view)
    found = [
        event
        for event in evidence.events.values()
        if utc(event.created_at) > utc(since)
        and (
            not by
            or (
                event.source.strip().casefold() == by.strip().casefold()
                and event.event_type != "status_change"
            )
        )
        and by_custodian(event, evidence.own_ids) is None
        and not evidence.ahead(event)  # dated ahead of the hub: it would outdate every rejection
        and (
            event.task_id in tasks or (event.task_id is None and event.workstream_id in workstreams)
        )
    ]
    return max(found, key=lambda e: (utc(e.created_at), e.id), default=None)


def _targets(item: ProposedItem, view: View) -> tuple[set[str], set[str]]:
    """The tasks and the workstreams whose events bear on the item's target."""
    spec = operations.find(item.operation)
    tasks: set[str] = set()
    workstreams: set[str] = set()
    for name in spec.targets if spec is not None else ():
        value = item.params.get(name)
        if not isinstance(value, str):
            continue
        if value in view.tasks:
            tasks.add(value)
        elif value in view.workstreams:
            workstreams.add(value)
        elif value in view.decisions:
            workstreams.add(view.decisions[value].workstream_id or "")
        elif value in view.flags:
            flag = view.flags[value]
            tasks.add(flag.task_id or "")
            workstreams.add(flag.workstream_id or "")
    return tasks - {""}, workstreams - {""}


def rejection_problem(
    item: ProposedItem, view: View, evidence: Evidence, rejection: Rejection
) -> tuple[str | None, str | None]:
    """Why the queue will not take `item` again (a denial), or what changed since a person
    rejected it (the card's `waits`): exactly one of the two is None."""
    event = None if rejection.at is None else changed_since(item, view, evidence, rejection.at)
    if event is None:
        when = "" if rejection.at is None else f", at {stamp(rejection.at)}"
        return (
            f"a person rejected the same proposal before ({rejection.why}{when}), and no event "
            "of a person's on its target has come since: it is asked again only when one "
            "changes the facts",
            None,
        )
    assert rejection.at is not None  # an event came after it
    return None, (
        f"a person rejected the same proposal at {stamp(rejection.at)} ({rejection.why}); "
        f"since then, event {event.id}, {_a(event.event_type)} from {short(event.source)} at "
        f"{stamp(event.created_at)}, changed the facts, so it is asked once more"
    )


def _a(kind: str) -> str:
    return f"an {kind}" if kind[0] in "aeiou" else f"a {kind}"
