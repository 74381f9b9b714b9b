"""Which figures describe a domain, from its last run and its queue: for a push and `status`.

The metric names and their help are defined here once; the shell turns `samples` into a
prometheus-client registry (pushed to a Pushgateway, or printed by `custodian status`). A figure
that is not known (no run yet, no token counts, no price) is left out, never guessed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from custodian_runtime.core.approvals.items import ApprovalItem, pending_for
from custodian_runtime.core.journal.kinds import Finished, read_as
from custodian_runtime.core.journal.records import Record, parse_at
from custodian_runtime.core.journal.totals import Totals, ended_runs, succeeded_runs
from custodian_runtime.core.prices import cost_usd

JOB = "custodian"
OUTCOMES = ("executed", "queued", "denied", "failed")


@dataclass(frozen=True)
class Metric:
    """One metric: its name, its help text, its labels, and whether it is a gauge or a counter."""

    name: str
    help: str
    labels: tuple[str, ...] = ("domain",)
    kind: str = "gauge"  # or "counter": cumulative, its name ends in _total


BUILD_INFO = "custodian_build_info"
LAST_CHECK = "custodian_last_check_timestamp_seconds"


METRICS: tuple[Metric, ...] = (
    Metric("custodian_last_run_timestamp_seconds", "When the last run ended (Unix time)."),
    # A quiet domain is checked without a run: `custodian watch` looks at it every pass and runs
    # it only when it moved. Alert on a check that stopped, not on a run that is not needed.
    Metric(
        LAST_CHECK,
        "When the domain was last looked at: its last run, or a pass of custodian watch that "
        "found nothing to do (Unix time).",
    ),
    Metric("custodian_last_success_timestamp_seconds", "When the last run with exit code 0 ended."),
    Metric(
        "custodian_first_run_timestamp_seconds",
        "When the first run the journal records ended (for a domain that never succeeded).",
    ),
    Metric("custodian_run_duration_seconds", "How long the last run took."),
    Metric("custodian_run_items", "Plan items of the last run, by outcome.", ("domain", "outcome")),
    Metric("custodian_run_exit_code", "The last run's exit code."),
    Metric("custodian_run_input_tokens", "Input tokens of the last run's model call."),
    Metric("custodian_run_output_tokens", "Output tokens of the last run's model call."),
    Metric("custodian_run_cost_usd", "What the last run's model call cost, in USD."),
    Metric("custodian_pending_approvals", "Items waiting for a person in the approval queue."),
    Metric("custodian_oldest_pending_age_seconds", "Age of the oldest item waiting for a person."),
    # Counters: the journal's running totals (core/journal/totals.py), the same in every push and
    # scrape; alert on increase() of these, not on the last run's gauges.
    Metric(
        "custodian_runs_total",
        "Runs recorded in the journal, by status and exit code.",
        ("domain", "status", "exit_code"),
        "counter",
    ),
    Metric(
        "custodian_writes_total",
        "Write outcomes recorded in the journal, by operation and outcome.",
        ("domain", "operation", "outcome"),
        "counter",
    ),
    Metric("custodian_input_tokens_total", "Input tokens of every model call.", kind="counter"),
    Metric("custodian_output_tokens_total", "Output tokens of every model call.", kind="counter"),
    Metric(
        "custodian_cost_usd_total",
        "What the model calls cost, in USD (calls of unknown price add nothing).",
        kind="counter",
    ),
    Metric(BUILD_INFO, "The running release: always 1.", ("version", "revision")),
)


@dataclass(frozen=True)
class RunFacts:
    """One run as the metrics see it."""

    started_at: datetime
    ended_at: datetime
    exit_code: int
    status: str
    counts: Mapping[str, int] = field(default_factory=dict)
    model: str | None = None
    usage: Mapping[str, Any] = field(default_factory=dict)

    @property
    def cost_usd(self) -> float | None:
        """As the provider reported it, else from the price table (core/prices.py), else None."""
        return cost_usd(self.model, self.usage)

    def tokens(self, key: str) -> int | None:
        """`input_tokens` or `output_tokens`, when reported."""
        value = self.usage.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class Figures:
    """A domain's figures: its last run, its last success, and its queue."""

    domain: str
    last_run: RunFacts | None
    last_success: datetime | None
    pending: int
    oldest_pending_age_s: float | None
    totals: Totals | None = None  # the journal's running totals; None: no journal read
    last_check: datetime | None = None  # a look that found nothing to do; None: the last run

    def overdue(self, now: datetime, max_age: timedelta) -> bool:
        """True when the domain has not succeeded within `max_age` of `now` (or never has)."""
        return self.last_success is None or now - self.last_success > max_age

    @property
    def checked_at(self) -> datetime | None:
        """When the domain was last looked at: a check after its last run, else that run."""
        ran = self.last_run.ended_at if self.last_run is not None else None
        if self.last_check is None or ran is None:
            return self.last_check or ran
        return max(self.last_check, ran)

    def with_run(self, facts: RunFacts) -> Figures:
        """The figures once `facts` (a run that just ended) is the last run."""
        success = facts.ended_at if facts.exit_code == 0 else self.last_success
        return replace(self, last_run=facts, last_success=success)


@dataclass(frozen=True)
class Sample:
    """One value of one metric."""

    name: str
    labels: Mapping[str, str]
    value: float


def _run_samples(domain: str, run: RunFacts) -> list[Sample]:
    at = {"domain": domain}
    found = [
        Sample("custodian_last_run_timestamp_seconds", at, run.ended_at.timestamp()),
        Sample(
            "custodian_run_duration_seconds",
            at,
            max(0.0, (run.ended_at - run.started_at).total_seconds()),
        ),
        Sample("custodian_run_exit_code", at, float(run.exit_code)),
    ]
    for outcome in OUTCOMES:
        count = float(run.counts.get(outcome, 0))
        found.append(Sample("custodian_run_items", {**at, "outcome": outcome}, count))
    optional = {
        "custodian_run_input_tokens": run.tokens("input_tokens"),
        "custodian_run_output_tokens": run.tokens("output_tokens"),
        "custodian_run_cost_usd": run.cost_usd,
    }
    found += [Sample(name, at, float(v)) for name, v in optional.items() if v is not None]
    return found


def samples(figures: Figures) -> tuple[Sample, ...]:
    """Every known value of `figures`; unknown ones are left out."""
    at = {"domain": figures.domain}
    found = [Sample("custodian_pending_approvals", at, float(figures.pending))]
    if figures.oldest_pending_age_s is not None:
        found.append(
            Sample("custodian_oldest_pending_age_seconds", at, figures.oldest_pending_age_s)
        )
    if figures.last_success is not None:
        found.append(
            Sample("custodian_last_success_timestamp_seconds", at, figures.last_success.timestamp())
        )
    if figures.last_run is not None:
        found += _run_samples(figures.domain, figures.last_run)
    checked = figures.checked_at
    if checked is not None:
        found.append(Sample(LAST_CHECK, at, checked.timestamp()))
    if figures.totals is not None:
        found += _total_samples(figures.domain, figures.totals)
    return tuple(found)


def _total_samples(domain: str, totals: Totals) -> list[Sample]:
    at = {"domain": domain}
    found = [
        Sample("custodian_runs_total", {**at, "status": s, "exit_code": c}, float(n))
        for (s, c), n in totals.labelled("runs")
    ]
    found += [
        Sample("custodian_writes_total", {**at, "operation": op, "outcome": o}, float(n))
        for (op, o), n in totals.labelled("writes")
    ]
    if totals.first_run_at is not None:
        first = parse_at(totals.first_run_at).timestamp()
        found.append(Sample("custodian_first_run_timestamp_seconds", at, first))
    found += [
        Sample("custodian_input_tokens_total", at, float(totals.input_tokens)),
        Sample("custodian_output_tokens_total", at, float(totals.output_tokens)),
        Sample("custodian_cost_usd_total", at, totals.cost_usd),
    ]
    return found


def build_info(version: str, revision: str) -> Sample:
    """`custodian_build_info{version, revision} 1`: which release serves the figures."""
    return Sample(BUILD_INFO, {"version": version, "revision": revision}, 1.0)


def run_facts(records: Sequence[Record], finished: Record) -> RunFacts:
    """The run that `finished` ends, from its first record and its `finished` record."""
    first = next((r for r in records if r.run_id == finished.run_id), finished)
    ended = read_as(finished, Finished)
    return RunFacts(
        started_at=parse_at(first.at),
        ended_at=parse_at(finished.at),
        exit_code=ended.exit_code if ended.exit_code is not None else -1,
        status=str(ended.status),
        counts=dict(ended.counts or {}),
        model=ended.model,
        usage=dict(ended.usage or {}),
    )


def figures_of(
    domain: str,
    records: Sequence[Record],
    items: Iterable[ApprovalItem],
    now: datetime,
    totals: Totals | None = None,
) -> Figures:
    """A domain's figures from its checkpoint's records and totals, and the approval queue."""
    ended = ended_runs(records)
    succeeded = succeeded_runs(ended)
    waiting = pending_for(items, domain, now)
    oldest = (now - waiting[0].created_at).total_seconds() if waiting else None
    return Figures(
        domain=domain,
        last_run=run_facts(records, ended[-1]) if ended else None,
        last_success=parse_at(succeeded[-1].at) if succeeded else None,
        pending=len(waiting),
        oldest_pending_age_s=max(0.0, oldest) if oldest is not None else None,
        totals=totals,
    )


def _ago(seconds: float) -> str:
    """`45s`, `12m`, `5h`, `3d`: a whole number of the largest unit that fits."""
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{int(max(0.0, seconds))}s"


def _at(when: datetime | None) -> str | None:
    return when.isoformat().replace("+00:00", "Z") if when is not None else None


def status_data(figures: Figures, now: datetime, max_age: timedelta) -> dict[str, Any]:
    """One domain's figures as `custodian status --json` prints them (null where unknown)."""
    run = figures.last_run
    return {
        "domain": figures.domain,
        "overdue": figures.overdue(now, max_age),
        "last_success_at": _at(figures.last_success),
        "last_run_at": _at(run.ended_at) if run else None,
        # When it was last looked at: its last run, or a watch's pass that found nothing to do.
        "last_check_at": _at(figures.checked_at),
        "last_run_status": run.status if run else None,
        "exit_code": run.exit_code if run else None,
        "duration_s": (run.ended_at - run.started_at).total_seconds() if run else None,
        "items": {o: run.counts.get(o, 0) for o in OUTCOMES} if run else None,
        "input_tokens": run.tokens("input_tokens") if run else None,
        "output_tokens": run.tokens("output_tokens") if run else None,
        "cost_usd": run.cost_usd if run else None,
        "pending": figures.pending,
        "oldest_pending_age_s": figures.oldest_pending_age_s,
    }


def status_lines(figures: Figures, now: datetime, max_age: timedelta) -> list[str]:
    """Two lines for a person: health and the last run, then its items, queue and cost."""
    d = status_data(figures, now, max_age)
    health = "OVERDUE" if d["overdue"] else "ok"
    success = figures.last_success
    since = (
        f"last success {_ago((now - success).total_seconds())} ago"
        if success
        else "never succeeded"
    )
    run = figures.last_run
    checked = figures.checked_at
    check = f"; last check {_ago((now - checked).total_seconds())} ago" if checked else ""
    if run is None:
        return [
            f"{figures.domain}  {health}  {since}; no run recorded{check}",
            f"  pending {d['pending']}",
        ]
    ran = _ago((now - run.ended_at).total_seconds())
    head = (
        f"{figures.domain}  {health}  {since}; last run {ran} ago: {run.status},"
        f" exit {run.exit_code}, {d['duration_s']:.1f} s{check}"
    )
    items = " ".join(f"{o} {n}" for o, n in d["items"].items())
    oldest = d["oldest_pending_age_s"]
    queue = f"pending {d['pending']}" + (f" (oldest {_ago(oldest)})" if oldest is not None else "")
    tokens = f"tokens {_or_dash(d['input_tokens'])} in / {_or_dash(d['output_tokens'])} out"
    cost = f"cost ${d['cost_usd']:.4f}" if d["cost_usd"] is not None else "cost unknown"
    return [head, f"  {items}; {queue}; {tokens}; {cost}"]


def _or_dash(value: object) -> str:
    return "-" if value is None else str(value)
