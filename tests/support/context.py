"""Hand-built observed states shared by the context and prompt tests."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any

from custodian_runtime.core.context.prompt import ApprovalBrief, PromptInputs
from custodian_runtime.core.contract import (
    Decision,
    DomainOverview,
    DomainSummary,
    Flag,
    ProgressEvent,
    StateSummary,
    Task,
    TaskCounts,
    WorkstreamCounts,
    WorkstreamWithTasks,
)
from custodian_runtime.core.journal.continuity import LastAction, NoteRef

NOW = datetime(2026, 11, 29, 8, 0, tzinfo=UTC)
CONSTITUTION = "# Constitution\n\n## Article 1 — Purpose\n\nKeep the state truthful and moving.\n"
GUIDANCE = "# Domain guidance: `website`\n\nThe launch date is the constraint.\n"


def ago(days: float) -> datetime:
    """A moment `days` before NOW."""
    return NOW - timedelta(days=days)


def task(tid: str, ws: str, status: str, updated_days: float, **extra: Any) -> Task:
    """A task in workstream `ws`, last updated `updated_days` before NOW."""
    fields: dict[str, Any] = {
        "id": tid,
        "workstream_id": ws,
        "title": f"Task {tid}",
        "status": status,
        "created_at": ago(60),
        "updated_at": ago(updated_days),
    }
    fields.update(extra)
    return Task(**fields)


def event(
    eid: str, ws: str, days: float, summary: str, task_id: str | None = None
) -> ProgressEvent:
    """A progress event `days` before NOW."""
    return ProgressEvent(
        id=eid,
        workstream_id=ws,
        task_id=task_id,
        event_type="observation" if task_id is None else "note",
        summary=summary,
        source="ana",
        created_at=ago(days),
    )


def workstream(
    wid: str, title: str, tasks: list[Task], owner: str | None = "ana"
) -> WorkstreamWithTasks:
    """An active workstream holding `tasks`."""
    return WorkstreamWithTasks(
        id=wid,
        domain="website",
        title=title,
        status="active",
        owner=owner,
        created_at=ago(90),
        updated_at=ago(10),
        tasks=tuple(tasks),
    )


def typical_summary() -> DomainSummary:
    """A website relaunch mid-way: a flag, a blocked task, a stale one, a decision, some events."""
    content = [
        task("T-1", "W-1", "done", 20, title="Write the new home page copy"),
        task("T-2", "W-1", "in_progress", 3, title="Rewrite the product pages", assignee="li",
             description="Five product pages; legal reviews the claims."),
        task("T-3", "W-1", "blocked", 8, title="Legal review of the pricing page",
             description="Waiting on legal since the 21st."),
        task("T-4", "W-1", "todo", 30, title="Migrate the blog archive", due=date(2026, 12, 15)),
    ]  # fmt: skip
    seo = [
        task("T-5", "W-2", "in_progress", 19, title="Redirect map for old URLs", assignee="sam"),
        task("T-6", "W-2", "todo", 40, title="Submit the new sitemap"),
        task("T-7", "W-2", "cancelled", 25, title="Rebuild the AMP pages"),
    ]
    events = [
        event("E-1", "W-1", 1, "Product pages 3 of 5 drafted.", "T-2"),
        event("E-2", "W-1", 8, "Pricing page sent to legal; no answer yet.", "T-3"),
        event("E-3", "W-2", 19, "Started the redirect map from the crawl export.", "T-5"),
        event("E-4", "W-1", 20, "Home page copy approved by marketing.", "T-1"),
    ]
    return DomainSummary(
        domain="website",
        generated_at=NOW,
        workstreams=(
            workstream("W-1", "Content", content),
            workstream("W-2", "SEO and redirects", seo, owner=None),
        ),
        open_decisions=(
            Decision(id="D-1", domain="website", workstream_id="W-2", title="Keep the /blog path?",
                     context="Old links point at /blog; the new design uses /articles.",
                     options=("Keep /blog", "Move to /articles with redirects"), status="open",
                     created_at=ago(6)),
        ),
        open_flags=(
            Flag(id="F-1", workstream_id="W-1", task_id="T-3",
                 note="Legal has not answered in a week.", status="open", raised_by="custodian",
                 created_at=ago(2)),
        ),
        recent_events=tuple(events),
    )  # fmt: skip


def large_summary(todo: int = 50, events: int = 40, blocked: int = 2) -> DomainSummary:
    """A domain with one flag, some blocked tasks, many todo tasks and many events."""
    tasks = [task(f"B-{i}", "W-1", "blocked", 5 + i) for i in range(blocked)]
    tasks += [
        task(f"T-{i:03}", "W-1", "todo", 30, description="Details. " * 40) for i in range(todo)
    ]
    return DomainSummary(
        domain="website",
        generated_at=NOW,
        workstreams=(workstream("W-1", "Everything", tasks),),
        open_flags=(
            Flag(
                id="F-1",
                workstream_id="W-1",
                task_id="B-0",
                note="Stuck.",
                status="open",
                raised_by="ana",
                created_at=ago(1),
            ),
        ),
        recent_events=tuple(
            event(f"E-{i:03}", "W-1", i / 10, "Something happened. " * 10) for i in range(events)
        ),
    )


def typical_overview() -> StateSummary:
    """Two domains: the website one observed here and an internal platform migration."""
    return StateSummary(
        generated_at=NOW,
        domains=(
            DomainOverview(
                domain="website",
                workstreams=WorkstreamCounts(active=2),
                tasks=TaskCounts(todo=2, in_progress=2, blocked=1, done=1, cancelled=1),
                open_flags=1,
                open_decisions=1,
                last_event_at=ago(1),
            ),
            DomainOverview(
                domain="platform",
                workstreams=WorkstreamCounts(active=3, done=1),
                tasks=TaskCounts(todo=6, in_progress=3, done=9),
                open_flags=0,
                open_decisions=2,
                last_event_at=None,
            ),
        ),
    )


NONCE = "7f3a9c0e5b1d"  # a run's data-marker nonce, fixed so the golden files are stable


def typical_inputs(**changes: Any) -> PromptInputs:
    """PromptInputs for the typical state; keyword arguments replace fields."""
    fields: dict[str, Any] = {
        "domain": "website",
        "now": NOW,
        "overview": typical_overview(),
        "summary": typical_summary(),
        "constitution": CONSTITUTION,
        "domain_guidance": GUIDANCE,
        "nonce": NONCE,
        "last_run": NoteRef(run_id="r20261128T080000Z-0a1b2c", started_at="2026-11-28T08:00:00Z",
                            first_seq=1, file="20261128T080000Z-website.md", status="completed",
                            prose=True),
        "last_actions": (LastAction("executed", "flag_for_human", "T-3"),
                         LastAction("denied", "update_task_status", "T-5")),
        "pending": (
            ApprovalBrief(id="A-1", operation="create_task", target="W-2",
                          summary="title=Check canonical URLs, workstream_id=W-2", status="pending",
                          reason="no task covers canonical URLs"),
        ),
        "rejected": (
            ApprovalBrief(id="A-0", operation="set_task_status", target="T-6",
                          summary="status=cancelled, task_id=T-6", status="rejected",
                          reason="the sitemap is still needed"),
        ),
    }  # fmt: skip
    fields.update(changes)
    return PromptInputs(**fields)
