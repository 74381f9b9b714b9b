"""`custodian journal reseal`: move what the previous seal key sealed to the current key.

Under each domain's run lock, everything sealed is checked first: every journal record (its
chain and its seal), the checkpoint, the anchor, the domain's approval items and the words kept in
its inbox (an earlier release's side stores are carried into the inbox first). If anything
verifies under neither key, nothing is written (SealError, exit 6). Then each file that holds a
seal of the previous key is rewritten atomically with only its seals changed. A record's seal is
an HMAC of its hash and sits outside it, so the hash chain is untouched; a seal is 64 hex
characters under either key, so every byte offset the checkpoint keeps stays true. Last, the
same check runs with the current key alone.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TextIO

from pydantic import ValidationError

from custodian_runtime.clock import utc_now
from custodian_runtime.core.approvals.items import ApprovalItem
from custodian_runtime.core.approvals.seals import item_sealer
from custodian_runtime.core.digest import canonical_json, strict_loads
from custodian_runtime.core.fold.checkpoint import link_problems
from custodian_runtime.core.inert import for_terminal
from custodian_runtime.core.journal.records import Record
from custodian_runtime.core.journal.seals import Sealer, SealKey, record_sealer, seal_record
from custodian_runtime.errors import ConfigError, SealError
from custodian_runtime.files.atomic import atomic_write_bytes, replace_lines
from custodian_runtime.journal._checkpoint import (
    CheckpointFile,
    file_sealer,
    load_anchor,
    save_checkpoint,
    sealed,
    start_of,
)
from custodian_runtime.journal._segments import Layout, lines_from
from custodian_runtime.journal.lock import RunLock
from custodian_runtime.journal.person.inbox import Inbox
from custodian_runtime.journal.person.queue import ApprovalStore
from custodian_runtime.journal.store import JournalStore, parse_line
from custodian_runtime.settings.seal_keys import SEAL_KEY, SEAL_KEY_PREVIOUS


@dataclass
class Survey:
    """What one domain holds, by the key that sealed it, and what verifies under neither."""

    domain: str
    records: int = 0
    old_records: int = 0
    old_segments: list[Path] = field(default_factory=list)
    checkpoint: Sealer | None = None
    anchor: Sealer | None = None
    items: int = 0
    old_items: list[ApprovalItem] = field(default_factory=list)
    # A person's words kept while the domain was busy (memory/inbox/).
    waiting: int = 0
    old_waiting: int = 0
    problems: list[str] = field(default_factory=list)

    def text(self) -> str:
        """One line for a person: what was moved to the current key."""
        parts = [
            f"{self.old_records} of {self.records} journal record(s) resealed "
            f"(in {len(self.old_segments)} file(s))",
            f"{len(self.old_items)} of {self.items} approval item(s) resealed",
        ]
        if self.waiting:
            parts.append(f"{self.old_waiting} of {self.waiting} kept word(s) in the inbox resealed")
        if self.checkpoint is not None:
            parts.append("checkpoint resealed")
        if self.anchor is not None:
            parts.append(f"anchor {'resealed' if self.anchor == 'previous' else 'already current'}")
        return f"{self.domain}: " + "; ".join(parts)


def reseal(
    memory_dir: Path, key: SealKey, domain: str | None, clock: Callable[[], datetime]
) -> list[Survey]:
    """Reseal `domain` (every domain, when None) with the current key; refuse on any bad seal."""
    journals = JournalStore(memory_dir, seal_key=key)
    approvals = ApprovalStore(memory_dir, key)
    inbox = Inbox(memory_dir, key)
    said = inbox.upgrade()  # an earlier release's side stores: carried (and sealed) first
    if said is not None:
        sys.stderr.write(said + "\n")
    domains = [domain] if domain else _domains(journals, approvals, inbox)
    run_id = f"reseal-{clock().strftime('%Y%m%dT%H%M%SZ')}"
    with ExitStack() as locks:
        for name in domains:  # sorted: two reseals never wait on each other crosswise
            locks.enter_context(RunLock(memory_dir, name, run_id=run_id, clock=clock))
        surveys = [_survey(journals, approvals, key, name) for name in domains]
        _refuse(surveys, "nothing was resealed")
        for survey in surveys:
            _write(journals.layout(survey.domain), approvals, key, survey)
            if survey.old_waiting:
                inbox.reseal(survey.domain)
        after = [_survey(journals, approvals, key.current_only(), name) for name in domains]
        _refuse(after, "the files were resealed, but do not all verify under the current key")
    return surveys


def _domains(journals: JournalStore, approvals: ApprovalStore, inbox: Inbox) -> list[str]:
    items = {item.domain for _, item in approvals.entries()}
    return sorted(set(journals.domains()) | items | set(inbox.domains()))


def _survey(journals: JournalStore, approvals: ApprovalStore, key: SealKey, domain: str) -> Survey:
    """Check everything the domain holds under `key`; change nothing but a torn tail."""
    survey = Survey(domain)
    layout = journals.layout(domain)
    if layout.exists():
        with contextlib.suppress(SealError):  # the scan below names every bad seal
            journals.open(domain)  # sets a torn tail aside; damage stops here (exit 6)
        _survey_records(layout, key, survey)
    _survey_checkpoint(layout, key, survey)
    if layout.anchor.exists():
        survey.anchor = _anchor_sealer(layout, key, survey)
    for path, item in approvals.entries():
        if item.domain == domain:
            _survey_item(path, item, key, survey)
    _survey_waiting(Inbox(journals.memory_dir, key), domain, survey)
    return survey


def _survey_waiting(inbox: Inbox, domain: str, survey: Survey) -> None:
    try:
        found = inbox.sealers(domain)
    except SealError as exc:
        survey.problems.append(exc.message)
        return
    survey.waiting += len(found)
    survey.old_waiting += sum(1 for _, by in found if by == "previous")
    survey.problems += [f"inbox/{domain}/{path.name}" for path, by in found if by is None]


def _survey_records(layout: Layout, key: SealKey, survey: Survey) -> None:
    head = start_of(layout, key).head
    for segment in layout.segments():
        old = 0
        for record in _records(segment.path, survey):
            survey.problems.extend(str(p) for p in link_problems(head, [record], layout.domain))
            head = head.model_copy(update={"seq": record.seq, "hash": record.hash})
            sealer = record_sealer(key, record)
            if sealer is None:
                survey.problems.append(f"{segment.path.name}: record {record.seq} ({record.kind})")
            old += sealer == "previous"
        survey.old_segments += [segment.path] if old else []
        survey.old_records += old


def _records(path: Path, survey: Survey) -> Iterator[Record]:
    for number, (_, raw) in enumerate(lines_from(path), start=1):
        parsed = parse_line(raw.rstrip(b"\n"))
        if isinstance(parsed, str):
            survey.problems.append(f"{path.name} line {number}: {parsed}")
            continue
        survey.records += 1
        yield parsed


def _survey_checkpoint(layout: Layout, key: SealKey, survey: Survey) -> None:
    saved = _checkpoint(layout)
    if saved is None:
        return  # none, or unreadable: derived data the next run rebuilds
    survey.checkpoint = file_sealer(key, saved)
    unsealed = [r for r in saved.checkpoint.records if record_sealer(key, r) is None]
    if survey.checkpoint is None or unsealed:
        survey.problems.append(
            f"{layout.checkpoint.name} (derived from the journal: remove it and the next run "
            "rebuilds it)"
        )


def _checkpoint(layout: Layout) -> CheckpointFile | None:
    try:
        return CheckpointFile.model_validate(strict_loads(layout.checkpoint.read_bytes()))
    except (OSError, ValueError, ValidationError):
        return None


def _anchor_sealer(layout: Layout, key: SealKey, survey: Survey) -> Sealer | None:
    anchor = load_anchor(layout)  # read without a key: the seal is judged here
    sealer = None if anchor is None else file_sealer(key, anchor)
    if sealer is None:
        survey.problems.append(layout.anchor.name)
    return sealer


def _survey_item(path: Path, item: ApprovalItem, key: SealKey, survey: Survey) -> None:
    survey.items += 1
    sealer = item_sealer(key, item)
    if sealer is None or path.stem != item.id:
        survey.problems.append(f"approvals/{path.name}")
    elif sealer == "previous":
        survey.old_items.append(item)


def _refuse(surveys: list[Survey], what: str) -> None:
    problems = [f"{s.domain}: {p}" for s in surveys for p in s.problems]
    if not problems:
        return
    # Each file it could not reseal is named (the first ten), so none is left unseen.
    more = f" (and {len(problems) - 10} more)" if len(problems) > 10 else ""
    raise SealError(
        f"not every record and item verifies under CUSTODIAN_SEAL_KEY or "
        f"CUSTODIAN_SEAL_KEY_PREVIOUS: {', '.join(problems[:10])}{more}; {what}. Set "
        "CUSTODIAN_SEAL_KEY_PREVIOUS to the key that sealed them; if none did, someone without "
        "the keys wrote to the memory volume: keep a copy and `custodian inspect` it",
        domain=surveys[0].domain,
    )


def _write(layout: Layout, approvals: ApprovalStore, key: SealKey, survey: Survey) -> None:
    """Rewrite each file that holds a seal of the previous key, atomically, seals only."""
    current = key.current_only()
    for path in survey.old_segments:
        replace_lines(path, lambda raw: _resealed_line(raw, key, current))
    saved = _checkpoint(layout)
    if survey.checkpoint is not None and saved is not None:
        records = tuple(seal_record(current, r) for r in saved.checkpoint.records)
        checkpoint = saved.checkpoint.model_copy(update={"records": records})
        resealed = saved.model_copy(update={"checkpoint": checkpoint})
        save_checkpoint(layout, sealed(current, resealed))
    anchor = load_anchor(layout, key) if survey.anchor == "previous" else None
    if anchor is not None:
        data = canonical_json(sealed(current, anchor).model_dump()).encode("utf-8")
        atomic_write_bytes(layout.anchor, data)
    for item in survey.old_items:
        approvals.save(item)  # a save seals with the current key


def _resealed_line(raw: bytes, key: SealKey, current: SealKey) -> bytes:
    record = parse_line(raw.rstrip(b"\n"))
    assert isinstance(record, Record)  # the survey, under the same lock, parsed every line
    if record_sealer(key, record) != "previous":
        return raw
    # Only the seal's 64 hex characters change: every other byte, and so every offset, stays.
    old, new = (
        f'"seal":"{seal}"'.encode() for seal in (record.seal, seal_record(current, record).seal)
    )
    if raw.count(old) == 1:
        return raw.replace(old, new)
    return (seal_record(current, record).line() + "\n").encode("utf-8")


def reseal_command(memory_dir: Path, key: SealKey | None, domain: str | None, out: TextIO) -> int:
    """`custodian journal reseal`: reseal, then say per domain what moved to the current key."""
    if key is None:
        raise ConfigError(
            f"journal reseal needs {SEAL_KEY} (the new key) and, to move what the old key sealed, "
            f"{SEAL_KEY_PREVIOUS} (the old key)",
            setting=SEAL_KEY,
        )
    surveys = reseal(memory_dir, key, domain, utc_now)
    for survey in surveys:
        out.write(for_terminal(survey.text()) + "\n")
    if not surveys:
        out.write(f"nothing to reseal under {memory_dir}\n")
    out.write(
        f"every record and item verifies under {SEAL_KEY} alone: {SEAL_KEY_PREVIOUS} can be "
        "removed once every domain was resealed\n"
    )
    return 0
