"""`custodian approvals repair`: where an item file and the journal disagree, the journal wins.

The journal is read whole (as `inspect` reads it), each item's status is derived from it
(`core.approvals.ledger`), and each item file that says otherwise is rewritten to the journal's
status: atomically, sealed when a seal key is configured, under the domain's run lock. A
journal that breaks a rule is not trusted to win, and an item whose seal fails is not rewritten
(its other fields may have been edited too): both are reported and exit 6.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TextIO

from custodian_runtime.clock import new_nonce, utc_now
from custodian_runtime.core.approvals.ledger import (
    Disagreement,
    Ledger,
    disagreements,
    repaired,
)
from custodian_runtime.core.inert import for_terminal
from custodian_runtime.errors import JournalError
from custodian_runtime.journal.lock import RunLock
from custodian_runtime.journal.person.queue import ApprovalStore
from custodian_runtime.journal.store import JournalStore
from custodian_runtime.journal.verify import verify_domain
from custodian_runtime.settings import Settings

EXIT_REFUSED = JournalError.exit_code
INDENT = " " * 10


@dataclass(frozen=True)
class RepairRequest:
    """`approvals repair [--domain D]`."""

    domain: str | None = None


def ledger_disagreements(
    memory_dir: Path, domain: str, ledger: Ledger, now: datetime
) -> list[Disagreement]:
    """The domain's item files that say another status than `ledger` (seals not checked)."""
    items = ApprovalStore(memory_dir).all(domain, verify=False)
    return disagreements(ledger, items, now)


def disagreement_lines(found: list[Disagreement], domain: str) -> list[str]:
    """The `approvals` section of `inspect`: nothing when every item agrees with the journal."""
    if not found:
        return []
    head = f"approvals {len(found)} item(s) disagree with the journal: {found[0].line()}"
    rest = [f"{INDENT}{d.line()}" for d in found[1:]]
    fix = f"{INDENT}the journal wins: custodian approvals repair --domain {domain}"
    return [head, *rest, fix]


def repair_command(settings: Settings, request: RepairRequest, out: TextIO) -> int:
    """Rewrite each disagreeing item file to the journal's status; exit 0, or 6 if refused."""
    journals = JournalStore(settings.memory_dir)
    domains = [request.domain] if request.domain else journals.domains()
    refused = sum(_repair_domain(settings, journals, domain, out) for domain in domains)
    return EXIT_REFUSED if refused else 0


def _repair_domain(settings: Settings, journals: JournalStore, domain: str, out: TextIO) -> int:
    """Repair one domain under its run lock; return how many items were refused."""
    store = ApprovalStore(settings.memory_dir, settings.seal_key)
    with RunLock(settings.memory_dir, domain, run_id=f"repair-{new_nonce()}"):
        report = verify_domain(journals.layout(domain), seal_key=settings.seal_key)
        if report.problem_lines():
            out.write(
                f"{domain}: not repaired: its journal breaks a rule, so it cannot win; see "
                f"`custodian inspect --domain {domain}`\n"
            )
            return 1
        now = utc_now()
        items = {i.id: i for i in store.all(domain, verify=False)}
        found = disagreements(report.ledger, items.values(), now)
        refused = 0
        for d in found:
            item = items[d.approval_id]
            problem = store.seal_problem(item)
            if problem is not None:
                refused += 1
                out.write(for_terminal(f"{domain}: {d.approval_id} not repaired: {problem}") + "\n")
                continue
            store.save(repaired(item, d, now))
            out.write(for_terminal(f"{domain}: {d.approval_id}: {_changed(d)}") + "\n")
    if not found:
        out.write(f"{domain}: every approval item agrees with the journal\n")
    return refused


def _changed(d: Disagreement) -> str:
    return f"{d.file_says} -> {d.journal_says} (the journal at {d.ref})"
