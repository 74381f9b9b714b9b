"""The sections of the observed state in the prompt: one table, in the order they are shown.

Each section's heading, the words that count its items, and the columns its data block's opening
marker names are declared here once; `context` and `context._items` read them from this table.
"""

from __future__ import annotations

from dataclasses import dataclass

TASK_COLUMNS = (
    "id workstream updated_days last_event_days due flag | assignee | title | description"
)


@dataclass(frozen=True)
class PromptSection:
    """One section: its key, heading, singular and plural nouns, and its data block's columns."""

    key: str
    heading: str
    singular: str
    plural: str
    columns: str


PROMPT_SECTIONS: tuple[PromptSection, ...] = (
    PromptSection("workstreams", "Workstreams", "workstream", "workstreams",
                  "id status todo in_progress blocked done cancelled | owner | title"),
    PromptSection("in_progress", "In-progress tasks (longest idle first)", "in-progress task",
                  "in-progress tasks",
                  "id workstream updated_days last_event_days stale due flag | assignee | title "
                  "| description"),
    PromptSection("blocked", "Blocked tasks (longest blocked first)", "blocked task",
                  "blocked tasks", TASK_COLUMNS),
    PromptSection("todo", "Todo tasks (due soonest, then oldest, first)", "todo task",
                  "todo tasks", TASK_COLUMNS),
    PromptSection("decisions", "Open decisions (oldest first)", "open decision",
                  "open decisions", "id workstream age_days | title | context | options"),
    PromptSection("flags", "Open flags (oldest first)", "open flag", "open flags",
                  "id task workstream age_days | raised_by | note"),
    PromptSection("events", "Recent events (newest first)", "event", "events",
                  "id age_days type workstream task | source | summary"),
    PromptSection("pending",
                  "Pending approvals (waiting for a person; do not propose these again)",
                  "pending approval", "pending approvals",
                  "id operation | target | summary | rationale"),
    PromptSection("rejected", "Recently rejected proposals (do not propose these again)",
                  "rejected proposal", "rejected proposals",
                  "id operation | target | summary | reason"),
    PromptSection("closed", "Done or cancelled tasks (most recently updated first)",
                  "done or cancelled task", "done or cancelled tasks", "id status | title"),
)  # fmt: skip
