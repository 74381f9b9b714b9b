"""The forms of the pending queue: approve (asks for a confirmation), confirm, reject, and
reject several at once. Each answers with a redirect (POST-redirect-GET) and a flash sentence,
or re-renders the queue with everything typed and the problem said inline.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from urllib.parse import quote

from custodian_runtime.clock import utc_now
from custodian_runtime.core.approvals.items import ApprovalItem, effective_status
from custodian_runtime.errors import CustodianError
from custodian_runtime.journal.person.queue import ApprovalStore
from custodian_runtime.person.carry_out import Flash, decide_and_say
from custodian_runtime.person.shards import shard_of
from custodian_runtime.review._sentence import card_sentence, done_sentence, facts_of
from custodian_runtime.review.asked import Asked, SessionState, item_state
from custodian_runtime.review.draft import Form, Typed
from custodian_runtime.review.pending import read_domains
from custodian_runtime.settings import Settings

MAX_BY, MAX_REASON = 100, 2000
NEXT = re.compile(r"^/(\?[A-Za-z0-9=&_.%+-]{0,300})?$")
CARD_ID = re.compile(r"^[A-Za-z0-9-]{1,100}$")
__all__ = ["Form", "Typed"]


@dataclass(frozen=True)
class FormAnswer:
    """What a form came to: a redirect to `location`, or the queue again with `typed` (status)."""

    status: int
    location: str | None = None
    typed: Typed | None = None
    by: str | None = None  # the name to remember for the session


def one(form: Form, key: str) -> str:
    """A form field's first value ("" when absent)."""
    return form.get(key, [""])[0]


def back(form: Form, card: str = "") -> str:
    """Where to go after a decision: the queue with the filter it was made under, at `card`
    (the card that followed the decided one) when there is one: the page says there what the
    decision came to, and the address scrolls to it."""
    given = one(form, "next")
    where = given if NEXT.match(given) else "/"
    if not CARD_ID.match(card):
        return where
    return f"{where}{'&' if '?' in where else '?'}at={card}#decided"


def reason_of(form: Form, approval_id: str, *, shared: bool = True) -> str:
    """The reason typed on the item's card (`reason-<id>`), else (when `shared`, or the form
    has no such field) the form's one `reason`: a group's reason for the rejections."""
    own = form.get(f"reason-{approval_id}")
    if own is not None and (own[0].strip() or not shared):
        return own[0].strip()
    return one(form, "reason").strip()


def by_problem(by: str) -> str | None:
    """Why the name cannot decide, or None."""
    if not by or len(by) > MAX_BY:
        return f"Say who decides in “by” (1 to {MAX_BY} characters). Nothing was decided."
    return None


def reason_problem(reason: str, needed: bool) -> str | None:
    """Why the reason cannot go with the decision, or None."""
    if needed and not reason:
        return "A reject needs a reason: say why in “reason”. Nothing was decided."
    if len(reason) > MAX_REASON:
        return f"The reason is longer than {MAX_REASON} characters. Nothing was decided."
    return None


def pending_item(settings: Settings, approval_id: str, now: datetime) -> ApprovalItem | None:
    """The item if it exists (in one shard) and still waits for a decision."""
    shard = shard_of(settings, approval_id)
    if shard is None:
        return None
    store = ApprovalStore(shard.memory_dir, shard.seal_key)
    try:
        item = store.get(approval_id, verify=False)
    except CustodianError:
        return None
    return item if effective_status(item, now) == "pending" else None


def sentences(settings: Settings, item: ApprovalItem) -> tuple[str, str]:
    """The item's sentence (imperative, past), with titles read from the hub now."""
    read = read_domains(settings, [item.domain]).get(item.domain)
    facts = facts_of(None if isinstance(read, str) else read)
    return card_sentence(item, facts), done_sentence(item, facts)


@dataclass
class DecisionHandlers:
    """The queue's POST handlers for one review server."""

    settings: Settings
    state: SessionState
    clock: Callable[[], datetime] = utc_now

    def decide_one(self, approval_id: str, form: Form, session: str) -> FormAnswer:
        """Approve (which asks for a confirmation first) or reject one item; every other card's
        choice and reason, sent with it, is kept for the next page (the session's draft)."""
        draft = self.state.keep_draft(session, form)
        decision, by = one(form, "decision"), one(form, "by").strip()
        reason = reason_of(form, approval_id, shared=decision != "approve")
        if decision == "dismiss":  # a stale card: nothing could run, so it is rejected as such
            decision, reason = "reject", reason or DISMISSED
        problem = by_problem(by) or reason_problem(reason, decision == "reject")
        if decision not in ("approve", "reject"):
            problem = "Choose Approve or Reject. Nothing was decided."
        if problem is not None:
            typed = replace(draft, by=by, problems={approval_id: problem})
            return FormAnswer(422, typed=typed, by=by or None)
        item = pending_item(self.settings, approval_id, self.clock())
        if item is None:
            self.state.flash(session, [Flash(approval_id, False, f"{approval_id}: {_GONE}")])
            return FormAnswer(303, location=back(form), by=by)
        said = sentences(self.settings, item)
        place = back(form, one(form, f"after-{approval_id}"))
        if decision == "approve":
            asked = Asked(item.id, item_state(item), by, reason or None, said[0], place)
            nonce = self.state.ask(session, asked)
            location = f"/approvals/{quote(item.id)}/confirm/{nonce}"
            return FormAnswer(303, location=location, by=by)
        flash = decide_and_say(self.settings, item, "reject", by, reason, said)
        self._said(session, [flash])
        return FormAnswer(303, location=place, by=by)

    def _said(self, session: str, flashes: list[Flash]) -> None:
        """Show what the decisions came to; the decided items leave the draft."""
        self.state.flash(session, flashes)
        self.state.decided(session, {f.approval_id for f in flashes if f.ok})

    def confirm(self, approval_id: str, form: Form, session: str) -> FormAnswer:
        """Carry out an approval that was asked for, if the item is still as it was then."""
        asked = self.state.take(session, one(form, "nonce"))
        if (
            not isinstance(asked, Asked)
            or asked.approval_id != approval_id
            or one(form, "decision") != "confirm"
        ):
            flash = Flash(approval_id, False, _NO_CONFIRMATION)
            self.state.flash(session, [flash])
            return FormAnswer(303, location="/")
        item = pending_item(self.settings, approval_id, self.clock())
        if item is None or item_state(item) != asked.state:
            text = f"Not approved: {asked.sentence}. {_CHANGED}"
            self.state.flash(session, [Flash(approval_id, False, text)])
            return FormAnswer(303, location="/")
        said = (asked.sentence, sentences(self.settings, item)[1])
        flash = decide_and_say(self.settings, item, "approve", asked.by, asked.note, said)
        self._said(session, [flash])
        return FormAnswer(303, location=asked.back, by=asked.by)

    def reject_many(self, form: Form, session: str) -> FormAnswer:
        """Reject every selected item with one reason, each as `approvals reject` does."""
        ids = [i for i in form.get("ids", []) if i]
        by, reason = one(form, "by").strip(), one(form, "reason").strip()
        problem = by_problem(by) or reason_problem(reason, True)
        if not ids:
            problem = (
                "Select the items to reject with the boxes on their cards. Nothing was decided."
            )
        if one(form, "decision") != "reject":
            problem = "Only a reject can be made for several items at once. Nothing was decided."
        if problem is not None:
            typed = Typed(
                by, problems={"bulk": problem}, selected=frozenset(ids), bulk_reason=reason
            )
            return FormAnswer(422, typed=typed, by=by or None)
        self._said(session, [self._reject(i, by, reason) for i in ids])
        return FormAnswer(303, location=back(form), by=by)

    def _reject(self, approval_id: str, by: str, reason: str) -> Flash:
        item = pending_item(self.settings, approval_id, self.clock())
        if item is None:
            return Flash(approval_id, False, f"{approval_id}: {_GONE}")
        said = sentences(self.settings, item)
        return decide_and_say(self.settings, item, "reject", by, reason, said)


DISMISSED = "Dismissed: its target changed since it was proposed, so it could no longer run."
_GONE = "not decided: it was decided or expired meanwhile, or there is no such item (see History)."
_CHANGED = (
    "The item changed or was decided since you asked to approve it, so nothing ran. "
    "Read it again in the queue and decide afresh."
)
_NO_CONFIRMATION = (
    "Not approved: this confirmation is no longer open (used already, or the page restarted). "
    "Nothing ran; approve again from the queue."
)
