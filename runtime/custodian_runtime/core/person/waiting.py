"""Why a queued item waits, in one line: from the ruling that queued it and the standing it met.

The ruling already says why (its `code` and `clause`); this names the kind of reason for a card,
`approvals show` and the note, and adds what the ruling's sentence leaves out: who set a mode
to `ask` and when, and why no grant carried an item every rule queued only because it needs a
person. A ruling of a code this module does not know keeps its code, and its clause is the text;
so does one whose clause is not the one the facts give (a sentence reworded since): the text is
always the authority's own.
"""

from __future__ import annotations

from dataclasses import dataclass

import custodian_runtime.core.operations as operations
from custodian_runtime.core.approvals.items import WaitingBecause
from custodian_runtime.core.authority.authorize import EVERY_PROPOSAL, Ruling, unproven
from custodian_runtime.core.authority.evidence import Evidence, stamp
from custodian_runtime.core.standing.grants import covering
from custodian_runtime.core.standing.modes import default_mode
from custodian_runtime.core.standing.rule import Ground, cites_newer, observed_facts


@dataclass(frozen=True)
class _Said:
    """A ruling's clause without its final stop, and the item's operation."""

    clause: str
    operation: str


def waiting_because(ruling: Ruling, ground: Ground | None = None) -> WaitingBecause:
    """The one line a person reads on why `ruling`'s item waits; `ground`: the standing and
    evidence it was ruled on (None: only what the ruling itself carries)."""
    said = _Said((ruling.clause or ruling.reason).rstrip("."), ruling.item.operation)
    if ruling.code == "routine":
        return _approvable(ruling, ground)
    if ruling.code == "deferred":
        return _because("deferred", "in deference to a person: " + said.clause)
    if said.clause.startswith(f"{EVERY_PROPOSAL}; "):
        rest = said.clause.removeprefix(f"{EVERY_PROPOSAL}; ")
        return _because("grant", f"{_needs_person(said.operation)}, and no grant covers it: {rest}")
    if " covers it, but " in said.clause:
        return _because("grant", said.clause)
    found = None if ground is None else _asked(said, ground) or _unproven(ruling, said, ground)
    return found or _because(ruling.code, said.clause)


def _approvable(ruling: Ruling, ground: Ground | None) -> WaitingBecause:
    """An item every rule queued only because its operation always needs a person."""
    operation = ruling.item.operation
    spec = operations.find(operation)
    if spec is not None and spec.never_granted:
        return _because(
            "approvable", f"{_needs_person(operation)}, and is never granted: {spec.never_granted}"
        )
    missed = () if ground is None else _grants_missed(ruling, ground)
    if missed:
        text = f"{_needs_person(operation)}, and no grant covers it: {'; '.join(missed)}"
        return _because("grant", text)
    return _because("approvable", f"{_needs_person(operation)}, and no grant is issued for it")


def _grants_missed(ruling: Ruling, ground: Ground) -> tuple[str, ...]:
    """Why each of the domain's grants for the item's operation did not carry it."""
    item = ruling.item
    newer = ruling.word is not None or cites_newer(item, ground)
    standing = ground.standing
    cover = covering(
        item.operation, item.params, standing.grants, standing.uses, ground.now, ground.hub_id,
        newer, standing.narrowed.suspended, observed_facts(item, ground),
    )  # fmt: skip
    return cover.why_not if cover.grant is None else ()


def _asked(said: _Said, ground: Ground) -> WaitingBecause | None:
    """A write Custodian makes on its own, queued because a person set its mode to `ask`."""
    setting = ground.standing.modes.settings.get(said.operation)
    if setting is None or setting.mode != "ask" or default_mode(said.operation) == "ask":
        return None  # no setting, or asking is the operation's default: it changed nothing
    # The clause the standing's `ask` ruling ends with (core/standing/rule.py `_asked`), after
    # what changed since a person rejected the same proposal, if anything did.
    asked = f"a person set {said.operation} to ask ({setting.by}: {setting.reason})"
    if not said.clause.endswith(asked):
        return None
    text = f"{setting.by} set {said.operation} to ask at {stamp(setting.at)}: {setting.reason}"
    changed = said.clause.removesuffix(asked).rstrip("; ")
    return _because("mode_ask", f"{changed}; {text}" if changed else text)


def _unproven(ruling: Ruling, said: _Said, ground: Ground) -> WaitingBecause | None:
    """A status write that would run on its own, queued because its evidence does not prove it."""
    evidence = ground.evidence if ground.evidence is not None else Evidence()
    lacking = unproven(ruling.item, evidence)
    # The authority's clause ends with it, after what changed since a rejection, if anything.
    if lacking is None or not said.clause.endswith(lacking):
        return None
    return _because("evidence", said.clause)


def _needs_person(operation: str) -> str:
    return f"{operation} always needs a person's approval"


def _because(code: str, text: str) -> WaitingBecause:
    return WaitingBecause(code=code, text=_sentence(text))


def _sentence(text: str) -> str:
    """The clause as it reads after a label, ending in a full stop; never capitalized, since it
    may begin with a person's name or an operation's, which keep their letters as typed."""
    return text.strip().rstrip(".") + "."
