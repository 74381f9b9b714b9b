"""One model per kind of journal record: the only place that reads or builds a record's data.

`decode(record)` reads a record's data as its kind's model; `encode(entry)` is the data a writer
journals. Fields that older journals lack have defaults, so every journal still reads; data that
does not fit its kind is an error naming the record. Nothing else reads `record.data` by key
(tests/architecture/test_typed_records.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from custodian_runtime.core.journal.records import Record
from custodian_runtime.errors import JournalError

# An item's index: its place in the plan, or a label (`reconcile-0`) for an escalation.
Index = int | str | None
Json = dict[str, Any]
ItemKey = tuple[str, Index]  # (run that authorized the write, plan item index)


# What a person does about a record that cannot be read: said once, by every reader of one.
DAMAGE_ADVICE = (
    "Nothing was done. Keep a copy of the memory directory, then restore the domain's journal "
    "from a backup taken before this record (see 'Backup and restore' in docs/operations.md); "
    "the record named here is the first that does not decode"
)


class RecordDataError(JournalError, ValueError):
    """A record's data does not fit the model of its kind: journal damage (exit 6)."""


class Entry(BaseModel):
    """The data of one journal record; `KIND` names the kind it is journaled as."""

    # Lenient on read: a field an older writer added and a newer one dropped is ignored.
    model_config = ConfigDict(frozen=True, extra="ignore")
    KIND: ClassVar[str]

    def item(self, run_id: str) -> ItemKey | None:
        """The write (authorizing run, index) this record of run `run_id` speaks of, if any."""
        return None


class RunStarted(Entry):
    """`run_started`: what the run was configured with."""

    KIND = "run_started"
    settings_digest: str | None = None
    constitution_digest: str | None = None
    model_spec: str | None = None
    hub_url: str | None = None
    pid: int | None = None
    host: str | None = None
    dry_run: bool | None = None
    # Since 0.4.0: the release and the git revision ("unknown" when not built from a checkout)
    # that wrote the run; absent from older journals.
    version: str | None = None
    revision: str | None = None


class Observed(Entry):
    """`observed`: the domain as read from the hub (the summary lives in its snapshot)."""

    KIND = "observed"
    state_digest: str | None = None
    snapshot: str | None = None
    generated_at: str | None = None
    overview: Json | None = None
    summary: Json | None = None
    after_act: bool | None = None
    # Since contract v1.2 (the revision skip): the domain's revision, one digest per workstream,
    # the digest of the run's local inputs, and whether the hub answered 304.
    revision: int | None = None
    workstream_digests: dict[str, str] | None = None
    inputs_digest: str | None = None
    not_modified: bool | None = None


class CanonCited(BaseModel):
    """One piece of the canon a run's prompt showed: a file shown whole (the constitution, the
    domain's guidance, a pinned file) or one retrieved section; `sha256` names the text shown."""

    model_config = ConfigDict(frozen=True, extra="ignore")
    file: str
    heading: str
    sha256: str
    whole: bool = False


class PromptRecord(Entry):
    """`prompt`: the rendered prompt's size and where it is stored."""

    KIND = "prompt"
    chars: Json | None = None
    estimated_tokens: int | None = None
    stored: str | None = None
    # What of the canon the prompt showed, and how many library sections the domain
    # could have been shown (None: the canon had none beyond the constitution and guidance).
    canon: tuple[CanonCited, ...] | None = None
    canon_sections: int | None = None


class ModelResponse(Entry):
    """`model_response`: the model's raw answer."""

    KIND = "model_response"
    text: str | None = None
    provider: str | None = None
    model: str | None = None
    usage: Json | None = None
    request_id: str | None = None
    # Asked for in the plan's JSON schema: a bare JSON object is the plan (None: not asked).
    structured: bool | None = None


# What is kept of an answer that could not be used (cut off, refused), in characters.
KEPT_ANSWER_CHARS = 32_000


class ModelFailed(Entry):
    """`model_failed`: the model call failed; `answer` is what came back of an answer that
    cannot be used (cut off at the token limit, refused), bounded by `kept_answer`."""

    KIND = "model_failed"
    error: str | None = None
    provider: str | None = None
    status: int | None = None
    code: str | None = None
    answer: str | None = None
    answer_chars: int | None = None  # the whole answer's length, when `answer` was cut


def kept_answer(text: str | None) -> tuple[str | None, int | None]:
    """What the journal keeps of an unusable answer: its first KEPT_ANSWER_CHARS characters,
    and its whole length when it was longer."""
    if not text:
        return None, None
    if len(text) <= KEPT_ANSWER_CHARS:
        return text, None
    return text[:KEPT_ANSWER_CHARS], len(text)


class PlanRecord(Entry):
    """`plan`: the plan's status and what the authority ruled from."""

    KIND = "plan"
    status: str | None = None
    reason: str | None = None
    observations: list[str] | None = None
    items: int | None = None
    policy: Json | None = None
    history: Json | None = None
    evidence: Json | None = None
    recent_writes: list[Json] | None = None
    ruled_at: str | None = None
    # What this run could not perform, and why (a read-only canon), for replay.
    unavailable: dict[str, str] | None = None
    # A person's modes and grants the run ruled with, and the hub it was bound to (replay).
    standing: Json | None = None


class RulingRecord(Entry):
    """`ruling`: one item's outcome and why."""

    KIND = "ruling"
    index: Index = None
    operation: str | None = None
    target: str | None = None
    params: Json | None = None
    fingerprint: str | None = None
    outcome: str | None = None
    reason: str | None = None
    approval_id: str | None = None
    precondition: Json | None = None
    # Set only for a write held in deference to a person (`held_deference`), which
    # `policy report` counts; absent from every other ruling, as from older journals.
    code: str | None = None

    def item(self, run_id: str) -> ItemKey | None:
        """The item this run ruled on."""
        return (run_id, self.index)


class Authorized(Entry):
    """`authorized`: a write the authority allowed, with its key and the hub it is bound to."""

    KIND = "authorized"
    index: Index = None
    operation: str | None = None
    params: Json | None = None
    fingerprint: str | None = None
    idempotency_key: str | None = None
    nonce: str | None = None
    by: str | None = None
    hub: str | None = None
    hub_at: str | None = None
    canon: str | None = None
    planned_on: Json | None = None

    def item(self, run_id: str) -> ItemKey | None:
        """The item this run authorized."""
        return (run_id, self.index)


class WriteStep(Entry):
    """The fields every record of a write's send or settling carries."""

    index: Index = None
    # Set when a later run (a reconcile, an approval's settle) writes for an earlier run's write.
    reconciles: str | None = None

    def item(self, run_id: str) -> ItemKey | None:
        """The item of this run, or of the earlier run it `reconciles`."""
        return (self.reconciles or run_id, self.index)

    def closes_unsent(self) -> bool:
        """Whether this step closes the write without sending it (found on the hub, or closed)."""
        return False


class Dispatched(WriteStep):
    """`dispatched`: the write is about to leave."""

    KIND = "dispatched"
    idempotency_key: str | None = None


class Receipt(WriteStep):
    """`receipt`: the hub answered (or a later observation found the write landed)."""

    KIND = "receipt"
    status_code: int | None = None
    hub_id: str | None = None
    replayed: bool | None = None
    response_sha256: str | None = None
    attempts: int | None = None
    task_after: Json | None = None
    path: str | None = None
    found_on_hub: bool | None = None
    # A write closed earlier that a later observation shows landed anyway.
    late: str | None = None

    def closes_unsent(self) -> bool:
        """Found on the hub by a later observation."""
        return bool(self.found_on_hub)


class Failed(WriteStep):
    """`failed`: the hub refused, or the write was closed without being sent."""

    KIND = "failed"
    error: str | None = None
    status: int | None = None
    code: str | None = None
    closed: str | None = None

    def closes_unsent(self) -> bool:
        """Closed without being sent."""
        return bool(self.closed)


class Stale(WriteStep):
    """`stale`: the target moved since the write was planned."""

    KIND = "stale"
    error: str | None = None
    observed: Json | None = None
    current: Json | None = None
    closed: str | None = None

    def closes_unsent(self) -> bool:
        """Closed without being sent."""
        return bool(self.closed)


class Unknown(WriteStep):
    """`unknown`: no answer came; open until settled."""

    KIND = "unknown"
    error: str | None = None


class LandingProbe(WriteStep):
    """`landing_probe`: a write's own key re-sent with `If-Match` of the version it carried, to
    ask the hub whether that write landed; with that version gone it can apply nothing."""

    KIND = "landing_probe"
    idempotency_key: str | None = None
    if_match: int | None = None


class SameValue(WriteStep):
    """`same_value`: the hub shows what a closed write would have set, and nothing proves that
    this write made it (`by_other`: the hub proved it never landed, so someone else set it)."""

    KIND = "same_value"
    hub_id: str | None = None
    closed: str | None = None
    by_other: bool | None = None
    reason: str | None = None


class Queued(Entry):
    """`queued`: an item waits for a person as an approval item."""

    KIND = "queued"
    index: Index = None
    approval_id: str | None = None
    fingerprint: str | None = None

    def item(self, run_id: str) -> ItemKey | None:
        """The item this run queued."""
        return (run_id, self.index)


class Reconciled(Entry):
    """`reconciled`: how a later run settled an open write of an earlier run."""

    KIND = "reconciled"
    run_id_of_the_interrupted_run: str | None = None
    index: Index = None
    idempotency_key: str | None = None
    action: str | None = None
    reason: str | None = None

    def item(self, run_id: str) -> ItemKey | None:
        """The interrupted run's item."""
        return (str(self.run_id_of_the_interrupted_run), self.index)


class NoteWritten(Entry):
    """`note_written`: the session note the run wrote."""

    KIND = "note_written"
    path: str | None = None
    sha256: str | None = None
    status: str | None = None
    prose: bool = True
    problem: str | None = None


class Finished(Entry):
    """`finished`: how the run ended (`closed_by`: written by a later run for a killed one)."""

    KIND = "finished"
    status: str | None = None
    exit_code: int | None = None
    counts: dict[str, int] | None = None
    model: str | None = None
    usage: Json | None = None
    closed_by: str | None = None


class PersonWord(Entry):
    """A record of a person's word: its id, and its place in the domain's inbox if it waited.

    Journals written before words had ids lack both; they still decode.
    """

    word: str | None = None
    arrival: int | None = None  # the inbox's sequence number (core/journal/words.py), if it waited


class ApprovalDecided(PersonWord):
    """`approval_decided`: a person's decision on an approval item."""

    KIND = "approval_decided"
    approval_id: str | None = None
    decision: str | None = None
    by: str | None = None
    # Where the name came from (core/approvals/decider.py); older records lack it.
    by_source: str | None = None
    reason: str | None = None


class SettledByHand(Entry):
    """`settled_by_hand`: a person closed an open write."""

    KIND = "settled_by_hand"
    run_id_of_the_open_write: str | None = None
    index: Index = None
    ref: str | None = None
    operation: str | None = None
    idempotency_key: str | None = None
    by: str | None = None
    reason: str | None = None
    outcome: str | None = None

    def item(self, run_id: str) -> ItemKey | None:
        """The open write the person closed."""
        return (str(self.run_id_of_the_open_write), self.index)


class PolicySet(PersonWord):
    """`policy_set`: a person set one operation's mode (core/standing/modes.py)."""

    KIND = "policy_set"
    operation: str | None = None
    mode: str | None = None
    by: str | None = None
    reason: str | None = None


class GrantIssued(PersonWord):
    """`grant_issued`: a person issued a grant (core/standing/grants.py), whole."""

    KIND = "grant_issued"
    grant: Json | None = None


class GrantRevoked(PersonWord):
    """`grant_revoked`: a person revoked a grant."""

    KIND = "grant_revoked"
    grant_id: str | None = None
    by: str | None = None
    reason: str | None = None


class RefusalSaid(PersonWord):
    """`refusal_said`: a person said a standing no of one class, or lifted one
    (core/standing/said_no.py): the class, who, why, and until when."""

    KIND = "refusal_said"
    operation: str | None = None
    status: str | None = None
    cites: str | None = None
    workstream: str | None = None
    owner: str | None = None
    by: str | None = None
    reason: str | None = None
    expires_at: str | None = None
    lifted: bool = False
    fact: str | None = None  # `KEY=VALUE`: said of a fact of the proposal, in every workstream


class GrantUsed(Entry):
    """`grant_used`: a write was authorized under a grant; the grant's uses are these records."""

    KIND = "grant_used"
    grant_id: str | None = None
    index: Index = None
    operation: str | None = None
    fingerprint: str | None = None


class GrantSuspended(Entry):
    """`grant_suspended`: a person set back a write made under a grant, so the grant covers
    nothing more until a person issues one again (core/standing/narrowed.py)."""

    KIND = "grant_suspended"
    grant_id: str | None = None
    run: str | None = None  # the reversed write: its run and plan item
    index: Index = None
    task_id: str | None = None
    reason: str | None = None
    # Its task's workstream and that workstream's owner, as observed: what a grant narrowed
    # past the reversal leaves out (core/standing/suggestions.py); absent from older journals.
    workstream_id: str | None = None
    owner: str | None = None


class ClassHeld(Entry):
    """`class_held`: a person set back a write Custodian made on its own, so that class of
    writes (the operation with those params) needs a person until `until`."""

    KIND = "class_held"
    operation: str | None = None
    params: Json | None = None
    until: str | None = None
    run: str | None = None  # the reversed write: its run and plan item
    index: Index = None
    reason: str | None = None


class Shadowed(Entry):
    """`shadowed`: an item shadow mode kept from being written or queued, and what it would do."""

    KIND = "shadowed"
    index: Index = None
    operation: str | None = None
    params: Json | None = None
    fingerprint: str | None = None
    would: str | None = None  # `execute` or `queue`
    # The target's state as observed (core/authority/precondition.py), and the hub it was on.
    observed: Json | None = None
    hub: str | None = None


class ShadowMatched(Entry):
    """`shadow_matched`: a person made on the hub the change a `shadowed` item would have made."""

    KIND = "shadow_matched"
    shadow: str | None = None  # the `shadowed` record's ref, `<domain>:<seq>`
    run: str | None = None  # the run that shadowed it
    index: Index = None
    operation: str | None = None
    hub_id: str | None = None


class NoticeSent(Entry):
    """`notice`: a run is about to tell people that items wait (core/approvals/notice.py): the
    waiting set's digest and count. Journaled before the send, so a set is never told twice."""

    KIND = "notice"
    digest: str | None = None
    waiting: int | None = None
    to: str | None = None  # the webhook's address without its secret part (core/redact.py)


class NoticeReceipt(Entry):
    """`notice_receipt`: what the webhook answered: `sent` (2xx), `failed` (refused or not
    reached: the next run tries again) or `unknown` (no answer: not sent again)."""

    KIND = "notice_receipt"
    digest: str | None = None
    outcome: str | None = None
    status: int | None = None
    error: str | None = None


MODELS: dict[str, type[Entry]] = {
    m.KIND: m
    for m in (
        RunStarted, Observed, PromptRecord, ModelResponse, ModelFailed, PlanRecord, RulingRecord,
        Authorized, Dispatched, Receipt, Failed, Stale, Unknown, Queued, Reconciled,
        NoteWritten, Finished, ApprovalDecided, SettledByHand, PolicySet, GrantIssued,
        GrantRevoked, GrantUsed, Shadowed, ShadowMatched, LandingProbe, SameValue,
        GrantSuspended, ClassHeld, NoticeSent, NoticeReceipt, RefusalSaid,
    )
}  # fmt: skip

# The kinds that journal a person's word (core/journal/words.py).
WORD_KINDS = frozenset(m.KIND for m in MODELS.values() if issubclass(m, PersonWord))

E = TypeVar("E", bound=Entry)


def decode(record: Record) -> Entry:
    """The record's data as the model of its kind; RecordDataError names the record."""
    model = MODELS.get(record.kind)
    if model is None:
        raise RecordDataError(
            f"journal record {record.ref} has the unknown kind {record.kind!r}; "
            f"known kinds: {sorted(MODELS)}. Check the journal with `custodian inspect`"
        )
    try:
        return model.model_validate(record.data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise RecordDataError(
            f"journal record {record.ref} ({record.kind}) does not fit its kind: {where}: "
            f"{first['msg']}. {DAMAGE_ADVICE}",
            domain=record.domain,
            seq=record.seq,
        ) from exc


def read_as(record: Record, model: type[E]) -> E:
    """The record's data as `model`, which must be its kind's model."""
    entry = decode(record)
    if not isinstance(entry, model):
        raise RecordDataError(f"journal record {record.ref} is {record.kind!r}, not {model.KIND!r}")
    return entry


def of_kind(records: Iterable[Record], model: type[E]) -> Iterator[tuple[Record, E]]:
    """Each record of `model`'s kind, with its data read as `model`."""
    for record in records:
        if record.kind == model.KIND:
            yield record, read_as(record, model)


def absorbed_word(record: Record) -> str | None:
    """The id of the person's word a record journaled from the inbox (None for any other)."""
    if record.kind not in WORD_KINDS:
        return None
    entry = decode(record)
    assert isinstance(entry, PersonWord)
    return entry.word if entry.arrival is not None else None


def absorbed_arrival(record: Record) -> int | None:
    """The inbox arrival number of the person's word a record journaled (None for any other)."""
    if record.kind not in WORD_KINDS:
        return None
    entry = decode(record)
    assert isinstance(entry, PersonWord)
    return entry.arrival


def item_of(record: Record) -> ItemKey | None:
    """The write (authorizing run, index) a record speaks of; None for a run's other records."""
    return decode(record).item(record.run_id)


def earlier_run(record: Record) -> str | None:
    """The earlier run whose write this record settles (a reconcile's), if any."""
    entry = decode(record)
    if isinstance(entry, WriteStep):
        return entry.reconciles
    if isinstance(entry, Reconciled):
        return entry.run_id_of_the_interrupted_run
    return None


def content_named(record: Record) -> str | None:
    """The content digest an `observed` (its snapshot) or a `prompt` (its text) names."""
    entry = decode(record)
    if isinstance(entry, Observed):
        return entry.snapshot
    if isinstance(entry, PromptRecord):
        return entry.stored
    return None


def with_entry(record: Record, entry: Entry) -> Record:
    """A view of `record` whose data also holds what `entry` set (replay inlines a summary).

    The view is not re-hashed: it is for reading, never for the journal.
    """
    return record.model_copy(update={"data": {**record.data, **encode(entry)[1]}})


def encode(entry: Entry) -> tuple[str, dict[str, Any]]:
    """The kind and data a writer journals for `entry`: the fields it set, as JSON."""
    return entry.KIND, entry.model_dump(mode="json", exclude_unset=True)
