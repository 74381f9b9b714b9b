"""The hand-built state the context and prompt tests share (support/context.py)."""

from __future__ import annotations

from support.context import typical_summary


def test_the_typical_state_has_one_task_of_each_interesting_kind() -> None:
    statuses = sorted(t.status for ws in typical_summary().workstreams for t in ws.tasks)
    assert statuses == [
        "blocked",
        "cancelled",
        "done",
        "in_progress",
        "in_progress",
        "todo",
        "todo",
    ]
