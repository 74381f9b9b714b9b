"""Deciding never waits for a run: a decision made while the domain is busy is recorded.

`decide_or_record` tries the decision now and, while a run holds the domain, again until a
bounded wait runs out; then it records the decision (memory/decision_inbox.py) and says what
happens next. `carry_out_recorded` is called by the next step that can hold the domain: it
carries each recorded decision out through the same path as a decision made at once.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime

from custodian_runtime.approvals._report import DecisionReport
from custodian_runtime.core.approvals.items import ApprovalItem
from custodian_runtime.core.approvals.recorded_decisions import RecordedDecision, waiting_message
from custodian_runtime.errors import ApprovalError, RunLocked
from custodian_runtime.memory.decision_inbox import DecisionInbox
from custodian_runtime.settings import Settings

POLL_S = 0.5


def decide_or_record(
    attempt: Callable[[], DecisionReport],
    record: Callable[[RunLocked], DecisionReport],
    wait_s: float,
    *,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> DecisionReport:
    """`attempt()` now, or until `wait_s` is spent while the domain is busy; then `record`."""
    deadline = clock() + max(0.0, wait_s)
    while True:
        try:
            return attempt()
        except RunLocked as busy:
            if clock() >= deadline:
                return record(busy)
        sleep(POLL_S)


def record_for_later(
    settings: Settings,
    item: ApprovalItem,
    decision: RecordedDecision,
    busy: RunLocked,
) -> DecisionReport:
    """Keep the decision until the domain is free; the message says what happens then."""
    DecisionInbox(settings.memory_dir, settings.seal_key).record(decision)
    return DecisionReport(item.id, 0, waiting_message(decision, _holder(busy)))


def carry_out_recorded(
    settings: Settings,
    domain: str | None,
    approve: Callable[[RecordedDecision], DecisionReport],
    reject: Callable[[RecordedDecision], DecisionReport],
) -> list[DecisionReport]:
    """Carry out the recorded decisions whose domain is free now, oldest first."""
    inbox = DecisionInbox(settings.memory_dir, settings.seal_key)
    done: list[DecisionReport] = []
    busy: set[str] = set()
    for decision in inbox.waiting(domain):
        if decision.domain in busy:
            continue
        try:
            done.append((approve if decision.decision == "approve" else reject)(decision))
        except RunLocked:
            busy.add(decision.domain)
            continue
        except ApprovalError as exc:  # decided or expired since: nothing left to carry out
            done.append(DecisionReport(decision.approval_id, exc.exit_code, exc.message))
        inbox.done(decision.approval_id)
    return done


def recorded(
    item: ApprovalItem, decision: str, by: str, text: str | None, now: datetime
) -> RecordedDecision:
    """The decision a person made on `item`, as it is recorded for later."""
    return RecordedDecision(
        approval_id=item.id,
        domain=item.domain,
        decision="approve" if decision == "approve" else "reject",
        by=by,
        text=text,
        at=now,
    )


def _holder(busy: RunLocked) -> str:
    """`pid 12 on host-a, run R, started T`, from the lock's message."""
    return busy.message.split("; ", 1)[0].split(" is locked by ", 1)[-1]
