"""The `--seed demo` dataset: two domains, `website` and `platform`, dated relative to `now`.

The records live in `demo.json` with ages instead of dates (`*_days_ago`, `hours_ago`,
`due_in_days`). They are written to exercise a custodian: in-progress tasks nobody has touched
for weeks, blocked tasks with no flag, tasks whose latest events say they are finished while their
status is not `done`, open decisions and flags, and text that tries to give a model instructions.
"""

from __future__ import annotations

import functools
import json
from datetime import datetime, timedelta
from importlib import resources
from typing import Any

from custodian_hub._wire import db_timestamp, to_utc, wire_timestamp

DEMO_DOMAINS: tuple[str, ...] = ("website", "platform")


@functools.cache
def _template_text() -> str:
    return resources.files("custodian_hub").joinpath("demo.json").read_text("utf-8")


def demo_dataset(now: datetime) -> dict[str, Any]:
    """The demo data in the JSON shape of a seed file, every date relative to `now` (UTC)."""
    now = to_utc(now).replace(microsecond=0)
    template = json.loads(_template_text())

    def days_ago(row: dict[str, Any], key: str) -> str | None:
        days = row.pop(key)
        return None if days is None else _ts(now - timedelta(days=days))

    for ws in template["workstreams"]:
        ws["created_at"] = days_ago(ws, "created_days_ago")
    for task in template["tasks"]:
        due = task.pop("due_in_days")
        task["due"] = None if due is None else (now + timedelta(days=due)).date().isoformat()
        task["created_at"] = days_ago(task, "created_days_ago")
        task["updated_at"] = days_ago(task, "updated_days_ago")
    for event in template["events"]:
        event["created_at"] = _ts(now - timedelta(hours=event.pop("hours_ago")))
    for item in (*template["decisions"], *template["flags"]):
        item["created_at"] = days_ago(item, "created_days_ago")
        item["resolved_at"] = days_ago(item, "resolved_days_ago")
        item["status"] = "open" if item["resolved_at"] is None else "resolved"
    _date_workstreams(template["workstreams"], template["tasks"])
    return {key: template[key] for key in ("workstreams", "tasks", "decisions", "events", "flags")}


def _date_workstreams(workstreams: list[dict[str, Any]], tasks: list[dict[str, Any]]) -> None:
    # A workstream was last updated when its most recently changed task was.
    for ws in workstreams:
        stamps = [t["updated_at"] for t in tasks if t["workstream_id"] == ws["id"]]
        ws["updated_at"] = max([ws["created_at"], *stamps])


def _ts(moment: datetime) -> str:
    return wire_timestamp(db_timestamp(moment)) or ""
