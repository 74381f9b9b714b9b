"""`custodian approvals`: the person's side of the queue: list, show, approve, reject.

An approval goes through the same authority as a fresh plan: the core rules on the item as
stored against the domain observed now (`core.person.verdicts`), and this module performs what
the verdict says: it journals the decision, its ruling and each write in the domain's journal,
under the domain's lock, and stores the item's new status.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, TextIO

import custodian_runtime.person._execute as _execute
from custodian_runtime.clock import utc_now
from custodian_runtime.core.approvals.decider import BySource, Decider
from custodian_runtime.core.approvals.items import ApprovalItem, listed_status
from custodian_runtime.core.approvals.ledger import Ledger
from custodian_runtime.core.authority.own_writes import OwnWrite
from custodian_runtime.core.fold.api import Record
from custodian_runtime.core.inert import for_terminal, for_terminal_json
from custodian_runtime.core.journal.words import Word
from custodian_runtime.core.person import verdicts
from custodian_runtime.core.person.settle import (
    executed_before,
    landed_message,
    open_writes_of,
    reconcile_item_writes,
)
from custodian_runtime.core.person.verdicts import ObservedNow, Verdict, sourced
from custodian_runtime.core.presentation import approval_text
from custodian_runtime.errors import ApprovalError, JournalError, RunLocked, SealError
from custodian_runtime.journal.lock import RunLock
from custodian_runtime.journal.person.inbox import Inbox
from custodian_runtime.journal.person.queue import ApprovalStore
from custodian_runtime.journal.run_journal import DiskJournal
from custodian_runtime.journal.store import JournalStore
from custodian_runtime.person._probe import probe_item_writes
from custodian_runtime.person._recorded import (
    NotHere,
    WordsAhead,
    carry_out_recorded,
    decide_or_record,
    keep_behind,
    record_for_later,
    recorded,
    word_journal,
    words_ahead,
)
from custodian_runtime.person._repair import RepairRequest, repair_command
from custodian_runtime.person._report import DecisionReport
from custodian_runtime.person.derived import (
    Healed,
    as_journal_says,
    heal_domain,
    journal_ledger,
)
from custodian_runtime.settings import Settings


@dataclass(frozen=True)
class ListRequest:
    """`approvals list`: the queue, of one domain or status if given."""

    domain: str | None = None
    status: str | None = None
    as_json: bool = False


@dataclass(frozen=True)
class ShowRequest:
    """`approvals show ID`."""

    approval_id: str
    as_json: bool = False


@dataclass(frozen=True)
class ApproveRequest:
    """`approvals approve ID [--by NAME] [--note TEXT]`."""

    approval_id: str
    by: str
    note: str | None = None
    wait_s: float = 0.0
    as_json: bool = False
    by_source: BySource = "typed"


@dataclass(frozen=True)
class RejectRequest:
    """`approvals reject ID [--by NAME] --reason TEXT`."""

    approval_id: str
    by: str
    reason: str
    wait_s: float = 0.0
    as_json: bool = False
    by_source: BySource = "typed"


ApprovalsRequest = ListRequest | ShowRequest | ApproveRequest | RejectRequest | RepairRequest


# A decision that came after an earlier approval's write had landed: the item is executed.
EXIT_LANDED = verdicts.EXIT_REFUSED


def approvals_command(settings: Settings, request: ApprovalsRequest, out: TextIO) -> int:
    """Carry out `approvals list|show|approve|reject|repair`."""
    deciding = isinstance(request, ApproveRequest | RejectRequest) and request.as_json
    earlier = carry_out_recorded_decisions(settings)
    if not deciding:  # with --json, stdout is the JSON alone: what else is said goes to stderr
        said = sys.stderr if getattr(request, "as_json", False) else out
        for one in earlier:
            said.write(f"carried out a kept decision: {one.message}\n")
    if isinstance(request, RepairRequest):
        return repair_command(settings, request, out)
    store = ApprovalStore(settings.memory_dir, settings.seal_key)
    now = utc_now()
    if isinstance(request, ListRequest | ShowRequest):
        # What a person reads is the journal's status: item files that disagree are rewritten.
        shown = [store.get(request.approval_id, verify=False).domain] if isinstance(
            request, ShowRequest) else _domains_of(store, request.domain)  # fmt: skip
        busy = _heal(settings, shown, now)
        view = _JournalView(store, busy)
    if isinstance(request, ListRequest):
        return _list_items(view, now, request, out)
    if isinstance(request, ShowRequest):
        return _show_item(view, request.approval_id, now, request.as_json, out)
    if isinstance(request, RejectRequest):
        done = decide_reject(
            settings, store, request.approval_id, request.by, request.reason, now,
            wait_s=request.wait_s, by_source=request.by_source,
        )  # fmt: skip
    else:
        done = decide_approve(
            settings, store, request.approval_id, request.by, request.note, now,
            wait_s=request.wait_s, by_source=request.by_source,
        )  # fmt: skip
    if request.as_json:
        said = _decided_json(store, done, [one.message for one in earlier])
        out.write(for_terminal_json(said, indent=2) + "\n")
    else:
        out.write(done.message + "\n")
    return done.exit_code


def _decided_json(store: ApprovalStore, done: DecisionReport, earlier: list[str]) -> dict[str, Any]:
    """`approve|reject --json`: the sentence, the exit code, and the item as stored now."""
    try:
        item = store.get(done.approval_id, verify=False)
    except ApprovalError:
        item = None  # an id no file holds: the message says so
    data = None if item is None else item.model_dump(mode="json", exclude={"seal"})
    return {"approval_id": done.approval_id, "exit_code": done.exit_code,
            "message": done.message, "item": data, "recorded_decisions": earlier}  # fmt: skip


@dataclass(frozen=True)
class _Listed:
    """An item as listed: the status it shows now, and why its seal fails, if it does."""

    item: ApprovalItem
    status: str
    seal_problem: str | None

    def as_json(self) -> dict[str, Any]:
        """The item as stored (without its seal), with the listed status."""
        data = self.item.model_dump(mode="json", exclude={"seal"})
        problem = {"seal_problem": self.seal_problem} if self.seal_problem is not None else {}
        return {**data, "status": self.status, **problem}


def _domains_of(store: ApprovalStore, domain: str | None) -> list[str]:
    """The domains whose items a listing shows."""
    return [domain] if domain is not None else sorted({i.domain for i in store.all(verify=False)})


def _heal(settings: Settings, domains: list[str], now: datetime) -> dict[str, Ledger]:
    """Rewrite each domain's item files that disagree with its journal, saying so on stderr;
    the journal's view of each domain a run holds now (its files are left to a later command)."""
    busy: dict[str, Ledger] = {}
    for domain in domains:
        try:
            healed = heal_domain(settings.memory_dir, settings.seal_key, domain, now)
            if healed is None:
                busy[domain] = journal_ledger(settings.memory_dir, settings.seal_key, domain)
        except (JournalError, SealError) as exc:  # a listing still lists; deciding refuses
            sys.stderr.write(for_terminal(
                f"custodian: {domain}: the journal cannot be read, so its items show what their "
                f"files say ({exc.message.split('; ')[0]}); `custodian inspect --domain {domain}`"
            ) + "\n")  # fmt: skip
            continue
        for one in healed or []:
            sys.stderr.write(for_terminal(f"custodian: {one.line()}") + "\n")
    return busy


@dataclass(frozen=True)
class _JournalView:
    """The item files, each with the status its journal gives it (for the domains a run holds,
    read from the journal; for the others, the files were just rewritten to agree)."""

    store: ApprovalStore
    busy: dict[str, Ledger]

    def listing(self, item: ApprovalItem, now: datetime) -> _Listed:
        """The item as listed, with the journal's status (its seal judged as the file holds it)."""
        problem = self.store.seal_problem(item)
        said = self.busy[item.domain].status_of(item.id) if item.domain in self.busy else None
        shown = item if said is None else item.model_copy(update={"status": said.status})
        return _Listed(shown, listed_status(shown, now, problem), problem)

    def all(self, domain: str | None, now: datetime) -> list[_Listed]:
        """Every item (of `domain`), as the journal says it."""
        return [self.listing(i, now) for i in self.store.all(domain, verify=False)]


def _list_items(view: _JournalView, now: datetime, request: ListRequest, out: TextIO) -> int:
    """Print the queue, pending first; `--json` prints a JSON array."""
    listed = view.all(request.domain, now)
    if request.status:
        listed = [one for one in listed if one.status == request.status]
    listed.sort(key=lambda one: (one.status != "pending", one.item.created_at))
    if request.as_json:
        out.write(for_terminal_json([one.as_json() for one in listed], indent=2) + "\n")
        return 0
    if not listed:
        out.write("no approval items\n")
    for one in listed:
        # Two inert lines per item whatever the params hold, each at most 100 columns.
        out.write("\n".join(approval_text.list_lines(one.item, one.status, now)) + "\n")
    return 0


def _show_item(
    view: _JournalView, approval_id: str, now: datetime, as_json: bool, out: TextIO
) -> int:
    """Print one item: every field labelled, or with `--json` the item as stored."""
    listing = view.listing(view.store.get(approval_id, verify=False), now)
    item = listing.item
    if as_json:
        out.write(for_terminal_json(listing.as_json(), indent=2) + "\n")
        return 0
    out.write(approval_text.show_text(item, listing.status, now, listing.seal_problem))
    return 0


def decide_reject(
    settings: Settings,
    store: ApprovalStore,
    approval_id: str,
    by: str,
    reason: str,
    now: datetime,
    *,
    wait_s: float = 0.0,
    by_source: BySource = "typed",
) -> DecisionReport:
    """Reject one item (never queued again); the CLI and the review page both call this.

    While a run has the domain's lock past `wait_s`, the rejection is recorded and journaled when
    the domain is free (person/_recorded.py). `by_source`: where the name `by` came from.
    """

    def word(item: ApprovalItem) -> Word:
        return recorded(item, "reject", by, reason, now, by_source)

    def later(busy: RunLocked) -> DecisionReport:
        item = _pending(store, approval_id, now, settings)
        return record_for_later(settings, item, word(item), busy)

    def attempt(stuck: frozenset[str]) -> DecisionReport:
        return _reject_now(
            settings, store, approval_id, Decider(by, by_source), reason, now, stuck=stuck
        )

    def behind(ahead: int) -> DecisionReport:
        item = _pending(store, approval_id, now, settings)
        return keep_behind(settings, item, word(item), ahead)

    return decide_or_record(
        _behind_words_ahead(settings, store, approval_id, attempt, behind), later, wait_s
    )


def _reject_now(
    settings: Settings, store: ApprovalStore, approval_id: str, who: Decider, reason: str,
    now: datetime, word: Word | None = None, *, stuck: frozenset[str] = frozenset(),
) -> DecisionReport:  # fmt: skip
    """Reject under the domain's lock (RunLocked while a run holds it).

    An earlier approval's write still open is settled first: if it landed, the item is
    executed and the reject says so; if not, the write is closed and the reject stands.
    """
    by = who.name
    with _deciding(settings, store, approval_id, now, word, stuck) as d:
        verdict = sourced(verdicts.rejected(d.item, by, reason, now), who.source)
        _journal(d.journal, verdict)
        # Rejected: nothing of the item is sent again, not even a probe (a probe is a re-send).
        landed = _reconcile_open(settings, d, f"{by} rejected the item before it landed", now,
                              probe=False)  # fmt: skip
        if landed is not None:
            store.save(executed_before(d.item, f"when {by} decided again", landed, now))
            return DecisionReport(d.item.id, EXIT_LANDED, landed_message(d.item, landed))
        _store(store, verdict)
    return DecisionReport(d.item.id, verdict.exit_code, verdict.message)


def decide_approve(
    settings: Settings,
    store: ApprovalStore,
    approval_id: str,
    by: str,
    note: str | None,
    now: datetime,
    *,
    wait_s: float = 0.0,
    by_source: BySource = "typed",
) -> DecisionReport:
    """Approve one item: the core rules on it now, and only an allowed write is sent.

    The CLI and the review page both call this. While a run has the domain's lock past `wait_s`,
    the approval is recorded, and ruled on and carried out when the domain is free.
    `by_source`: where the name `by` came from.
    """

    def word(item: ApprovalItem) -> Word:
        return recorded(item, "approve", by, note, now, by_source)

    def later(busy: RunLocked) -> DecisionReport:
        item = _pending(store, approval_id, now, settings)
        return record_for_later(settings, item, word(item), busy)

    def attempt(stuck: frozenset[str]) -> DecisionReport:
        return _approve_now(
            settings, store, approval_id, Decider(by, by_source), note, now, stuck=stuck
        )

    def behind(ahead: int) -> DecisionReport:
        item = _pending(store, approval_id, now, settings)
        return keep_behind(settings, item, word(item), ahead)

    return decide_or_record(
        _behind_words_ahead(settings, store, approval_id, attempt, behind), later, wait_s
    )


def _waiting_names(settings: Settings, domain: str) -> frozenset[str]:
    """The file names of the words waiting in `domain`'s inbox."""
    return frozenset(p.name for p in Inbox(settings.memory_dir, settings.seal_key).files(domain))


# How often a decision absorbs the words found waiting ahead of it before it is kept behind them.
WORDS_AHEAD_TRIES = 3


def _behind_words_ahead(
    settings: Settings, store: ApprovalStore, approval_id: str,
    attempt: Callable[[frozenset[str]], DecisionReport],
    keep: Callable[[int], DecisionReport],
) -> Callable[[], DecisionReport]:  # fmt: skip
    """`attempt`, after the words that wait in the domain's inbox ahead of it are carried out:
    a person's word is journaled in the order it came, never before one kept earlier. Behind a
    word this command cannot carry out (kept for another hub or canon), it is kept too (`keep`);
    a word put back from before the journal's mark is no word ahead, and holds no one up."""

    def behind() -> DecisionReport:
        before: list[str] = []
        stuck: frozenset[str] = frozenset()
        for _ in range(WORDS_AHEAD_TRIES):
            try:
                done = attempt(stuck)
            except ApprovalError as exc:
                if not before:
                    raise
                raise ApprovalError("\n".join([*before, exc.message])) from exc
            except WordsAhead:
                domain = store.get(approval_id, verify=False).domain
                ahead = carry_out_recorded_decisions(settings, domain)
                before += [f"carried out first, as it came first: {a.message}" for a in ahead]
                left = words_ahead(settings, domain)
                if left:
                    kept = keep(left)
                    return replace(kept, message="\n".join([*before, kept.message]))
                stuck = _waiting_names(settings, domain)  # put back: never carried out
                continue
            return replace(done, message="\n".join([*before, done.message]))
        raise RunLocked(f"{approval_id}: words keep arriving ahead of this decision; try again")

    return behind


def carry_out_recorded_decisions(
    settings: Settings, domain: str | None = None
) -> list[DecisionReport]:
    """Absorb the words kept while their domain was busy, where it is free now: an approve is
    ruled on against the hub as it is now, a reject journaled, a mode or grant journaled."""
    store = ApprovalStore(settings.memory_dir, settings.seal_key)

    def approve(w: Word) -> DecisionReport:
        said = w.decision()
        who = Decider(said.by, said.by_source or "typed")
        return _approve_now(settings, store, said.approval_id, who, said.text, utc_now(), w)

    def reject(w: Word) -> DecisionReport:
        said = w.decision()
        who = Decider(said.by, said.by_source or "typed")
        return _reject_now(settings, store, said.approval_id, who, said.text or "", utc_now(), w)

    return carry_out_recorded(settings, domain, approve, reject)


def _approve_now(
    settings: Settings,
    store: ApprovalStore,
    approval_id: str,
    who: Decider,
    note: str | None,
    now: datetime,
    word: Word | None = None,
    *,
    stuck: frozenset[str] = frozenset(),
) -> DecisionReport:
    """Approve under the domain's lock (RunLocked while a run holds it).

    An earlier approval's write still open is settled first (found, or closed).
    """
    by = who.name
    item = _pending(store, approval_id, now, settings)
    hub = _execute.configured_hub(settings) if _execute.needs_hub(item) else None
    site = _execute.decision_site(settings, item, hub)
    refusal = verdicts.foreign_refusal(item, site, note)
    if refusal is not None and word is not None:
        # Not this command's to carry out: the kept word waits, untouched, for its own hub.
        raise NotHere(refusal.message, exit_code=refusal.exit_code)
    if refusal is not None:
        # Not decided: the item stays pending for its own hub or canon; nothing is journaled.
        return DecisionReport(approval_id, refusal.exit_code, refusal.message)
    _execute.check_writable_canon(settings, item)
    with _deciding(settings, store, approval_id, now, word, stuck) as d:
        seen = _execute.observe(settings, d.item, d.writes, d.history)
        # The same ruling the review page previews (verdicts.on_approve), origin included.
        verdict = sourced(verdicts.on_approve(d.item, site, by, note, seen, now), who.source)
        if not (verdict.records or verdict.stored or verdict.execute):
            # Not decided (a mode holds it, or it is refused): still pending. A kept word is
            # closed by its own refusal, journaled with the reason; a word said now is not.
            if word is not None:
                closed = verdicts.word_closed(d.item, by, verdict.message)
                _journal(d.journal, sourced(closed, who.source))
            return DecisionReport(approval_id, verdict.exit_code, verdict.message)
        # The decision comes first in the attempt's records, then what settling the item's open
        # write found, then the ruling and the write.
        for kind, data in verdict.records[:1]:
            d.journal.append(kind, data)
        # Ruled first: an open write is probed only when the ruling would send the write now.
        landed = _reconcile_open(
            settings, d, f"{by} approved the item again", now, seen, probe=verdict.execute
        )
        if landed is not None:
            store.save(executed_before(d.item, f"when {by} decided again", landed, now))
            return DecisionReport(d.item.id, EXIT_LANDED, landed_message(d.item, landed))
        for kind, data in verdict.records[1:]:
            d.journal.append(kind, data)
        if verdict.execute:
            outcome = _execute.execute(settings, d.item, by, d.journal, d.run_id, verdict.task, hub)
            verdict = _said(verdicts.carried_out(d.item, by, note, outcome, now))
        _store(store, verdict)
    return DecisionReport(d.item.id, verdict.exit_code, verdict.message)


def _said(verdict: Verdict) -> Verdict:
    """What the write came to, as the sentence `approvals show` gives it (its fate)."""
    item = verdict.stored
    if item is None:
        return verdict
    return replace(
        verdict, message=for_terminal(f"{item.id}: {approval_text.fate(item, item.status)}")
    )


def _reconcile_open(
    settings: Settings, d: Deciding, closing: str, now: datetime, seen: ObservedNow | None = None,
    *, probe: bool,
) -> str | None:  # fmt: skip
    """Settle the writes an earlier approval of the item left open; where one landed, if any.

    A status write is settled only by a probe of its key (person/_probe.py), never by the
    status the task shows; `probe` only when the ruling would send the write now (a probe
    re-sends it). Unprobed, such a write is closed unsent by `closing`."""
    pending = open_writes_of(d.history, d.item.id)
    if not pending:
        return None
    seen = seen or _execute.observe(settings, d.item, d.writes, d.history)
    rest, probed = (
        probe_item_writes(settings, d.journal, pending, seen.summary, now)
        if probe else (list(pending), None)
    )  # fmt: skip
    settled = reconcile_item_writes(rest, seen.summary, seen.canon_sha256, closing)
    for kind, data in settled.records:
        d.journal.append(kind, data)
    if probed is not None and not probed.replayed:
        # A 2xx without Idempotent-Replayed: the probe itself was applied, not a replay.
        return f"{probed.hub_id} (by the probe itself: the hub did not replay the key)"
    return probed.hub_id if probed is not None else settled.landed


def _journal(journal: DiskJournal, verdict: Verdict) -> None:
    """Append the records the core decided on (the decision, and its ruling if ruled)."""
    for kind, data in verdict.records:
        journal.append(kind, data)


def _store(store: ApprovalStore, verdict: Verdict) -> None:
    """Save the item with the status the core decided on."""
    if verdict.stored is not None:
        store.save(verdict.stored)


def _pending(
    store: ApprovalStore, approval_id: str, now: datetime, settings: Settings
) -> ApprovalItem:
    """The item, if the journal lets it be decided now, else an error naming a file rewritten
    from the journal (where the domain is busy, the journal is read and nothing written); the
    decision itself is ruled again under the lock (`_decidable`)."""
    item = store.get(approval_id)
    healed = heal_domain(settings.memory_dir, settings.seal_key, item.domain, now)
    mine = next((h for h in healed or [] if h.item.id == item.id), None)
    if healed is None:
        ledger = journal_ledger(settings.memory_dir, settings.seal_key, item.domain)
        said = ledger.status_of(item.id)
        shown = item if said is None else item.model_copy(update={"status": said.status})
    else:
        shown = item if mine is None else mine.item
    gate = verdicts.gate(approval_id, shown, now)
    if gate.stored is not None and healed is not None:
        store.save(gate.stored)  # past its expiry, and pending in the journal too: expired
    if gate.refusal is not None:
        raise ApprovalError(_with_heal(gate.refusal, mine))
    return item


def _decidable(
    store: ApprovalStore, approval_id: str, now: datetime, ledger: Ledger
) -> ApprovalItem:
    """The item under the domain's lock, with the status the journal gives it, if it may be
    decided now; a file that disagreed is rewritten from the journal and the refusal names it."""
    item, healed = as_journal_says(store, store.get(approval_id), ledger, now)
    gate = verdicts.gate(approval_id, item, now)
    if gate.stored is not None:
        store.save(gate.stored)
    if gate.refusal is not None:
        raise ApprovalError(_with_heal(gate.refusal, healed))
    return item


def _with_heal(refusal: str, healed: Healed | None) -> str:
    return refusal if healed is None else f"{refusal} ({healed.line()})"


@dataclass(frozen=True)
class Deciding:
    """One decision under the domain's lock: the item (still pending), this attempt's journal
    and run id, and what the journal's checkpoint holds (its records, Custodian's writes)."""

    item: ApprovalItem
    journal: DiskJournal
    run_id: str
    writes: tuple[OwnWrite, ...]
    history: list[Record]


@contextmanager
def _deciding(
    settings: Settings, store: ApprovalStore, approval_id: str, now: datetime,
    word: Word | None = None, stuck: frozenset[str] = frozenset(),
) -> Iterator[Deciding]:  # fmt: skip
    """Take the domain's lock while one decision (a person's word) is journaled and stored.

    Under the lock: a word said now waits behind the words kept ahead of it (WordsAhead), and
    the item's status is the journal's (its file is rewritten from the journal if it differs).
    """
    item = store.get(approval_id)  # which domain to lock; its status is ruled under the lock
    run_id = _execute.new_attempt_run_id(item)
    with RunLock(settings.memory_dir, item.domain, run_id=run_id):
        if word is None and _waiting_names(settings, item.domain) - stuck:
            raise WordsAhead(f"words wait in the inbox of {item.domain} ahead of this decision")
        journals = JournalStore(settings.memory_dir, seal_key=settings.seal_key)
        # Opened from its checkpoint and tail (a torn tail is set aside before appending).
        opened = journals.open(item.domain)
        # A kept word journaled already changes nothing (AlreadyJournaled).
        journal_of = word_journal(word, opened.checkpoint)
        # Again under the lock, as the journal says it: decided only once, whatever the file says.
        item = _decidable(store, approval_id, now, opened.checkpoint.ledger)
        writer = journals.writer(item.domain, run_id, utc_now, opened)
        journal = journal_of(writer)
        try:
            yield Deciding(item, journal, run_id, opened.checkpoint.writes, opened.history)
        finally:
            with suppress(OSError):  # derived data: a failure costs the next run a full scan
                journals.commit(writer)
