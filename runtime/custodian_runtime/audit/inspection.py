"""`custodian inspect`: replay a journal read-only, re-check every chain, print the court record.

Inspect never writes: a torn tail or a damaged line is reported as a problem, not repaired.
It reads the journal once, segment by segment, in bounded memory (journal/verify.py).
It exits 0 when the replay is ok and 6 (JournalError's code) when any record breaks a rule, or
when an approval item file says another status than the journal (its `approvals` section), or
when a word kept in the domain's inbox fails its seal or was journaled already (`inbox`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from custodian_runtime.audit._inbox_check import inbox_lines
from custodian_runtime.clock import utc_now
from custodian_runtime.core.fold.api import replay_lines
from custodian_runtime.core.fold.render import UNSEALED, court_record
from custodian_runtime.core.inert import for_terminal
from custodian_runtime.core.journal.seals import SealKey
from custodian_runtime.errors import ApprovalError, JournalError
from custodian_runtime.journal.reader import JournalReader
from custodian_runtime.journal.store import JournalStore
from custodian_runtime.journal.verify import DomainReport, verify_domain
from custodian_runtime.person import disagreement_lines, ledger_disagreements

EXIT_OK = 0
EXIT_NOT_FOUND = 2
EXIT_BROKEN = JournalError.exit_code
DISAGREE = "replay: FAILED (approval items disagree with the journal; see above)"
STRAY = "replay: FAILED (the inbox contains a word that may not be carried out; see above)"


def inspect_command(
    memory_dir: Path,
    run_id: str | None,
    domain: str | None,
    out: TextIO,
    seal_key: SealKey | None = None,
) -> int:
    """Print the court record of a run (or list every run) and return the exit code.

    With a seal key, a record without a valid seal is a problem like any other.
    """
    store = JournalStore(memory_dir)  # no key: inspect reports bad seals, it does not refuse
    if run_id is None and domain is None:
        return _list_all(store, out, seal_key)
    reader = JournalReader(memory_dir)  # where a run is: the runs index, no scan
    if domain is None:
        domain = reader.find_run(str(run_id))
        if domain is None:
            out.write(f"no run {run_id} in {store.journal_dir}; `custodian inspect` lists runs\n")
            return EXIT_NOT_FOUND
    if run_id is None:  # the latest run, as the index names it; the verify renders it
        run_id = reader.latest_run(domain)
    report = verify_domain(store.layout(domain), run_id, seal_key)
    if run_id is None or report.context is None:
        what = f"run {run_id}" if run_id else "runs"
        out.write(f"no {what} in the {domain} journal ({store.path(domain)})\n")
        if report.damage:
            _write(out, replay_lines(report.damage))
            return EXIT_BROKEN
        return EXIT_NOT_FOUND
    problems = report.problem_lines()
    totals = (report.records, report.last)
    lines = court_record(report.context, run_id, problems, totals, report.seal_lines())
    approvals = _approvals(memory_dir, report)
    kept = inbox_lines(memory_dir, report, seal_key)
    verdict = DISAGREE if approvals and lines[-1] == "replay: ok" else lines[-1]
    verdict = STRAY if kept and verdict == "replay: ok" else verdict
    _write(out, [*lines[:-1], *report.open_writes, *approvals, *kept, verdict])
    return EXIT_OK if verdict == "replay: ok" else EXIT_BROKEN


def _approvals(memory_dir: Path, report: DomainReport) -> list[str]:
    """The `approvals` section: each item file that says another status than the journal."""
    try:
        found = ledger_disagreements(memory_dir, report.domain, report.ledger, utc_now())
    except ApprovalError as exc:  # a damaged item file is a problem to report, not a crash
        return [f"approvals cannot be compared with the journal: {exc.message}"]
    return disagreement_lines(found, report.domain)


def _list_all(store: JournalStore, out: TextIO, seal_key: SealKey | None) -> int:
    domains = store.domains()
    if not domains:
        out.write(f"no journals under {store.journal_dir}\n")
        return EXIT_OK
    broken = False
    for domain in domains:
        report = verify_domain(store.layout(domain), seal_key=seal_key)
        problems = report.problem_lines()
        approvals = _approvals(store.memory_dir, report)
        approvals += inbox_lines(store.memory_dir, report, seal_key)
        broken = broken or bool(problems) or bool(approvals)
        verdict = "ok" if not problems else f"{len(problems)} problem(s)"
        _write(out, [f"{domain}: {report.records} record(s), last {report.last}, chain {verdict}"])
        _write(out, [f"  {summary.brief()}" for summary in report.summaries])
        _write(out, [f"  {line}" for line in report.open_writes])
        _write(out, [f"  ! {problem}" for problem in problems])
        _write(out, [f"  {line}" for line in approvals])
    if seal_key is None:
        _write(out, [f"seals     unsealed: {UNSEALED}"])
    _write(out, ["replay: ok" if not broken else "replay: FAILED (see the problems above)"])
    return EXIT_BROKEN if broken else EXIT_OK


def _write(out: TextIO, lines: list[str]) -> None:
    # Journal data is untrusted text: each line stays one line, with controls shown escaped.
    for line in lines:
        out.write(for_terminal(line) + "\n")
