"""`make bench` (tracker part): what each contract operation costs on Roundup and on the hub.

A reference hub on loopback (served in this process) and a real Roundup tracker (roundup-server,
Custodian's schema and detector, as the tests make it: tests/support/roundup.py) get the same
domain: one workstream, 11 tasks and 10 events, written through the contract's client. Then, in
rounds, each operation runs on both back to back, alternating which goes first:

- an event write (`POST /events`, a new key), a status write (`PATCH /tasks/{id}` with
  `If-Match`), the same event write sent again (replayed by its key), a domain summary, and the
  summary again with `If-None-Match` (304).

It prints, per operation and backend, the median and the slowest wall time, and how many
requests the client's transport sent (on Roundup: requests to the tracker), and what a bare
request costs the tracker (one it refuses to an anonymous user). Nothing is asserted.

    python bench/tracker.py               # 10 rounds
    python bench/tracker.py --rounds 30

Without Roundup installed (`pip install roundup`, in the dev lock) it prints one line and stops.
"""

from __future__ import annotations

import argparse
import importlib.util
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx

from custodian_hub import ReferenceHub
from custodian_runtime.clock import utc_now
from custodian_runtime.core.contract import NewEvent, NewTask, NewWorkstream, TaskStatusUpdate
from custodian_runtime.settings import HubSettings
from custodian_runtime.statehub import NotModified, StateHubClient
from custodian_runtime.statehub.connect import open_hub

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
DOMAIN = "bench"
OPERATIONS = ("event write", "status write", "replayed write", "summary", "304")


class Counting(httpx.BaseTransport):
    """The network, counting the requests sent through it."""

    def __init__(self) -> None:
        self.inner, self.sent = httpx.HTTPTransport(), 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.sent += 1
        return self.inner.handle_request(request)

    def close(self) -> None:
        self.inner.close()


class Side:
    """One backend's client on the bench domain, and what each operation costs on it."""

    def __init__(self, name: str, client: StateHubClient, counting: Counting) -> None:
        self.name, self.client, self.counting = name, client, counting
        self.times: dict[str, list[float]] = {op: [] for op in OPERATIONS}
        self.requests: dict[str, list[int]] = {op: [] for op in OPERATIONS}
        self.keys = iter(range(1_000_000))
        self.workstream, self.tasks = self._seed()
        self.versions = {task: 1 for task in self.tasks}
        self.last_event: tuple[NewEvent, str] | None = None
        self.revision: int | None = None

    def _key(self) -> str:
        return f"bench-{self.name}-{next(self.keys)}"

    def _seed(self) -> tuple[str, list[str]]:
        ws = NewWorkstream(domain=DOMAIN, title="Bench")
        w = self.client.create_workstream(ws, idempotency_key=self._key()).resource.id
        tasks = [
            self.client.create_task(
                NewTask(workstream_id=w, title=f"Task {n}"), idempotency_key=self._key()
            ).resource.id
            for n in range(11)
        ]
        for n in range(10):
            self.client.add_event(self._event(w, tasks[n], n), idempotency_key=self._key())
        return w, tasks

    @staticmethod
    def _event(w: str, task: str, n: int) -> NewEvent:
        return NewEvent(workstream_id=w, task_id=task, event_type="note",
                        summary=f"Note {n}.", source="custodian")  # fmt: skip

    def run(self, op: str, n: int) -> None:
        """One operation, timed and its requests counted."""
        before, start = self.counting.sent, time.perf_counter()
        self._do(op, n)
        self.times[op].append(time.perf_counter() - start)
        self.requests[op].append(self.counting.sent - before)

    def _do(self, op: str, n: int) -> None:
        if op == "event write":
            event, key = self._event(self.workstream, self.tasks[n % 11], 100 + n), self._key()
            assert not self.client.add_event(event, idempotency_key=key).replayed
            self.last_event = (event, key)
        elif op == "status write":
            task = self.tasks[n % 11]
            status = TaskStatusUpdate(status="in_progress" if n // 11 % 2 == 0 else "todo")
            made = self.client.update_task_status(
                task, status, idempotency_key=self._key(), if_match=self.versions[task]
            )
            self.versions[task] = made.resource.version or 0
        elif op == "replayed write":
            assert self.last_event is not None
            event, key = self.last_event
            assert self.client.add_event(event, idempotency_key=key).replayed
        elif op == "summary":
            self.revision = self.client.domain_summary(DOMAIN).revision
        else:
            answer = self.client.domain_summary(DOMAIN, if_none_match=self.revision)
            assert isinstance(answer, NotModified)


@contextmanager
def side(name: str, url: str) -> Iterator[Side]:
    """A client of `url` through a counting transport, and the bench domain seeded on it."""
    counting = Counting()
    settings = HubSettings(url=url, max_attempts=1)
    with counting, open_hub(settings, Path("."), utc_now, transport=counting) as client:
        yield Side(name, client, counting)


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f}"


def report(sides: list[Side], rounds: int) -> None:
    """The figures: per operation and backend, median and slowest ms, and requests sent."""
    print(f"tracker bench: {rounds} rounds, 11 tasks and 10 events in the domain at the start")
    print(f"  machine: {platform.python_implementation()} {platform.python_version()}, "
          f"{platform.machine()}")  # fmt: skip
    header = f"  {'operation':<16}" + "".join(f"{s.name:>30}" for s in sides)
    print(header + "   ratio")
    for op in OPERATIONS:
        cells, medians = [], []
        for s in sides:
            median = statistics.median(s.times[op])
            medians.append(median)
            requests = statistics.median(s.requests[op])
            cells.append(
                f"{_ms(median):>8} ms (max {_ms(max(s.times[op])):>6}), {requests:>3.0f} req"
            )
        ratio = medians[-1] / medians[0] if medians[0] else float("inf")
        print(f"  {op:<16}" + "".join(f"{c:>30}" for c in cells) + f"   {ratio:5.0f}x")


def bench(rounds: int, root: Path) -> None:
    """Both backends, the same domain, the same operations in alternating pairs."""
    from support.roundup import roundup_tracker  # tests/: how the tests make a tracker

    with ExitStack() as stack:
        hub = stack.enter_context(ReferenceHub(root / "hub.sqlite3"))
        (root / "roundup").mkdir()
        tracker = stack.enter_context(roundup_tracker(root / "roundup"))
        pair = [
            stack.enter_context(side("reference hub", hub.url)),
            stack.enter_context(side("Roundup", tracker.hub_url)),
        ]
        for n in range(rounds):
            for op in OPERATIONS:
                order: Callable[[list[Any]], Any] = list if n % 2 == 0 else reversed
                for s in order(pair):
                    s.run(op, n)
        report(pair, rounds)
        bare = bare_request(tracker.web, rounds)
        print(f"  one bare tracker request (GET /rest, refused to anonymous): {_ms(bare)} ms")


def bare_request(web: str, rounds: int) -> float:
    """The median wall time of a request the tracker refuses: what any request costs it."""
    origin = web.rsplit("/", 1)[0]
    headers = {"X-Requested-With": "rest", "Origin": origin, "Referer": f"{web}/"}
    times = []
    with httpx.Client(headers=headers, timeout=10) as http:
        for _ in range(rounds):
            start = time.perf_counter()
            http.get(f"{web}/rest")
            times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    """Parse the arguments and run the bench, or say in one line why it cannot run."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args(argv)
    if importlib.util.find_spec("roundup") is None:
        print("tracker bench: skipped, Roundup is not installed (pip install roundup)")
        return 0
    with tempfile.TemporaryDirectory() as root:
        Path(root).chmod(0o755)  # roundup-server runs as nobody when this runs as root
        bench(args.rounds, Path(root))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
