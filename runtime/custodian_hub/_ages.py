"""Seed datasets dated relative to a moment: the shape of `demo.json`, for any seed file.

A record may give a date as an age instead: `created_days_ago`, `updated_days_ago` and
`resolved_days_ago` (days before the moment, `null` for none), `hours_ago` (an event's
`created_at`) and `due_in_days` (a task's `due`, days after it). A decision or flag given
`resolved_days_ago` and no `status` is `open` when that is `null`, else `resolved`; a workstream
given `created_days_ago` and no update time was last updated when its latest task was. A date
given as a date stays as it is, and a top-level `$comment` is dropped.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from custodian_hub._seed import SeedError
from custodian_hub._wire import db_timestamp, to_utc, wire_timestamp

KINDS = ("workstreams", "tasks", "decisions", "events", "flags")

# An age -> the field it dates, and the span one unit of it stands for (negative: before now).
_AGES: dict[str, tuple[str, timedelta]] = {
    "created_days_ago": ("created_at", timedelta(days=-1)),
    "updated_days_ago": ("updated_at", timedelta(days=-1)),
    "resolved_days_ago": ("resolved_at", timedelta(days=-1)),
    "hours_ago": ("created_at", timedelta(hours=-1)),
    "due_in_days": ("due", timedelta(days=1)),
}


def dated(dataset: Mapping[str, Any], now: datetime) -> dict[str, Any]:
    """`dataset` with every age made a date relative to `now`; a bad age is a `SeedError`."""
    now = to_utc(now).replace(microsecond=0)
    out = {key: value for key, value in dataset.items() if key != "$comment"}
    for kind in KINDS:
        if isinstance(out.get(kind), list):
            out[kind] = [_dated_row(row, now, f"{kind}[{i}]") for i, row in enumerate(out[kind])]
    if isinstance(out.get("workstreams"), list):
        tasks = out["tasks"] if isinstance(out.get("tasks"), list) else []
        out["workstreams"] = [
            _updated(ws, tasks) if _aged_without_update(given) else ws
            for given, ws in zip(dataset["workstreams"], out["workstreams"], strict=True)
        ]
    return out


def _dated_row(row: Any, now: datetime, where: str) -> Any:
    if not isinstance(row, dict):
        return row  # the seed's own validation says what is wrong with it
    out = {key: value for key, value in row.items() if key not in _AGES}
    for key, (field, unit) in _AGES.items():
        if key not in row:
            continue
        age = row[key]
        if age is not None and (isinstance(age, bool) or not isinstance(age, int | float)):
            raise SeedError(f"seed data: {where}.{key}: a number (or null), not {age!r}")
        if field in row:
            raise SeedError(f"seed data: {where}: give {field} or {key}, not both")
        out[field] = None if age is None else _when(now + unit * age, field)
    if "resolved_days_ago" in row and "status" not in row:
        out["status"] = "open" if out["resolved_at"] is None else "resolved"
    return out


def _when(moment: datetime, field: str) -> str:
    if field == "due":
        return moment.date().isoformat()
    return wire_timestamp(db_timestamp(moment)) or ""


def _aged_without_update(ws: Any) -> bool:
    return (
        isinstance(ws, dict)
        and "created_days_ago" in ws
        and not {"updated_at", "updated_days_ago"} & ws.keys()
    )


def _updated(ws: dict[str, Any], tasks: list[Any]) -> dict[str, Any]:
    """A workstream was last updated when its most recently changed task was."""
    stamps = [
        t["updated_at"]
        for t in tasks
        if isinstance(t, dict)
        and t.get("workstream_id") == ws.get("id")
        and isinstance(t.get("updated_at"), str)
    ]
    created = ws.get("created_at")
    return {**ws, "updated_at": max([created, *stamps])} if isinstance(created, str) else ws
