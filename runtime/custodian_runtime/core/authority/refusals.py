"""A standing "no": a class of proposals a person rejected repeatedly and never approved is held.

A class is an operation with the status it sets (what `--where status=…` names), in one
workstream, or across the workstreams of one owner when that is where the "no" was said (an
owner decides their own workstreams' items). When a person rejected at least `STANDING_NO`
proposals of a class within the queue's window and approved none, a new proposal of the class
is held: neither queued nor sent, with the person's own reasons cited. A person's event on the
proposal's target newer than the class's latest rejection asks again, once: rejected again, the
newer rejection holds. A hold only stops asking; it never executes anything. Pure.

A class may also be scoped by a fact, the mirror of a grant over facts: the moves on a task whose
status a person set lately (core/authority/scope.py `owner_set_days`). When every decided move of
the class made within R days of a person setting its task's status was rejected (at least
`STANDING_NO`, none approved; R the most days among them, below the fewest of any approved move),
a move on a task set within R days is held. What asks again is the workstream's owner's newer word
on the task other than a status change (their status change is the word that holds): a team
member's event does not outweigh the owner's word.

And a class may be scoped by a fact of the proposal (`NO_FACTS`: the workstream's status, who
wrote the task's newest word of a person, whether it was asked whatever would carry it; and what
a status move cited, across every workstream): when a person rejected at
least `STANDING_NO` decided proposals of the class with one value of the fact and approved none
(an approved one whose facts were not kept counts as any value), while approving some with
another value (the fact parts them: else the "no" is the class's, scoped by workstream or owner
as above), a new one with that value is held. For all but who wrote last, a person's newer
event on the target asks again once, as for a class. Who wrote last is the newest word itself:
the word that asks again is another's, which ends the fact, and the proposal then falls outside
the "no"; the same person's newer word is the word that holds it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import custodian_runtime.core.operations as operations
from custodian_runtime.core.approvals.history import ApprovalHistory, DecidedMark
from custodian_runtime.core.approvals.items import NO_FACTS
from custodian_runtime.core.authority.asked import asked_anyway
from custodian_runtime.core.authority.evidence import Evidence, stamp
from custodian_runtime.core.authority.facts import changed_since
from custodian_runtime.core.authority.scope import ASKED, CITES, WORD, cites_of, scope_facts
from custodian_runtime.core.limits import Limits
from custodian_runtime.core.operations.schema import short
from custodian_runtime.core.plan.extract import ProposedItem
from custodian_runtime.core.view import View

# How many rejections, with no approval, make a class a person's standing "no".
STANDING_NO = 3
# How a held item's sentence begins: what `policy report` finds in the journal's rulings.
HELD_NO = "held: a standing no, "
_CLASS = re.compile(r"held: a standing no, \d+ proposals of (.+?) rejected and none approved")
# How many of the person's reasons the held item's sentence cites (the newest first).
CITED = 2


@dataclass(frozen=True)
class Refusal:
    """One class a person keeps saying no to: what it is, where, their reasons, and when last."""

    operation: str
    status: str
    scope: str  # `workstream ops-ws-1`, or `the workstreams of mia`
    rejected: tuple[DecidedMark, ...]
    last: datetime
    cites: str = ""  # what the proposals cited, when the "no" is said of that too
    # Whose newer word asks again ("": anyone's): for a "no" of moves on a task whose status a
    # person set lately, the workstream's owner's, as it is their word that holds.
    lifted_by: str = ""
    # For a "no" said of who wrote last on the task: held while that fact holds, and no newer
    # word of the same person asks again.
    while_fact: bool = False

    def label(self) -> str:
        """`set_task_status status=cancelled in the workstreams of mia`, or `... citing
        none in ...` for a "no" said of what the proposals cited."""
        where = f" status={self.status}" if self.status else ""
        cites = f" citing {self.cites}" if self.cites else ""
        return f"{self.operation}{where}{cites} in {self.scope}"

    def clause(self) -> str:
        """What a person reads of the hold on a held item's line, their reasons cited."""
        newest = sorted(self.rejected, key=lambda s: s.at, reverse=True)
        cited = "; ".join(list(dict.fromkeys(short(s.why, 120) for s in newest))[:CITED])
        return (
            f"{HELD_NO}{len(self.rejected)} proposals of {self.label()} rejected and "
            f"none approved, the last at {stamp(self.last)} ({cited}); "
            + (
                "it is asked again once another's word is the newest on its target"
                if self.while_fact
                else "it is asked again once "
                + (
                    f"when {self.lifted_by}, whose word holds it, writes on its target again"
                    if self.lifted_by
                    else "when a person writes on its target"
                )
            )
        )


def standing_no(
    item: ProposedItem, view: View, history: ApprovalHistory, cites: str = ""
) -> Refusal | None:
    """The standing "no" `item` falls under, if any: its workstream's first, then its owner's;
    of the class as a whole first, then of the proposals that cited what it cites (`cites`,
    core/authority/scope.py `cites_of`; "" for none known)."""
    status, workstream = _class_of(item.operation, item.params, view)
    if workstream is None:
        return None
    same = [s for s in history.said if s.operation == item.operation and s.status == status]
    owner = _owner(view, workstream)
    scopes: list[tuple[str, Sequence[str]]] = [(f"workstream {workstream}", (workstream,))]
    if owner:
        mine = tuple(w for w in view.workstreams if _owner(view, w) == owner)
        scopes.append((f"the workstreams of {owner}", mine))
    for kind in ("", cites) if cites else ("",):
        alike = [s for s in same if s.cites == kind] if kind else same
        for scope, inside in scopes:
            said = [s for s in alike if _workstream_of(s, view) in inside]
            rejected = tuple(s for s in said if not s.approved)
            if len(rejected) >= STANDING_NO and len(rejected) == len(said):
                last = max(datetime.fromisoformat(s.at) for s in rejected)
                return Refusal(item.operation, status, scope, rejected, last, kind)
    return None


def refusal_problem(
    item: ProposedItem, view: View, history: ApprovalHistory, evidence: Evidence, limits: Limits
) -> tuple[str | None, str | None]:
    """Why `item` is held by a standing "no" (a denial), or what a person's newer word changed
    (it is asked once more); (None, None) when no standing "no" covers it."""
    task = view.tasks.get(str(item.params.get("task_id")))
    cites = (
        "" if task is None or "status" not in item.params else cites_of(item.params, task, evidence)
    )
    found = (
        standing_no(item, view, history, cites)
        or _freshly_set(item, view, history, evidence)
        or _by_fact(item, view, history, evidence, limits)
    )
    if found is None:
        return None, None
    if found.while_fact:
        return found.clause(), None
    event = changed_since(item, view, evidence, found.last, found.lifted_by)
    if event is None:
        return found.clause(), None
    return None, (
        f"a standing no on {found.label()} ({len(found.rejected)} rejected, none approved); "
        f"event {event.id} from {short(event.source)} at {stamp(event.created_at)} came since, "
        "so it is asked once more"
    )


def standing_nos_in(view: View, history: ApprovalHistory) -> tuple[Refusal, ...]:
    """Every standing "no" in force on the domain as observed, one per class (what the prompt
    shows the model, so that it stops proposing what a person keeps refusing)."""
    found: dict[str, Refusal] = {}
    for said in (s for s in history.said if not s.approved):
        ws = _workstream_of(said, view)
        if ws is None:
            continue
        params: dict[str, Any] = {"task_id": said.task} if said.task else {"workstream_id": ws}
        params |= {"status": said.status} if said.status else {}
        item = ProposedItem(index=0, section="proposals", operation=said.operation,
                            params=params, reason=None, error=None, fingerprint="")  # fmt: skip
        refusal = standing_no(item, view, history, said.cites)
        if refusal is not None:
            found.setdefault(refusal.label(), refusal)
    return tuple(found[k] for k in sorted(found))


def _freshly_set(
    item: ProposedItem, view: View, history: ApprovalHistory, evidence: Evidence
) -> Refusal | None:
    """The standing "no" of moves on a task whose status a person set lately: every decided
    proposal of the class (the operation and the status it sets) made within R days of a
    person setting its task's status was rejected, at least STANDING_NO of them, none approved
    (R: the most days among them, below the fewest of any approved one); `item` is held when
    its task's status was set within R days too (core/authority/scope.py `owner_set_days`)."""
    status, workstream = _class_of(item.operation, item.params, view)
    task = view.tasks.get(str(item.params.get("task_id")))
    if not status or workstream is None or task is None or evidence.hub_now is None:
        return None
    same = [s for s in history.said if (s.operation, s.status) == (item.operation, status)]
    dated = [(s, int(s.set_days)) for s in same if s.set_days.isdigit()]
    fewest = min((d for s, d in dated if s.approved), default=None)
    rejected = tuple(s for s, d in dated if not s.approved and (fewest is None or d < fewest))
    if len(rejected) < STANDING_NO:
        return None
    most = max(int(s.set_days) for s in rejected)
    owner = _owner(view, workstream)
    facts = scope_facts(item.params, view, evidence.hub_now, evidence, history.said)
    mine = facts.get(WORD, "")
    if not mine.isdigit() or int(mine) > most:
        return None
    last = max(datetime.fromisoformat(s.at) for s in rejected)
    scope = f"tasks whose status a person set at most {most} days before"
    return Refusal(item.operation, status, scope, rejected, last, lifted_by=owner)


# How a "no" said of a fact names the proposals it holds, per fact (core/authority/scope.py).
OF_FACT = {
    "workstream_status": "workstreams whose status is {}",
    "last_by": "tasks whose newest word of a person is {}'s",
    CITES: "every workstream",
    ASKED: "proposals asked whatever would carry them",
}
# The facts that are the newest word itself: nothing but another's word ends them.
_WORD_FACTS = frozenset({"last_by"})


def _by_fact(
    item: ProposedItem, view: View, history: ApprovalHistory, evidence: Evidence, limits: Limits
) -> Refusal | None:
    """The standing "no" of a class's proposals with one value of a fact of their target
    (`NO_FACTS`, `_fact_no`) that `item`'s target has, if any."""
    status, workstream = _class_of(item.operation, item.params, view)
    if workstream is None or evidence.hub_now is None:
        return None
    facts = scope_facts(item.params, view, evidence.hub_now, evidence, history.said)
    spec = operations.find(item.operation)
    if spec is not None:
        asked = asked_anyway(spec, item.params, view, evidence, limits)
        facts[ASKED] = "no" if asked is None else "anyway"
    for key in (CITES, *sorted(NO_FACTS)):
        value = facts.get(key)
        found = None if value is None else _fact_no(item.operation, status, key, value, history)
        if found is not None:
            return found
    return None


def _fact_no(
    operation: str, status: str, key: str, value: str, history: ApprovalHistory
) -> Refusal | None:
    """The "no" of the class's proposals whose `key` was `value`: at least STANDING_NO
    rejected with it, none approved (an approved one whose facts were not kept counts as any
    value), and some approved with another value (the fact parts them); None: no such "no"."""
    if key == ASKED and value != "anyway":
        return None  # a "no" of what was asked anyway; not of everything else
    same = [s for s in history.said if (s.operation, s.status) == (operation, status)]
    if any(s.approved and _value(s, key) in (None, value) for s in same):
        return None
    if not any(s.approved and _value(s, key) not in (None, value) for s in same):
        return None  # the fact parts nothing: a class-wide "no" is scoped by workstream, above
    rejected = tuple(s for s in same if not s.approved and _value(s, key) == value)
    if len(rejected) < STANDING_NO:
        return None
    last = max(datetime.fromisoformat(s.at) for s in rejected)
    scope = OF_FACT[key].format(value)
    cites = value if key == CITES else ""
    return Refusal(operation, status, scope, rejected, last, cites, while_fact=key in _WORD_FACTS)


def _value(said: DecidedMark, key: str) -> str | None:
    """The value of `key` a decided proposal's mark kept (None: not kept)."""
    if key == CITES:
        return said.cites or None
    return said.fact(key) if said.on else None


def fact_nos_in(history: ApprovalHistory) -> tuple[Refusal, ...]:
    """Every standing "no" said of a fact (`_fact_no`) in the queue's window, one per class and
    value: what the prompt shows the model beside `standing_nos_in`."""
    found: dict[str, Refusal] = {}
    for said in (s for s in history.said if not s.approved):
        cited = ((CITES, said.cites),) if said.cites else ()
        for key, value in (*said.on, *cited):
            refusal = _fact_no(said.operation, said.status, key, value, history)
            if refusal is not None:
                found.setdefault(refusal.label(), refusal)
    return tuple(found[k] for k in sorted(found))


def held_class(reason: str) -> str | None:
    """The class a held item's sentence names (`set_task_status status=cancelled in …`)."""
    found = _CLASS.search(reason)
    return None if found is None else found.group(1)


def _class_of(operation: str, got: Mapping[str, Any], view: View) -> tuple[str, str | None]:
    """The status a proposal sets ("" for none) and the workstream it is about (None: none)."""
    status = got.get("status")
    said = DecidedMark(operation, status if isinstance(status, str) else "",
                str(got.get("task_id") or ""), str(got.get("workstream_id") or ""))  # fmt: skip
    return said.status, _workstream_of(said, view)


def _workstream_of(said: DecidedMark, view: View) -> str | None:
    if said.workstream:
        return said.workstream
    task = view.tasks.get(said.task)
    return None if task is None else task.workstream_id


def _owner(view: View, workstream: str) -> str:
    found = view.workstreams.get(workstream)
    return "" if found is None or not found.owner else str(found.owner)
