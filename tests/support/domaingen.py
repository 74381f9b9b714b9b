"""Generated domains of any size for the prompt's fairness tests and `make bench`.

The texts are drawn from the demo dataset's kind of prose, with ids, numbers, some CJK and emoji,
so that token counts behave like a real domain's. Deterministic for a given seed.
"""

from __future__ import annotations

import random
from datetime import UTC, date, datetime, timedelta

from custodian_runtime.core.contract import (
    Decision,
    DomainSummary,
    Flag,
    ProgressEvent,
    Task,
    WorkstreamWithTasks,
)

NOW = datetime(2026, 11, 29, 8, 0, tzinfo=UTC)
WORDS = (
    "the",
    "redirect",
    "map",
    "for",
    "old",
    "URLs",
    "legal",
    "review",
    "of",
    "pricing",
    "page",
    "migrate",
    "blog",
    "archive",
    "submit",
    "new",
    "sitemap",
    "rewrite",
    "product",
    "pages",
    "waiting",
    "on",
    "sign-off",
    "from",
    "marketing",
    "checked",
    "staging",
    "deploy",
    "rollback",
    "database",
    "migration",
    "index",
    "rebuild",
    "latency",
    "budget",
    "alert",
    "owner",
    "handover",
    "weekly",
    "sync",
    "vendor",
    "contract",
    "renewal",
    "security",
    "audit",
    "finding",
    "fixed",
    "merged",
    "released",
    "approved",
    "blocked",
    "by",
)
EXTRA = ("Ärger", "naïve", "日本語のテキスト", "修复登录页面", "🚀", "✅ done", "→", "ℹ️")
STATUSES = ("todo", "in_progress", "blocked", "done", "cancelled")


def sentence(rng: random.Random, words: int) -> str:
    """A plausible line of hub prose: words, an id or a number, now and then a non-Latin word."""
    out = [rng.choice(WORDS) for _ in range(words)]
    if rng.random() < 0.5:
        out.insert(rng.randrange(len(out) + 1), f"T-{rng.randrange(100000)}")
    if rng.random() < 0.2:
        out.insert(rng.randrange(len(out) + 1), rng.choice(EXTRA))
    text = " ".join(out)
    return text[0].upper() + text[1:] + "."


def _ago(rng: random.Random, most: float) -> datetime:
    return NOW - timedelta(days=rng.uniform(0, most))


def _task(rng: random.Random, n: int, ws: str) -> Task:
    created = _ago(rng, 200)
    return Task(
        id=f"T-{n}",
        workstream_id=ws,
        title=sentence(rng, rng.randint(3, 9)),
        description=sentence(rng, rng.randint(5, 30)) if rng.random() < 0.5 else "",
        status=rng.choice(STATUSES),
        assignee=rng.choice(("ana", "li", "sam", None)),
        due=date(2026, 12, 1) + timedelta(days=rng.randrange(60)) if rng.random() < 0.3 else None,
        created_at=created,
        updated_at=max(created, _ago(rng, 60)),
    )


def generated_summary(tasks: int, seed: int = 0, events: int = 50) -> DomainSummary:
    """A domain of `tasks` tasks over ~tasks/50 workstreams, with flags, decisions and events."""
    rng = random.Random(seed)
    n_ws = max(1, tasks // 50)
    by_ws: dict[str, list[Task]] = {f"W-{w}": [] for w in range(n_ws)}
    for n in range(tasks):
        ws = f"W-{rng.randrange(n_ws)}"
        by_ws[ws].append(_task(rng, n, ws))
    all_tasks = [t for ts in by_ws.values() for t in ts]
    pick = [t for t in all_tasks if t.status in ("blocked", "in_progress")] or all_tasks
    return DomainSummary(
        domain="website",
        generated_at=NOW,
        workstreams=tuple(
            WorkstreamWithTasks(id=w, domain="website", title=sentence(rng, 3), status="active",
                                owner="ana", created_at=NOW - timedelta(days=300),
                                updated_at=NOW - timedelta(days=1), tasks=tuple(ts))
            for w, ts in by_ws.items()
        ),
        open_decisions=tuple(
            Decision(id=f"D-{i}", domain="website", title=sentence(rng, 5),
                     context=sentence(rng, 20), options=(sentence(rng, 3), sentence(rng, 4)),
                     status="open", created_at=_ago(rng, 30))
            for i in range(max(1, tasks // 200))
        ),
        open_flags=tuple(
            Flag(id=f"F-{i}", workstream_id=t.workstream_id, task_id=t.id, status="open",
                 note=sentence(rng, 12), raised_by="custodian", created_at=_ago(rng, 20))
            for i, t in enumerate(pick[: max(1, tasks // 100)])
        ),
        recent_events=tuple(
            ProgressEvent(id=f"E-{i}", workstream_id=t.workstream_id, task_id=t.id,
                          event_type="note", summary=sentence(rng, 15), source="ana",
                          created_at=_ago(rng, 30))
            for i, t in enumerate(rng.sample(all_tasks, min(events, len(all_tasks))))
        ),
    )  # fmt: skip
