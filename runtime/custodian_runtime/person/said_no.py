"""`custodian policy no`: a person says a standing no of one class in words, or lifts one; and
the lines `policy report` prints for each standing no (core/standing/said_no.py)."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from datetime import datetime
from typing import TextIO

from custodian_runtime.clock import utc_now
from custodian_runtime.core.authority.refusals import OF_FACT
from custodian_runtime.core.authority.scope import CITES as CITES_FACT
from custodian_runtime.core.fold.prune import parse_keep
from custodian_runtime.core.inert import for_terminal
from custodian_runtime.core.journal.kinds import RefusalSaid
from custodian_runtime.core.standing.modes import person_problem
from custodian_runtime.core.standing.said_no import SaidNo, said_problem, split_fact
from custodian_runtime.errors import ConfigError
from custodian_runtime.journal.person.standing_store import StandingStore
from custodian_runtime.settings import Settings

# A standing no's label, as core/authority/refusals.py `Refusal.label` writes it.
_LABEL = re.compile(
    r"^(?P<op>[a-z_]+)(?: status=(?P<status>[a-z_]+))?(?: citing (?P<cites>[a-z]+))? in "
    r"(?:workstream (?P<ws>\S+)|the workstreams of (?P<owner>.+)|(?P<fact>.+))$"
)
# The words a "no" said of a fact ends its label with, back to the fact (`last_by=lena`).
_FACTS = tuple(
    (key, re.compile("^" + re.escape(words).replace(re.escape("{}"), "(?P<value>.+)") + "$"))
    for key, words in OF_FACT.items()
)
LIFE = "30d"


@dataclass(frozen=True)
class SayNo:
    """`policy no`, as given."""

    domain: str
    operation: str
    status: str
    cites: str
    workstream: str
    owner: str
    expires: str
    lifted: bool
    by: str
    reason: str
    on: str = ""  # `FACT=VALUE`: said of a fact of the proposal, in every workstream


def say_no(settings: Settings, request: SayNo, out: TextIO) -> int:
    """Journal a person's standing no (or its lift); exit 2 when it cannot be said so."""
    try:
        life = parse_keep(request.expires)
    except ValueError:
        raise ConfigError(
            f"--expires {request.expires!r}: give a count and a unit, h, d or w, of at most 30 "
            "days (e.g. 30d)",
            setting="--expires",
        ) from None
    r = request
    key, value = split_fact(r.on)
    cites = value if key == CITES_FACT and not r.cites else r.cites
    problem = said_problem(r.operation, r.status, cites, r.workstream, r.owner, life, r.on)
    problem = problem or person_problem(r.by, r.reason)
    if problem is not None:
        raise ConfigError(f"policy no: {problem}", setting="--operation")
    fact = f"{key}={value}" if r.on else ""
    entry = RefusalSaid(
        operation=r.operation, status=r.status, cites=cites, workstream=r.workstream,
        owner=r.owner, by=r.by, reason=r.reason, lifted=r.lifted,
        expires_at=(utc_now() + life).isoformat(), fact=fact or None,
    )  # fmt: skip
    store = StandingStore(settings.memory_dir, settings.seal_key)
    holder = store.record(r.domain, entry)
    said = SaidNo(r.operation, r.status, cites, r.workstream, r.owner, r.by, r.reason,
                  utc_now(), utc_now() + life, r.lifted, fact)  # fmt: skip
    what = f"{'lifted' if r.lifted else 'a standing no'}: {said.label()}"
    busy = (
        "" if holder is None else f" (kept while {holder} has the domain's lock; journaled after)"
    )
    out.write(for_terminal(f"{what}: journaled{busy}") + "\n")
    return 0


def command(domain: str, memory: str, label: str, lift: bool = False) -> str | None:
    """The `policy no` command for a standing no's label (None: a label it cannot read)."""
    found = _LABEL.match(label)
    if found is None:
        return None
    argv = ["custodian", "policy", "no", "--domain", domain, "--operation", found["op"]]
    argv += ["--status", found["status"]] if found["status"] else []
    fact = _fact_of(found["fact"], found["cites"]) if found["fact"] else None
    if found["fact"] and fact is None:
        return None  # a "no" whose words name no fact a person can say (owner_set_days)
    argv += ["--cites", found["cites"]] if found["cites"] and fact is None else []
    if fact is not None:
        argv += ["--on", fact]
    else:
        argv += ["--workstream", found["ws"]] if found["ws"] else ["--owner", found["owner"]]
    argv += ["--lift"] if lift else ["--expires", LIFE]
    why = "lifted: ask again" if lift else "policy report: a standing no, made mine"
    return shlex.join([*argv, "--memory", memory]) + f" --reason={shlex.quote(why)}"


def _fact_of(words: str, cites: str | None) -> str | None:
    """The `FACT=VALUE` a "no" said of a fact names in its label's words (None: none)."""
    for key, pattern in _FACTS:
        found = pattern.match(words)
        if found is not None:
            value = cites if key == CITES_FACT else found.groupdict().get("value")
            return f"{key}={value}" if value else None
    return None


def report_lines(domain: str, memory: str, nos: dict[str, tuple[int, str]],
                 said: tuple[SaidNo, ...], now: datetime, days: int) -> list[str]:  # fmt: skip
    """What `policy report` prints of the standing nos: each held one, with the command that
    makes it the person's own and the one that lifts it (each in a sentence, to run as quoted);
    each one said and live, with the one that lifts it."""
    lines = []
    for label, (count, last) in sorted(nos.items()):
        lines.append(
            f"a standing no: {label}, {count} held in the last {days} days, not asked; the "
            f"last: {last}"
        )
        mine = command(domain, memory, label)
        if mine is not None and not any(s.label() == label for s in said):
            # In a sentence, not on a line of its own: it holds already; to make it the
            # person's own (held whatever comes, until lifted) is their choice, not a step.
            lines.append(f"  make it yours (held until you lift it, at most 30 days): `{mine}`")
            lines.append(f"  or ask again: {_quoted(command(domain, memory, label, lift=True))}")
    for s in (s for s in said if s.live(now)):
        until = f"{s.expires_at:%Y-%m-%d %H:%M} UTC"
        lines.append(f"a standing no said by {s.by}: {s.label()}, until {until} ({s.reason})")
        lines.append(f"  lift it: {_quoted(command(domain, memory, s.label(), lift=True))}")
    return lines


def _quoted(line: str | None) -> str:
    """A command shown inside a sentence, not on a line of its own: it is not a suggestion."""
    return "-" if line is None else f"`{line}`"
