"""What reading a person's standing again at each write costs a run (the one ruling, in flight).

Before each write a run rules it again (`core.ruling.path.rule_write`) with the standing read
through `StandingStore.kept_standing`. This prints, per write: that ruling on a domain of 30
tasks, and the read of the kept decisions with no `memory/inbox/<domain>/` directory, with an
empty one (the usual case once a kept decision was carried out), and with 10 kept decisions;
beside them,
the ruling of a whole plan of 20 writes once. Nothing here asserts a target.

    python bench/standing_per_write.py            # 2,000 repetitions
    python bench/standing_per_write.py --times 500

Target: ruling one write again and reading an empty directory together well under a millisecond.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from custodian_runtime.core.authority.budgets import RecentWrites
from custodian_runtime.core.contract import DomainSummary
from custodian_runtime.core.journal.kinds import PolicySet
from custodian_runtime.core.plan.extract import Plan, ProposedItem, fingerprint
from custodian_runtime.core.ruling.path import Grounds, rule_plan, rule_write
from custodian_runtime.core.standing.record import Standing
from custodian_runtime.journal.lock import RunLock
from custodian_runtime.journal.person.standing_store import StandingStore

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def _summary(tasks: int) -> DomainSummary:
    at = NOW - timedelta(days=2)
    rows = [{"id": f"t-{i}", "workstream_id": "ws-1", "title": f"Task {i}", "description": "",
             "status": "in_progress", "assignee": None, "due": None, "created_at": at,
             "updated_at": at, "version": 1} for i in range(tasks)]  # fmt: skip
    workstream = {"id": "ws-1", "domain": "d", "title": "W", "status": "active", "owner": None,
                  "created_at": at, "updated_at": at, "tasks": rows}  # fmt: skip
    return DomainSummary.model_validate({"domain": "d", "generated_at": NOW,
                                         "workstreams": [workstream]})  # fmt: skip


def _events(n: int) -> tuple[ProposedItem, ...]:
    items = []
    for i in range(n):
        params = {
            "workstream_id": "ws-1",
            "event_type": "note",
            "rests_on": ["t-1"],
            "summary": f"Note {i}.",
        }
        fp = fingerprint("add_progress_event", params)
        item = ProposedItem(index=i, section="progress_events", operation="add_progress_event",
                            params=params, reason="r", error=None, fingerprint=fp)  # fmt: skip
        items.append(item)
    return tuple(items)


def _per_call(times: int, call: Callable[[], object]) -> float:
    start = time.perf_counter()
    for _ in range(times):
        call()
    return (time.perf_counter() - start) / times * 1e6


def main(argv: list[str] | None = None) -> int:
    """Measure and print the figures, in microseconds per call."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--times", type=int, default=2000)
    times = parser.parse_args(argv).times
    observed, items = _summary(30), _events(20)
    grounds = Grounds(recent=RecentWrites(NOW, ()), now=NOW)
    plan = Plan(prose="", observations=(), items=items, raw_json="")
    figures = {
        "rule one write again (rule_write)": _per_call(
            times, lambda: rule_write(items[0], observed, grounds=grounds)
        ),
        "rule a plan of 20 writes once (rule_plan)": _per_call(
            max(1, times // 20), lambda: rule_plan(plan, observed, grounds)
        ),
    }
    with tempfile.TemporaryDirectory() as tmp:
        store = StandingStore(Path(tmp))
        figures["kept_standing, no directory"] = _per_call(
            times, lambda: store.kept_standing("d", Standing())
        )
        store.inbox.directory("d").mkdir(parents=True)
        figures["kept_standing, empty directory"] = _per_call(
            times, lambda: store.kept_standing("d", Standing())
        )
        with RunLock(Path(tmp), "d", run_id="r-busy"):
            for i in range(10):
                store.record("d", PolicySet(operation="add_progress_event", mode="off",
                                            by="ana", reason=f"kept {i}"))  # fmt: skip
        figures["kept_standing, 10 kept decisions"] = _per_call(
            max(1, times // 10), lambda: store.kept_standing("d", Standing())
        )
    for name, micros in figures.items():
        print(f"{name:45} {micros:10.1f} us")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
