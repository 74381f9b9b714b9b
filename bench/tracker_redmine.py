"""`make bench` (Redmine part): what a contract request costs on a real Redmine, against the
reference hub over loopback.

A Redmine from Debian's package is started on 127.0.0.1 as the tests start it
(tests/support/redmine.py: a copy of the database the package made); one domain gets 11 tasks and
10 events. Then, 10 times each, on Redmine and on a reference hub: an event write, a status write,
a replayed write (the same key again), a domain summary, and a 304 (the summary asked with its
revision). Medians in ms, and Redmine's start.

    python bench/tracker_redmine.py
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from custodian_hub import ReferenceHub  # noqa: E402
from custodian_runtime.clock import utc_now  # noqa: E402
from custodian_runtime.core.contract import (  # noqa: E402
    NewEvent,
    NewTask,
    NewWorkstream,
    TaskStatusUpdate,
)
from custodian_runtime.settings import HubSettings  # noqa: E402
from custodian_runtime.statehub import StateHubClient  # noqa: E402
from custodian_runtime.statehub.connect import open_hub  # noqa: E402
from support.redmine import INSTALL, REDMINE, redmine_server  # noqa: E402

TIMES = 10


def _ms(step: Callable[[int], object]) -> float:
    took = []
    for n in range(TIMES):
        start = time.perf_counter()
        step(n)
        took.append((time.perf_counter() - start) * 1000)
    return statistics.median(took)


def _figures(client: StateHubClient, domain: str) -> dict[str, float]:
    ws = client.create_workstream(
        NewWorkstream(domain=domain, title="Site"), idempotency_key=f"{domain}-w"
    )
    w = ws.resource.id
    tasks = [
        client.create_task(
            NewTask(workstream_id=w, title=f"Task {n}"), idempotency_key=f"{domain}-t{n}"
        ).resource.id
        for n in range(11)
    ]

    def event(n: int) -> object:
        made = NewEvent(workstream_id=w, event_type="note", summary=f"Event {n}", source="bench")
        return client.add_event(made, idempotency_key=f"{domain}-e{n}")

    def status(n: int) -> object:
        moved = TaskStatusUpdate(status="in_progress")
        return client.update_task_status(tasks[n], moved, idempotency_key=f"{domain}-s{n}")

    def replay(n: int) -> object:
        moved = TaskStatusUpdate(status="in_progress")
        return client.update_task_status(tasks[n], moved, idempotency_key=f"{domain}-s{n}")

    figures = {
        "event write": _ms(event),
        "status write": _ms(status),
        "replayed write": _ms(replay),
    }
    figures["domain summary"] = _ms(lambda n: client.domain_summary(domain))
    revision = client.domain_summary(domain).revision
    figures["304"] = _ms(lambda n: client.domain_summary(domain, if_none_match=revision))
    return figures


def main() -> None:
    if not (REDMINE / "config.ru").is_file():
        print(f"Redmine is not installed: no Redmine figures (install it with {INSTALL})")
        return
    with tempfile.TemporaryDirectory(prefix="bench-redmine-") as tmp:
        root = Path(tmp)
        start = time.perf_counter()
        with redmine_server(root) as redmine:
            started = time.perf_counter() - start
            hub = HubSettings(url=redmine.hub_url, max_attempts=1)
            with open_hub(hub, root, utc_now) as client:
                on_redmine = _figures(client, "bench")
        with (
            ReferenceHub(root / "hub.sqlite3") as reference,
            open_hub(HubSettings(url=reference.url, max_attempts=1), root, utc_now) as client,
        ):
            on_hub = _figures(client, "bench")
    print(f"Redmine started (a copy of the installed database, listening) in {started:.1f} s")
    print(f"median of {TIMES}, ms: {'':18} Redmine  reference hub")
    for name, value in on_redmine.items():
        print(f"  {name:32} {value:8.0f} {on_hub[name]:14.1f}")


if __name__ == "__main__":
    main()
