"""Grants on evidence (`--evidence newer`) for a status write's class: when citing an event
separates its approvals from its rejections, or when a reversal suspended its plain grant.

Every rejected move cited none, and the approved moves that cited one earn the bound on their
own; such a grant covers no move that cites nothing.
"""

from __future__ import annotations

from collections.abc import Mapping

import custodian_runtime.core.operations as operations
from custodian_runtime.core.standing.classes import DecidedTally, WhereClass, in_class
from custodian_runtime.core.standing.commands import Asking, Suggestion, grant_command
from custodian_runtime.core.standing.earned import earned
from custodian_runtime.core.standing.live import Live


def separated(tally: DecidedTally, c: WhereClass, live: Live, asking: Asking) -> Suggestion | None:
    """A grant on evidence for a status write's class that holds rejections, when citing
    evidence separates its approved moves from its rejected ones: every rejected move cited
    none, and the approved moves that cited some earn a grant on their own (None: else).

    Sound from the params alone: a grant on evidence runs only a move citing a person's newer
    event, so it covers no move that cited nothing; a rejected move that cited any event (older,
    or one the person did not take) keeps it unsuggested."""
    spec = operations.find(tally.operation)
    if spec is None or not spec.status_write or not c.where or "task_id" in c.where:
        return None  # a status write's class; never one task's
    inside = [(ok, p) for ok, p in tally.decided if in_class(p, c.where)]
    if any(not ok and p.get("evidence") for ok, p in inside):
        return None  # a rejected move cited an event: evidence does not separate them
    cited = [ok for ok, p in inside if p.get("evidence")]
    if not cited or not all(cited):
        return None
    ok, why = earned(len(cited), len(cited), "approved moves citing a person's event")
    if not ok or live.suspension(tally.operation, c.where, "newer"):
        return None
    if any(g.evidence and g.where.items() <= c.where.items() for g in live.of(tally.operation)):
        return None  # a live grant on evidence covers it already
    rejected = sum(1 for ok, _ in inside if not ok)
    why = (
        f"{why}; the {rejected} rejected in {c.label} cited no event, and a grant on evidence "
        "runs only a move citing a person's newer event"
    )
    return grant_command(asking, tally.operation, c.where, why, evidence="newer")


def on_evidence(
    tally: DecidedTally, c: WhereClass, where: Mapping[str, str], live: Live, asking: Asking
) -> Suggestion | None:
    """The narrower grant of a class whose plain grant a reversal suspended: only the moves
    citing a person's event newer than the task's last change (`--evidence newer`), when the
    class's approved proposals that cited events earn it on their own (None: they do not)."""
    spec = operations.find(tally.operation)
    if spec is None or not spec.status_write or live.suspension(tally.operation, where, "newer"):
        return None
    if any(g.evidence and g.where.items() <= where.items() for g in live.of(tally.operation)):
        return None  # a live grant on evidence covers it already
    cited = [ok for i, (ok, p) in enumerate(tally.decided) if i in c.approved and p.get("evidence")]
    ok, why = earned(sum(cited), len(cited), "approved moves citing a person's event")
    if not ok:
        return None
    why = f"{why}; a person reversed a move the plain grant made, and a grant on evidence "
    why += "runs only a move citing a person's newer event"
    return grant_command(asking, tally.operation, where, why, evidence="newer")
