"""A generated canon larger than any prompt, and scenarios that name the sections they need.

The canon: one decision record per (system, concern) pair, 20 systems by 5 concerns, each split
into six `##` sections (background, work in progress, blocked work, flags, decisions, ownership):
600 sections, about 130,000 estimated tokens. Sections of one system share its words, sections of
one concern share the concern's, and every section of one kind shares the kind's words, so each
wrong section is close to the right one in some way, as in a real canon.

A scenario is a domain's state (blocked tasks, flags, an open decision, tasks in progress, and
tasks to do that need nothing) and the sections that must be shown for it: for each blocked task
the blocked-work section of its (system, concern), for each flag the flags section, and so on.
A task's title uses some of its system's and concern's words, never the section's heading.
Deterministic for a given seed; nothing is committed but this module.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from custodian_runtime.core.contract import (
    Decision,
    DomainSummary,
    Flag,
    Task,
    WorkstreamWithTasks,
)

NOW = datetime(2026, 11, 29, 8, 0, tzinfo=UTC)
SYSTEMS = (
    ("billing", "invoices", "ledger"), ("search", "ranking", "crawler"),
    ("payments", "gateway", "checkout"), ("identity", "login", "sessions"),
    ("warehouse", "analytics", "etl"), ("mobile", "android", "ios"),
    ("email", "newsletter", "smtp"), ("storage", "buckets", "objects"),
    ("dns", "domains", "resolver"), ("kubernetes", "cluster", "nodes"),
    ("queue", "kafka", "consumers"), ("cdn", "edge", "cache"),
    ("support", "tickets", "helpdesk"), ("docs", "handbook", "wiki"),
    ("pricing", "plans", "quotes"), ("monitoring", "dashboards", "metrics"),
    ("website", "landing", "pages"), ("partners", "integrations", "webhooks"),
    ("hr", "onboarding", "payroll"), ("laptops", "devices", "inventory"),
)  # fmt: skip
CONCERNS = (
    ("certificates", "tls", "expiry", "renewal"),
    ("migrations", "schema", "database", "rollback"),
    ("backups", "restore", "snapshots", "retention"),
    ("access", "permissions", "review", "offboarding"),
    ("alerts", "paging", "oncall", "thresholds"),
)
# (heading, the words every section of the kind uses, what a section of the kind says)
ASPECTS = (
    ("Background", "context history", "This record explains why the {s} {c} approach was chosen."),
    ("Work in progress", "progress started underway", "While {s} {c} work is in progress, post "
     "an event after each step so the state shows it moving."),
    ("When work is blocked", "blocked blocker waiting", "When {s} {c} work is blocked, name the "
     "blocker and who can clear it; a blocked {c} task waits for its owner."),
    ("Flags and escalation", "flag escalate human", "Flag {s} {c} trouble for a person when "
     "the evidence is unclear; a flag on {c} names what was seen."),
    ("Decisions", "decision options choose", "A decision about {s} {c} is recorded with its "
     "options; the runtime never chooses between them."),
    ("Ownership", "owner team handover", "The {s} team owns {c}; a handover is recorded."),
)  # fmt: skip
FILLER = (
    "the team reviews this quarterly and keeps the record short",
    "people read this before they change anything in production",
    "ask in the weekly sync when the text and the practice differ",
    "a link to the runbook lives in the team's handbook",
    "the record is amended by a person, never by the runtime",
    "old exceptions are listed at the end with their dates",
)


@dataclass(frozen=True)
class Scenario:
    """A domain's state and the sections (file, heading) a run of it must be shown."""

    name: str
    summary: DomainSummary
    must: frozenset[tuple[str, str]]


def subjects() -> list[tuple[int, tuple[str, ...], tuple[str, ...]]]:
    """(number, system words, concern words) of every record."""
    return [
        (n * len(CONCERNS) + m, system, concern)
        for n, system in enumerate(SYSTEMS)
        for m, concern in enumerate(CONCERNS)
    ]


def record_path(number: int, system: tuple[str, ...], concern: tuple[str, ...]) -> str:
    """Where a record lives in the canon."""
    return f"records/{number:04d}-{system[0]}-{concern[0]}.md"


def write_canon(root: Path, seed: int = 0, copies: int = 1) -> int:
    """Write the generated records under `root` (beside a constitution); the section count.
    `copies` beyond the first are written under `records-<n>/` with other filler, for timing a
    larger canon (a scenario names sections of the first copy only)."""
    rng = random.Random(seed)
    count = 0
    for copy in range(1, copies + 1):
        for number, system, concern in subjects():
            path = root / record_path(number, system, concern)
            if copy > 1:
                path = root / f"records-{copy}" / path.name
            path.parent.mkdir(parents=True, exist_ok=True)
            parts = [f"# Record {number}: {system[0]} {concern[0]}\n"]
            for heading, kind, said in ASPECTS:
                parts.append(f"## {heading}\n\n{_body(rng, system, concern, kind, said)}\n")
                count += 1
            path.write_text("\n".join(parts), encoding="utf-8")
    return count


def _body(rng: random.Random, system: tuple[str, ...], concern: tuple[str, ...], kind: str,
          said: str) -> str:  # fmt: skip
    s, c = " ".join(system), " ".join(concern)
    sentences = [said.format(s=system[0], c=concern[0]), f"Here {kind} means {s} and {c}."]
    sentences += [f"{f[0].upper()}{f[1:]}." for f in rng.sample(FILLER, 3)]
    sentences.append(
        f"See also the {rng.choice(SYSTEMS)[0]} records for {rng.choice(CONCERNS)[0]}."
    )
    return " ".join(sentences)


def _title(rng: random.Random, system: tuple[str, ...], concern: tuple[str, ...]) -> str:
    words = [*rng.sample(system, 2), *rng.sample(concern, 2), rng.choice(("fix", "update", "plan"))]
    rng.shuffle(words)
    return " ".join(words).capitalize()


def scenario(seed: int, todo: int = 8) -> Scenario:
    """One domain's state: 2 blocked tasks, 2 flags, 1 decision, 2 in progress, `todo` to do."""
    rng = random.Random(1000 + seed)
    chosen = rng.sample(subjects(), 7 + todo)
    kinds = ["blocked"] * 2 + ["flagged"] * 2 + ["decision"] + ["in_progress"] * 2 + ["todo"] * todo
    heading = {"blocked": "When work is blocked", "flagged": "Flags and escalation",
               "decision": "Decisions", "in_progress": "Work in progress"}  # fmt: skip
    tasks, flags, decisions, must = [], [], [], set()
    for n, ((number, system, concern), kind) in enumerate(zip(chosen, kinds, strict=True)):
        title = _title(rng, system, concern)
        if kind in heading:
            must.add((record_path(number, system, concern), heading[kind]))
        if kind == "decision":
            decisions.append(_decision(n, title, rng, system, concern))
            continue
        status = {"flagged": "in_progress"}.get(kind, kind)
        tasks.append(_task(n, title, status))
        if kind == "flagged":
            flags.append(_flag(n, rng, system, concern))
    summary = DomainSummary(
        domain="ops", generated_at=NOW,
        workstreams=(WorkstreamWithTasks(
            id="W-1", domain="ops", title="Operations", status="active", owner="ana",
            created_at=NOW - timedelta(days=90), updated_at=NOW, tasks=tuple(tasks)),),
        open_decisions=tuple(decisions), open_flags=tuple(flags),
    )  # fmt: skip
    return Scenario(f"scenario-{seed}", summary, frozenset(must))


def _task(n: int, title: str, status: str) -> Task:
    created = NOW - timedelta(days=20 + n)
    return Task(id=f"T-{n}", workstream_id="W-1", title=title, status=status,
                created_at=created, updated_at=created + timedelta(days=3))  # fmt: skip


def _flag(n: int, rng: random.Random, system: tuple[str, ...], concern: tuple[str, ...]) -> Flag:
    note = f"{rng.choice(system)} {rng.choice(concern)} looks wrong since the last change"
    return Flag(id=f"F-{n}", workstream_id="W-1", task_id=f"T-{n}", note=note, status="open",
                raised_by="ana", created_at=NOW - timedelta(days=2))  # fmt: skip


def _decision(n: int, title: str, rng: random.Random, system: tuple[str, ...],
              concern: tuple[str, ...]) -> Decision:  # fmt: skip
    return Decision(id=f"D-{n}", domain="ops", workstream_id="W-1", title=title,
                    context=f"Which way for {rng.choice(system)} {rng.choice(concern)}",
                    options=("now", "next quarter"), status="open",
                    created_at=NOW - timedelta(days=5))  # fmt: skip


def scenarios(count: int = 40, todo: int = 8) -> list[Scenario]:
    """The eval set: `count` scenarios, deterministic (`todo` tasks to do in each, at most 93)."""
    return [scenario(seed, todo) for seed in range(count)]
