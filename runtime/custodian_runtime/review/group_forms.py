"""Items decided together: each card's choice (approve or reject; else its group's, else the
page's for every item shown) asked for at once, confirmed once on a page that repeats every
sentence and what each write does, and carried out item by item in the page's order. Each item
is checked again when it is carried out: one that changed since it was chosen is reported and
not run, and approve still goes through the one authority.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime

from custodian_runtime.clock import utc_now
from custodian_runtime.core.approvals.items import ApprovalItem
from custodian_runtime.person.carry_out import Flash, decide_and_say
from custodian_runtime.review._sentence import card_sentence, done_sentence, facts_of
from custodian_runtime.review.asked import AskedGroup, Chosen, SessionState, item_state
from custodian_runtime.review.draft import CHOICES, EVERY, group_field
from custodian_runtime.review.pending import read_domains
from custodian_runtime.review.queue_forms import (
    Form,
    FormAnswer,
    back,
    by_problem,
    one,
    pending_item,
    reason_of,
    reason_problem,
)
from custodian_runtime.settings import Settings

GROUP_PATH = "/decide-chosen"
GROUP_CONFIRM = re.compile(r"^/decide-chosen/(?P<nonce>[\w-]{1,64})$")
_NONE_CHOSEN = (
    "Choose approve or reject on at least one card, a group or every item shown. "
    "Nothing was decided."
)
_NOT_OPEN = (
    "Not decided: this confirmation is no longer open (used already, or the page restarted). "
    "Nothing ran; choose again in the queue."
)
_CHANGED = (
    "It changed or was decided since you chose it, so nothing ran; read it again in the queue."
)


def choices(form: Form) -> list[tuple[str, str]]:
    """(id, approve or reject) for every card of the form with a choice, in the form's order:
    the card's own, else its group's (`all-<group>`), else the page's (`all`: every item shown).
    A group's or the page's approve takes only the cards that offer approve (`approvable`)."""
    approvable = set(form.get("approvable", []))
    found = []
    for i in dict.fromkeys(i for i in form.get("ids", []) if i):
        own = one(form, f"choice-{i}")
        wide = one(form, group_field(one(form, f"group-{i}"))) or one(form, group_field(EVERY))
        if own in CHOICES:
            found.append((i, own))
        elif wide == "reject" or (wide == "approve" and i in approvable):
            found.append((i, wide))
    return found


def problems_of(form: Form, chosen: list[tuple[str, str]]) -> dict[str, str]:
    """What stops the group: a name, a choice, a reason for each reject (own or shared)."""
    found = {}
    whole = by_problem(one(form, "by").strip()) or (None if chosen else _NONE_CHOSEN)
    if whole is not None:
        found["group"] = whole
    for approval_id, decision in chosen:
        reason = reason_of(form, approval_id, shared=decision == "reject")
        problem = reason_problem(reason, decision == "reject")
        if problem is not None:
            found[approval_id] = problem
    return found


def place_after(form: Form, chosen: list[tuple[str, str]]) -> str:
    """The first card of the group left undecided, else the card after the group."""
    taken = {i for i, _ in chosen}
    left = [i for i in form.get("ids", []) if i and i not in taken]
    return back(form, left[0] if left else one(form, "after"))


@dataclass
class GroupHandlers:
    """The POST handlers of a group decision, for one review server."""

    settings: Settings
    state: SessionState
    clock: Callable[[], datetime] = utc_now

    def ask(self, form: Form, session: str) -> FormAnswer:
        """Check the choices and open one confirmation for all of them (or say what to fix)."""
        draft = self.state.keep_draft(session, form)
        chosen, by = choices(form), one(form, "by").strip()
        problems = problems_of(form, chosen)
        if problems:
            typed = replace(draft, by=by, problems=problems)
            return FormAnswer(422, typed=typed, by=by or None)
        now = self.clock()
        items = {i: pending_item(self.settings, i, now) for i, _ in chosen}
        live = [i for i in items.values() if i is not None]
        said = self._sentences(live)
        group = tuple(
            Chosen(
                i, d, item_state(item), said[i], reason_of(form, i, shared=d == "reject") or None
            )
            for i, d in chosen
            if (item := items[i]) is not None
        )
        gone = tuple(i for i, item in items.items() if item is None)
        asked = AskedGroup(by, group, place_after(form, chosen), gone)
        nonce = self.state.ask(session, asked)
        return FormAnswer(303, location=f"{GROUP_PATH}/{nonce}", by=by)

    def confirm(self, nonce: str, form: Form, session: str) -> FormAnswer:
        """Carry out each choice in order, if its item is still as it was when chosen."""
        asked = self.state.take(session, nonce)
        if not isinstance(asked, AskedGroup) or one(form, "decision") != "confirm":
            self.state.flash(session, [Flash("group", False, _NOT_OPEN)])
            return FormAnswer(303, location="/")
        flashes = [self._carry_out(asked.by, chosen) for chosen in asked.chosen]
        self.state.flash(session, flashes)
        self.state.decided(session, {f.approval_id for f in flashes if f.ok}, groups=True)
        return FormAnswer(303, location=asked.back, by=asked.by)

    def _carry_out(self, by: str, chosen: Chosen) -> Flash:
        item = pending_item(self.settings, chosen.approval_id, self.clock())
        if item is None or item_state(item) != chosen.state:
            return Flash(chosen.approval_id, False, f"Not decided: {chosen.sentence}. {_CHANGED}")
        past = self._sentences([item], past=True)[item.id]
        sentences = (chosen.sentence, past)
        reason = chosen.reason if chosen.decision == "approve" else chosen.reason or ""
        return decide_and_say(self.settings, item, chosen.decision, by, reason, sentences)

    def _sentences(self, items: list[ApprovalItem], *, past: bool = False) -> dict[str, str]:
        """Each item's sentence, with titles read from the hub once per domain."""
        read = read_domains(self.settings, {i.domain for i in items})
        facts = {d: facts_of(None if isinstance(s, str) else s) for d, s in read.items()}
        say = done_sentence if past else card_sentence
        return {i.id: say(i, facts[i.domain]) for i in items}
