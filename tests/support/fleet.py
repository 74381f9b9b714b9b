"""A fleet of small domains on a reference hub: `d0000` ... each one workstream and two tasks."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from custodian_hub import load_seed


def fleet_names(count: int) -> list[str]:
    """The domains' names, in order: d0000, d0001, ..."""
    return [f"d{i:04}" for i in range(count)]


def fleet_dataset(count: int, now: datetime | None = None) -> dict[str, Any]:
    """`count` small domains: one active workstream, a todo task and one in progress each."""
    now = now or datetime.now(UTC)

    def ts(days: float) -> str:
        return (now - timedelta(days=days)).replace(microsecond=0).isoformat()

    workstreams, tasks = [], []
    for n, name in enumerate(fleet_names(count)):
        ws = f"{name}-ws"
        workstreams.append({"id": ws, "domain": name, "title": f"Keep {name} tidy",
                            "status": "active", "owner": "ana", "created_at": ts(40),
                            "updated_at": ts(1)})  # fmt: skip
        for k, status in enumerate(("todo", "in_progress")):
            tasks.append({"id": f"{name}-t{k}", "workstream_id": ws, "title": f"Task {k} of {name}",
                          "description": "", "status": status, "created_at": ts(30),
                          "updated_at": ts(1 + (n % 7))})  # fmt: skip
    return {"workstreams": workstreams, "tasks": tasks}


def seed_fleet(db: Path, count: int) -> list[str]:
    """Seed `db` with `count` small domains; their names."""
    load_seed(db, fleet_dataset(count))
    return fleet_names(count)
