"""`custodian status`: every domain's figures read from memory/, for a person, JSON or Prometheus.

A domain's figures come from its journal's checkpoint (the last run and the last success), the
approval queue, and the checks a `custodian watch` kept (metrics/checks.py); nothing here reads
the whole journal.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import TextIO

from custodian_runtime.core.approvals.items import ApprovalItem
from custodian_runtime.core.fold.prune import parse_keep
from custodian_runtime.core.inert import for_terminal, for_terminal_json
from custodian_runtime.core.journal.seals import SealKey
from custodian_runtime.core.metrics import Figures, figures_of, status_data, status_lines
from custodian_runtime.errors import ConfigError
from custodian_runtime.journal.person.queue import ApprovalStore
from custodian_runtime.journal.store import JournalStore
from custodian_runtime.metrics._registry import exposition
from custodian_runtime.metrics.checks import last_checks

# A domain has not succeeded within --max-age, or no domain has run at all (1 is a bug's).
EXIT_OVERDUE = 8
DEFAULT_MAX_AGE = "48h"


def parse_max_age(text: str) -> timedelta:
    """`--max-age`: `48h`, `2d` or `1w`, as for `journal prune --keep`; else a ConfigError."""
    try:
        return parse_keep(text)
    except ValueError:
        raise ConfigError(
            f"--max-age {text!r}: give a count and a unit, h, d or w (e.g. 48h)",
            setting="--max-age",
        ) from None


@dataclass(frozen=True)
class StatusRequest:
    """What `custodian status` was asked for."""

    max_age: timedelta
    as_json: bool = False
    prometheus: bool = False


def domain_figures(
    memory_dir: Path,
    domain: str,
    seal_key: SealKey | None,
    now: datetime,
    items: Sequence[ApprovalItem] | None = None,
) -> Figures:
    """One domain's figures: its checkpoint (with the tail folded in) and its queue."""
    opened = JournalStore(memory_dir, seal_key=seal_key).open(domain, repair=False)
    if items is None:
        items = ApprovalStore(memory_dir, seal_key).all(domain, verify=False)
    return figures_of(domain, opened.history, items, now, opened.checkpoint.totals)


def all_figures(memory_dir: Path, seal_key: SealKey | None, now: datetime) -> list[Figures]:
    """The figures of every domain with a journal or a queued item, by name, each with its
    last check by a `custodian watch` (metrics/checks.py)."""
    items = ApprovalStore(memory_dir, seal_key).all(verify=False)
    domains = set(JournalStore(memory_dir).domains()) | {i.domain for i in items}
    checks = last_checks(memory_dir)
    return [
        replace(domain_figures(memory_dir, d, seal_key, now, items), last_check=checks.get(d))
        for d in sorted(domains)
    ]


def status_command(
    memory_dir: Path, seal_key: SealKey | None, request: StatusRequest, out: TextIO, now: datetime
) -> int:
    """Print the figures; EXIT_OVERDUE when a domain is overdue or none has run."""
    figures = all_figures(memory_dir, seal_key, now)
    if request.prometheus:
        out.write(exposition(figures))
    elif request.as_json:
        data = [status_data(f, now, request.max_age) for f in figures]
        out.write(
            for_terminal_json({"max_age_s": request.max_age.total_seconds(), "domains": data})
            + "\n"
        )
    else:
        lines = [line for f in figures for line in status_lines(f, now, request.max_age)]
        out.write(
            "\n".join(for_terminal(line) for line in lines or [f"no domain under {memory_dir}"])
            + "\n"
        )
    overdue = [f for f in figures if f.overdue(now, request.max_age)]
    return EXIT_OVERDUE if overdue or not figures else 0
