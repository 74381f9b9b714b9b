"""The person of a simulated month: what they run, and each item they judge, counted.

Every arm's person decides every pending item each morning with `custodian approvals
approve|reject`: approve unless harmful. The person of the arm with levers also, once a week,
reads `custodian policy report` (the text a person reads, not `--json`) and runs each command
it suggests exactly as printed: a line that starts with `custodian` (one printed after a label,
`suggested: custodian ...`, is run too, and is a finding). Only `--by` and `--reason` may be
filled in, where the line holds a placeholder for them (`--by NAME --reason TEXT`) or says to
fill them; a line that needs any other edit, or that fails as printed, is a finding, counted
and shown.

Each item judged counts one, however many one command decides: an approve, a reject, a grant
issued or revoked, a mode set (each operation of `--operation all`), a restore.
"""

from __future__ import annotations

import io
import json
import re
import shlex
from collections import Counter
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass, field
from typing import Any

from month_kit import Hands, Judge, Word
from month_why import Decided, decided

from custodian_runtime.cli import main as custodian
from custodian_runtime.core.standing.modes import known_operations

PERSON = "ana"
REASON = "policy report, as suggested"
PLACEHOLDERS = {"NAME": PERSON, "TEXT": REASON}
# Words a printed line may use to ask a person to fill --by and --reason.
FILL = re.compile(r"\s*[#(].*\bfill\b.*$", re.IGNORECASE)
# What a person reads a command's verb as, to count the items it judges.
KINDS = {
    ("grants", "issue"): "grant issued",
    ("grants", "revoke"): "grant revoked",
    ("policy", "set"): "mode set",
    ("approvals", "approve"): "approve",
    ("approvals", "reject"): "reject",
}


@dataclass
class Ledger:
    """What one arm's person judged and ran."""

    judged: Counter[str] = field(default_factory=Counter)
    # Items judged that were queued in deference (asked once: a change on the hub before
    # Custodian wrote the task, or older evidence); a person's own decision is held, not asked.
    deferred: int = 0
    # Items judged before the person first read the report: no lever that waits for a person's
    # word can change them (None: the report was never read).
    before_report: int | None = None
    first_report_day: int = 0
    findings: list[str] = field(default_factory=list)
    ran: list[str] = field(default_factory=list)
    # By a world's people (World.judge): items each decided, and the rejections by reason.
    people: Counter[str] = field(default_factory=Counter)
    reasons: Counter[str] = field(default_factory=Counter)
    # Each item decided, with the facts it was decided on (bench/month_why.py, `--why`).
    decisions: list[Decided] = field(default_factory=list)

    @property
    def total(self) -> int:
        """Every item judged."""
        return sum(self.judged.values())


def cli(*argv: str) -> tuple[int, str, str]:
    """One `custodian` command in this process: its exit code, stdout and stderr."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = custodian(list(argv))
    return code, out.getvalue(), err.getvalue()


def suggested_lines(text: str) -> list[tuple[str, bool]]:
    """The commands a report prints, as a person copies them; True when one is not on a line
    of its own (after a label, `suggested: custodian ...`): a finding, though it is run."""
    found = []
    for line in text.splitlines():
        words = line.strip()
        if words.startswith("custodian "):
            found.append((words, False))
        elif ": custodian " in words:
            found.append((words[words.index(": custodian ") + 2 :], True))
    return found


def as_run(line: str) -> tuple[list[str] | None, str | None]:
    """The argv a person runs for a printed line, or None and why it cannot run as printed."""
    fill = FILL.search(line)
    text = line[: fill.start()] if fill else line
    try:
        argv = shlex.split(text)[1:]
    except ValueError as exc:
        return None, f"does not parse: {exc}"
    filled = []
    for n, word in enumerate(argv):
        before = argv[n - 1] if n else ""
        if word in PLACEHOLDERS and before in ("--by", "--reason"):
            filled.append(PLACEHOLDERS[word])
        elif re.search(r"<[^>]*>|\.\.\.|…", word):
            return None, f"holds a placeholder {word!r}"
        else:
            filled.append(word)
    if fill:
        filled += [a for k, v in (("--by", PERSON), ("--reason", REASON)) if k not in filled
                   for a in (k, v)]  # fmt: skip
    return filled, None


def items_of(argv: list[str]) -> tuple[str, int]:
    """What kind of item a command judges, and how many."""
    verb = (argv[0], argv[1]) if len(argv) > 1 else (argv[0], "")
    kind = KINDS.get(verb) or ("restore" if "restore" in argv else f"other: {' '.join(verb)}")
    if verb == ("policy", "set") and _after(argv, "--operation") == "all":
        return kind, len(known_operations())
    if verb in (("grants", "revoke"), ("approvals", "approve"), ("approvals", "reject")):
        ids = [a for a in argv[2:] if not a.startswith("-")]
        return kind, max(1, len(ids) - _values(argv))
    return kind, 1


def _after(argv: list[str], flag: str) -> str | None:
    return argv[argv.index(flag) + 1] if flag in argv and argv.index(flag) + 1 < len(argv) else None


def _values(argv: list[str]) -> int:
    return sum(1 for a in argv[2:] if a.startswith("--") and "=" not in a)


def follow_report(ledger: Ledger, day: int, skips: Callable[[str], bool] = lambda _: False) -> None:
    """Read `custodian policy report` and run each command it suggests, as printed (but the
    lines `skips` names: a lever switched off for its share, bench/month_levers.py)."""
    if ledger.before_report is None:
        ledger.before_report, ledger.first_report_day = ledger.total, day
    code, text, err = cli("policy", "report")
    if code != 0:
        ledger.findings.append(f"day {day}: policy report exit {code}: {err.strip()[:160]}")
        return
    for line, labelled in suggested_lines(text):
        if skips(line):
            continue
        if labelled:
            ledger.findings.append(f"day {day}: {line!r} printed after a label, not on its own")
        argv, problem = as_run(line)
        if argv is None:
            ledger.findings.append(f"day {day}: {line!r} {problem}")
            continue
        kind, n = items_of(argv)
        ledger.judged[kind] += n
        code, _, err = cli(*argv)
        ledger.ran.append(f"day {day}: {line}")
        if code != 0:
            said = err.strip().splitlines()[-1:] or [""]
            ledger.findings.append(f"day {day}: {line!r} exit {code}: {said[0][:200]}")


def decide_pending(hands: Hands, ledger: Ledger, harmful: Any, reason: str) -> None:
    """Decide every pending item: reject the harmful ones, approve the rest."""
    _, out, _ = cli("approvals", "list", "--status", "pending", "--json")
    pending = json.loads(out)
    summary = hands.summary() if pending else {}
    where = {
        t["id"]: t["workstream_id"] for ws in summary.get("workstreams", []) for t in ws["tasks"]
    }
    for item in pending:
        params = dict(item["params"])
        # Why it waits (`waiting_because`), or as an item queued before it was kept says it.
        waits = (item.get("waiting_because") or {}).get("code") or item.get("waits_code")
        ledger.deferred += waits == "deferred"
        task, status = params.get("task_id"), params.get("status")
        if harmful(item["operation"], params):
            cli("approvals", "reject", item["id"], "--by", PERSON, "--reason", reason)
            ledger.judged["reject"] += 1
            kind = "rejected"
        else:
            code, _, err = cli("approvals", "approve", item["id"], "--by", PERSON)
            ledger.judged["approve"] += 1
            if code != 0:
                ledger.findings.append(f"approve {item['id']} exit {code}: {err.strip()[:160]}")
            kind = "set" if code == 0 else ""
        verdict = (kind != "rejected", PERSON, reason if kind == "rejected" else "")
        ledger.decisions.append(
            decided(item["operation"], params, summary, hands.clock.peek(), verdict)
        )
        if kind and task is not None and status is not None:
            hands.words.said.append(
                Word(hands.clock.peek(), kind, str(task), where.get(task), str(status), PERSON)
            )


def decide_by_rule(hands: Hands, ledger: Ledger, judge: Judge) -> None:
    """Decide every pending item as the world's people do (`World.judge`): each by its owner."""
    _, out, _ = cli("approvals", "list", "--status", "pending", "--json")
    pending = json.loads(out)
    summary = hands.summary() if pending else {}
    where = {
        t["id"]: t["workstream_id"] for ws in summary.get("workstreams", []) for t in ws["tasks"]
    }
    for item in pending:
        params = dict(item["params"])
        verdict = judge(item["operation"], params, summary, hands.words, hands.clock.peek())
        if verdict.waits:
            continue  # its decider is away: decided on a later morning
        waits = (item.get("waiting_because") or {}).get("code") or item.get("waits_code")
        ledger.deferred += waits == "deferred"
        ledger.people[verdict.by] += 1
        if verdict.approve:
            code, _, err = cli("approvals", "approve", item["id"], "--by", verdict.by)
            ledger.judged["approve"] += 1
            if code != 0:
                ledger.findings.append(f"approve {item['id']} exit {code}: {err.strip()[:160]}")
            kind = "set" if code == 0 else ""
        else:
            cli("approvals", "reject", item["id"], "--by", verdict.by, "--reason", verdict.reason)
            ledger.judged["reject"] += 1
            ledger.reasons[f"{verdict.by}: {verdict.rule or verdict.reason}"] += 1
            kind = "rejected"
        said = (verdict.approve, verdict.by, verdict.rule or verdict.reason)
        ledger.decisions.append(
            decided(item["operation"], params, summary, hands.clock.peek(), said)
        )
        task, status = params.get("task_id"), params.get("status")
        if kind and task is not None and status is not None:
            hands.words.said.append(
                Word(hands.clock.peek(), kind, str(task), where.get(task), str(status), verdict.by)
            )
