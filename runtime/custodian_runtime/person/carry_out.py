"""A decision from the review page, carried out through the very functions `custodian approvals`
runs, in the shard its item lives in, and what it came to said as a sentence (never a raw
result)."""

from __future__ import annotations

from dataclasses import dataclass

from custodian_runtime.clock import utc_now
from custodian_runtime.core.approvals.items import ApprovalItem
from custodian_runtime.core.presentation.approval_text import answered, fate
from custodian_runtime.errors import CustodianError
from custodian_runtime.journal.person.queue import ApprovalStore
from custodian_runtime.person._approvals import decide_approve, decide_reject
from custodian_runtime.person._recorded import recorded_decisions
from custodian_runtime.person.shards import shard_of
from custodian_runtime.settings import Settings


@dataclass(frozen=True)
class Flash:
    """One sentence shown once on the next page: what a decision came to."""

    approval_id: str
    ok: bool
    text: str


@dataclass(frozen=True)
class Decided:
    """What a decision came to: the CLI's exit code and the line it prints (or its error)."""

    approval_id: str
    decision: str
    exit_code: int
    message: str

    @property
    def ok(self) -> bool:
        """True when the decision was carried out as asked."""
        return self.exit_code == 0


def decide(
    settings: Settings, approval_id: str, decision: str, by: str, reason: str | None
) -> Decided:
    """Approve (with `reason` as the note) or reject (with `reason`) one item, as the CLI does."""
    store = ApprovalStore(settings.memory_dir, settings.seal_key)
    now = utc_now()
    try:
        # The page names the person one way (core/approvals/decider.py); the journal says which.
        source = settings.people.page_source
        if decision == "reject":
            done = decide_reject(
                settings, store, approval_id, by, reason or "", now, by_source=source
            )
        else:
            done = decide_approve(settings, store, approval_id, by, reason, now, by_source=source)
    except CustodianError as exc:
        return Decided(approval_id, decision, exc.exit_code, exc.message)
    return Decided(approval_id, decision, done.exit_code, done.message)


def decide_and_say(
    settings: Settings, item: ApprovalItem, decision: str, by: str, reason: str | None,
    sentences: tuple[str, str],
) -> Flash:  # fmt: skip
    """Decide, in the shard the item lives in, then say in one sentence what happened and what
    happens next."""
    shard = shard_of(settings, item.id)
    if shard is None:  # gone meanwhile, or in two shards' queues: decided in neither
        return Flash(item.id, False, f"Not decided: {sentences[0]}. {_NOT_ONE_SHARD}")
    decided = decide(shard, item.id, decision, by, reason)
    return said(shard, item, decided, sentences)


def said(
    settings: Settings, item: ApprovalItem, decided: Decided, sentences: tuple[str, str]
) -> Flash:
    """The flash sentence for a decision on `item`; `sentences` state the decision, in the
    imperative (the card's) and in the past tense."""
    sentence, past = sentences
    inbox = recorded_decisions(settings, item.domain)
    if decided.ok and item.id in inbox:
        return Flash(item.id, True, _recorded(item, decided.decision, sentence))
    try:
        now = ApprovalStore(settings.memory_dir, settings.seal_key).get(item.id, verify=False)
    except CustodianError:
        now = None
    if now is None or now.status == "pending":
        why = decided.message.removeprefix(f"{item.id}: ")
        return Flash(item.id, False, f"Not decided: {sentence}. {_capital(why)}")
    if now.status == "executed":
        text = f"Approved and executed: {past}; {answered(now)}."
    elif now.status == "rejected":
        text = f"Rejected by {now.decided_by}: {sentence}. Reason: {now.reject_reason}"
    else:
        text = f"Approved, not carried out: {sentence}. {fate(now, now.status)}"
    return Flash(item.id, now.status in ("executed", "rejected"), text)


def _recorded(item: ApprovalItem, decision: str, sentence: str) -> str:
    if decision == "reject":
        return (
            f"Rejection kept: {sentence}. A run is working on {item.domain} right now; "
            "the rejection takes effect as soon as it ends."
        )
    return (
        f"Approval kept: {sentence}. A run is working on {item.domain} right now; when it "
        "ends, the hub is checked again and, if nothing changed, the write is carried out."
    )


def _capital(text: str) -> str:
    text = text.strip()
    text = text[:1].upper() + text[1:]
    return text if text.endswith(".") else text + "."


_NOT_ONE_SHARD = (
    "It is no longer in the queue of one memory directory of this page (decided elsewhere, or "
    "found in two shards' queues); nothing ran. `custodian approvals show` in each shard says more."
)
