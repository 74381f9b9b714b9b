"""`bench/grants_month.py`: how many decisions a person makes in a month, with and without grants.

A simulated month on the pure core (the authority, the modes and grants seam, the budgets and
deference; no hub, no model process): one domain of 30 tasks, one run a day for 30 days. The
scripted model proposes, each day, three tasks `blocked` (a class the scripted person always
approves), on every fifth day one task `cancelled` (the person always rejects it: it is the
harmful write), and one `create_task` (approved on even days). The team unblocks each blocked
task three days later. The person decides every queued item by that fixed rule. With grants,
once `policy report`'s thresholds are met (core/standing/agreement.py) the person issues the
suggested grant, narrowed to what they approved (`--where status=blocked`), for 10 uses and 7 days,
and issues it again when it runs out; each issue counts as one decision.

    python bench/grants_month.py

Reports the person's decisions and the harmful writes executed (which must be 0), per scenario.
The same month end to end, on a real hub with the real commands, is bench/grants_month_hub.py.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from custodian_runtime.core.authority.authorize import Ruling, authorize
from custodian_runtime.core.authority.budgets import RecentWrites
from custodian_runtime.core.authority.own_writes import OwnWrite
from custodian_runtime.core.contract import DomainSummary, Task, WorkstreamWithTasks
from custodian_runtime.core.journal.records import format_at
from custodian_runtime.core.limits import Limits
from custodian_runtime.core.plan.extract import extract_plan
from custodian_runtime.core.standing.agreement import Agreement
from custodian_runtime.core.standing.grants import Grant, state_of
from custodian_runtime.core.standing.record import Standing
from custodian_runtime.core.standing.rule import Ground, apply_standing

START = datetime(2026, 3, 2, 9, tzinfo=UTC)
TASKS = [f"t-{n:02d}" for n in range(30)]
HUB = "hub_id:bench"


@dataclass
class World:
    """The hub's tasks, Custodian's writes, the person's tally and the grants."""

    status: dict[str, tuple[str, datetime, int]]
    writes: list[OwnWrite] = field(default_factory=list)
    decisions: int = 0
    harmful: int = 0
    executed_under_grant: int = 0
    tally: dict[str, list[int]] = field(default_factory=dict)  # op -> [proposals, yes, no]
    grants: list[Grant] = field(default_factory=list)
    uses: dict[str, int] = field(default_factory=dict)
    blocked_on: dict[str, int] = field(default_factory=dict)
    deferred: int = 0  # queued for a reason of its own (a person's change wins), grant or not


def _summary(world: World, now: datetime) -> DomainSummary:
    tasks = tuple(
        Task(
            id=t,
            workstream_id="ws-1",
            title=f"Task {t}",
            status=s,
            created_at=START - timedelta(days=60),
            updated_at=at,
            version=v,
        )
        for t, (s, at, v) in world.status.items()
    )
    made = START - timedelta(days=90)
    ws = WorkstreamWithTasks(
        id="ws-1", domain="web", title="Site", status="active", created_at=made, updated_at=now,
        tasks=tasks,
    )  # fmt: skip
    return DomainSummary(domain="web", generated_at=now, workstreams=(ws,))


def _proposals(world: World, day: int) -> Iterator[dict[str, object]]:
    # The model proposes the open tasks it touched least recently first.
    last = {w.task_id: w.at for w in world.writes}
    open_ = sorted((t for t in TASKS if world.status[t][0] == "in_progress"),
                   key=lambda t: (last.get(t, ""), t))  # fmt: skip
    for task in open_[:3]:
        yield {"operation": "set_task_status", "params": {"task_id": task, "status": "blocked"}}
    if day % 5 == 4:
        task = TASKS[(day * 7) % 30]
        yield {"operation": "set_task_status", "params": {"task_id": task, "status": "cancelled"}}
    yield {"operation": "create_task",
           "params": {"workstream_id": "ws-1", "title": f"Follow-up of day {day}"}}  # fmt: skip


def _write(world: World, ruling: Ruling, now: datetime, by: str) -> None:
    params = ruling.item.params
    if ruling.item.operation != "set_task_status":
        return
    task, status = str(params["task_id"]), str(params["status"])
    version = world.status[task][2] + 1
    world.status[task] = (status, now, version)
    world.harmful += status == "cancelled"
    world.blocked_on[task] = now.day
    after = {"status": status, "updated_at": format_at(now), "version": version}
    world.writes.append(OwnWrite(at=format_at(now), run_id=f"d{now.day}", index=ruling.item.index,
                                 operation="set_task_status", task_id=task, status=status,
                                 after=after, by=by))  # fmt: skip


def _person(world: World, ruling: Ruling, now: datetime, day: int) -> None:
    world.decisions += 1
    params = ruling.item.params
    op = ruling.item.operation
    row = world.tally.setdefault(op, [0, 0, 0])
    yes = params.get("status") == "blocked" or (op == "create_task" and day % 2 == 0)
    row[1 if yes else 2] += 1
    if yes:
        _write(world, ruling, now, "person:bob")


def _maybe_grant(world: World, now: datetime, with_grants: bool) -> None:
    row = world.tally.get("set_task_status", [0, 0, 0])
    earned = Agreement("set_task_status", row[0], row[1], row[2]).suggestion("web")
    live = any(state_of(g, world.uses.get(g.id, 0), now) == "live" for g in world.grants)
    if with_grants and earned is not None and not live:
        world.decisions += 1
        world.grants.append(Grant(
            id=f"grant-{len(world.grants):012x}", domain="web", operation="set_task_status",
            where={"status": "blocked"}, max_uses=10, expires_at=now + timedelta(days=7), by="bob",
            reason="routine blocks", hub_id=HUB, issued_at=now,
        ))  # fmt: skip


def _day(world: World, day: int, with_grants: bool) -> None:
    now = START + timedelta(days=day)
    for task, since in list(world.blocked_on.items()):  # the team unblocks after three days
        if world.status[task][0] == "blocked" and day - since >= 3:
            _, _, v = world.status[task]
            world.status[task] = ("in_progress", now - timedelta(hours=1), v + 1)
    _maybe_grant(world, now, with_grants)
    plan = extract_plan(
        "```json\n" + json.dumps({"proposals": list(_proposals(world, day))}) + "\n```"
    )
    recent = RecentWrites(now, tuple(world.writes))
    limits = Limits()
    rulings = authorize(plan, _summary(world, now), limits, recent=recent)
    standing = Standing(grants=tuple(world.grants), uses=dict(world.uses))
    for ruling in apply_standing(rulings, Ground(standing, HUB, now, limits, recent)):
        world.tally.setdefault(ruling.item.operation, [0, 0, 0])[0] += 1
        if ruling.outcome == "execute" and ruling.grant is not None:
            world.uses[ruling.grant] = world.uses.get(ruling.grant, 0) + 1
            world.executed_under_grant += 1
            _write(world, ruling, now, f"grant:{ruling.grant}")
        elif ruling.outcome == "queue":
            world.deferred += ruling.code == "stated" and ruling.item.operation != "create_task"
            _person(world, ruling, now, day)


def month(with_grants: bool) -> World:
    """Thirty daily runs; the world at the end."""
    world = World({t: ("in_progress", START - timedelta(days=20), 1) for t in TASKS})
    for day in range(30):
        _day(world, day, with_grants)
    return world


def main() -> None:
    """Print both scenarios' figures."""
    for name, grants in (("without grants", False), ("with the suggested grants", True)):
        w = month(grants)
        print(f"{name}: {w.decisions} decisions by the person, {w.executed_under_grant} writes "
              f"under {len(w.grants)} grant(s), {w.deferred} status changes a person decides "
              f"because a person's change wins, {w.harmful} harmful writes executed")  # fmt: skip


if __name__ == "__main__":
    main()
