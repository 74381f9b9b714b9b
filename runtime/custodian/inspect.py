"""`custodian inspect`: replay a journal read-only, re-check every chain, print the court record.

Inspect never writes: a torn tail or a damaged line is reported as a problem, not repaired.
It exits 0 when the replay is ok and 6 (JournalError's code) when any record breaks a rule.
"""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from custodian.core.inert import for_terminal
from custodian.core.journal import latest_run_id, render_run, replay_lines, replay_problems
from custodian.core.journal import run_summaries as summarize
from custodian.core.seals import SealKey
from custodian.errors import JournalError
from custodian.memory.journal_store import JournalStore, ReadResult

EXIT_OK = 0
EXIT_NOT_FOUND = 2
EXIT_BROKEN = JournalError.exit_code


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
    if domain is None:
        domain = store.find_run(str(run_id))
        if domain is None:
            out.write(f"no run {run_id} in {store.journal_dir}; `custodian inspect` lists runs\n")
            return EXIT_NOT_FOUND
    result = store.scan(domain)
    run_id = run_id or latest_run_id(result.records)
    if run_id is None or not any(r.run_id == run_id for r in result.records):
        what = f"run {run_id}" if run_id else "runs"
        out.write(f"no {what} in the {domain} journal ({store.path(domain)})\n")
        if result.damage or result.torn_tail:
            _write(out, replay_lines(_store_problems(domain, result)))
            return EXIT_BROKEN
        return EXIT_NOT_FOUND
    lines = render_run(result.records, run_id, _store_problems(domain, result), seal_key)
    _write(out, lines)
    return EXIT_OK if lines[-1] == "replay: ok" else EXIT_BROKEN


def _store_problems(domain: str, result: ReadResult) -> list[str]:
    found = [f"{domain}.jsonl {damage}" for damage in result.damage]
    if result.torn_tail:
        found.append(f"{domain}.jsonl {result.torn_tail}")
    return found


def _list_all(store: JournalStore, out: TextIO, seal_key: SealKey | None) -> int:
    domains = store.domains()
    if not domains:
        out.write(f"no journals under {store.journal_dir}\n")
        return EXIT_OK
    broken = False
    for domain in domains:
        result = store.scan(domain)
        problems = replay_problems(result.records, _store_problems(domain, result), seal_key)
        broken = broken or bool(problems)
        last = result.records[-1].ref if result.records else "-"
        verdict = "ok" if not problems else f"{len(problems)} problem(s)"
        _write(out, [f"{domain}: {len(result.records)} record(s), last {last}, chain {verdict}"])
        _write(out, [f"  {summary.brief()}" for summary in summarize(result.records)])
        _write(out, [f"  ! {problem}" for problem in problems])
    _write(out, ["replay: ok" if not broken else "replay: FAILED (see the problems above)"])
    return EXIT_BROKEN if broken else EXIT_OK


def _write(out: TextIO, lines: list[str]) -> None:
    # Journal data is untrusted text: each line stays one line, with controls shown escaped.
    for line in lines:
        out.write(for_terminal(line) + "\n")
