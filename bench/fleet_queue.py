"""What does the review page's queue cost for a fleet: 2,000 pending items over 40 domains?

A fleet's memory as its one review page reads it, in `--shards` memory directories (one per
replica of k8s/fleet, each domain in the shard its name hashes to; the page reads them all, as
`custodian review --memory A --memory B ...` in k8s/fleet-page does): 40 domains, each with 50
items waiting (queued by five runs of ten) and a history behind them (`--decided` items per domain
queued and rejected by earlier runs, each with its journal records). The page is read in process,
as the review server renders it (`Views.get`), with no hub configured (a hub's summary read is one
per domain shown, the hub's own cost); each read is timed in process CPU (`time.process_time`)
and its body weighed. Printed: the landing page (page 1, every domain), a later page, one
domain's page, and the first read after a decision (the queue's directory changed).

    python bench/fleet_queue.py                 # 40 domains x 50 pending, 100 decided each
    python bench/fleet_queue.py --decided 400   # a longer history: the page should not notice
    python bench/fleet_queue.py --shards 4      # the same fleet in four shards' memories

Target (issue 39): at most 0.3 s of CPU and 200 KB a page.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from statistics import median

from custodian_runtime.core.approvals.items import ApprovalItem, new_item
from custodian_runtime.core.journal.seals import SealKey
from custodian_runtime.core.plan.extract import fingerprint
from custodian_runtime.journal.person.queue import ApprovalStore
from custodian_runtime.journal.store import JournalStore
from custodian_runtime.review.views import Views
from custodian_runtime.settings import Settings, load_settings
from custodian_runtime.watch._select import shard_of

DOMAINS = 40
PENDING = 50  # per domain: 2,000 in all
PER_RUN = 10
KEY = "bench-seal-key-" + "0" * 32
ROUNDS = 7
CSRF = "0" * 64


class Clock:
    """A clock that moves a minute a read: weeks of runs in a moment."""

    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        self.now += timedelta(minutes=1)
        return self.now


def item_of(domain: str, run: str, n: int, made: datetime) -> ApprovalItem:
    """The nth item a run of `domain` queued."""
    params = {"workstream_id": f"{domain}-ws-1", "title": f"Follow-up {run} {n}"}
    fp = fingerprint("create_task", params)
    return new_item(
        approval_id=f"apr-{fp[:12]}-{n:02d}",
        domain=domain,
        operation="create_task",
        params=params,
        rationale=f"Proposed by {run}: the launch needs follow-up number {n}.",
        run_id=run,
        fingerprint=fp,
        precondition={"workstream": f"{domain}-ws-1", "same_title": []},
        now=made,
        ttl_days=14,
        hub="hub_id:bench",
    )


def domain_history(memory: Path, key: SealKey, domain: str, decided: int, now: datetime) -> None:
    """One domain's journal and queue: `decided` items queued and rejected, then PENDING items
    queued by runs of PER_RUN, the latest a day ago."""
    journals = JournalStore(memory, seal_key=key, fsync=lambda fd: None)
    store = ApprovalStore(memory, key, write_index=False)
    clock = Clock(now - timedelta(days=10))
    runs = (decided + PENDING) // PER_RUN
    for r in range(runs):
        run = f"r{r:04d}-{domain}"
        writer = journals.writer(domain, run, clock, journals.open(domain))
        writer.append("run_started", {"model_spec": "offline"})
        made = clock.now
        items = [item_of(domain, run, n, made) for n in range(PER_RUN)]
        for n, item in enumerate(items):
            writer.append("queued", {"index": n, "approval_id": item.id, "fingerprint": "x"})
        writer.append("note_written", {"path": f"{run}.md", "status": "completed"})
        writer.append("finished", {"status": "completed", "exit_code": 0})
        journals.commit(writer)
        old = r < decided // PER_RUN
        for item in items:
            store.save(_rejected(journals, domain, item, clock) if old else item)


def _rejected(
    journals: JournalStore, domain: str, item: ApprovalItem, clock: Clock
) -> ApprovalItem:
    run = f"approval-{item.id}-bench"
    writer = journals.writer(domain, run, clock, journals.open(domain))
    said = {"approval_id": item.id, "decision": "rejected", "by": "ana", "reason": "not now"}
    writer.append("approval_decided", {**said, "by_source": "typed"})
    journals.commit(writer)
    update = {"status": "rejected", "decided_at": clock.now, "decided_by": "ana"}
    return item.model_copy(update={**update, "reject_reason": "not now"})


def settings_of(memories: list[Path]) -> Settings:
    """The settings `custodian review --memory M [--memory M2 ...]` resolves to, sealed."""
    env = {"CUSTODIAN_SEAL_KEY": KEY}
    flags = {"memory": str(memories[0]), "shard_memory": [str(m) for m in memories]}
    cwd = memories[0].parent
    return load_settings(flags, env, cwd, domain_required=False, hub_required=False)


def timed(read: Callable[[], bytes], rounds: int = ROUNDS) -> tuple[float, int]:
    """The median CPU seconds of `read` (after one warm-up read) and its body's size."""
    size = len(read())
    cpu = []
    for _ in range(rounds):
        started = time.process_time()
        read()
        cpu.append(time.process_time() - started)
    return median(cpu), size


def main() -> None:
    """Build the fleet's memory, then print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decided", type=int, default=100, help="decided items per domain")
    parser.add_argument("--rounds", type=int, default=ROUNDS, help="timed reads of each page")
    parser.add_argument("--shards", type=int, default=1, help="memory directories (replicas)")
    args = parser.parse_args()
    now = datetime.now(UTC)
    with tempfile.TemporaryDirectory() as tmp:
        memories = [Path(tmp) / f"shard-{i}" / "memory" for i in range(args.shards)]
        settings = settings_of(memories)
        assert settings.seal_key is not None
        started = time.perf_counter()
        for d in range(DOMAINS):
            domain = f"shop-{d:02d}"
            home = memories[shard_of(domain, args.shards)]
            domain_history(home, settings.seal_key, domain, args.decided, now)
        built = time.perf_counter() - started
        views = Views(settings)
        total = DOMAINS * (PENDING + args.decided)
        print(
            f"fleet: {DOMAINS} domains in {args.shards} memory "
            f"{'directory' if args.shards == 1 else 'directories'}, "
            f"{DOMAINS * PENDING} pending, {DOMAINS * args.decided} decided ({total} item files), "
            f"sealed; built in {built:.0f} s"
        )
        pages = {
            "landing page (every domain, page 1)": "",
            "page 3 of every domain": "page=3",
            "one domain": "domain=shop-07",
        }
        for label, query in pages.items():
            cpu, size = timed(lambda q=query: views.get("/", CSRF, q).body, args.rounds)  # type: ignore[misc]
            print(f"{label:<38} {cpu * 1000:7.1f} ms CPU  {size / 1024:6.1f} KB")
        store = ApprovalStore(memories[-1], settings.seal_key)

        def after_a_decision() -> bytes:
            item = store.get(next(iter(sorted(store.ids()))), verify=False)
            store.save(item)  # the queue's directory changes, as a decision changes it
            return views.get("/", CSRF, "").body

        cpu, size = timed(after_a_decision, min(3, args.rounds))
        print(
            f"{'first read after a decision':<38} {cpu * 1000:7.1f} ms CPU  {size / 1024:6.1f} KB"
        )
        print("target: at most 300 ms CPU and 200 KB a page")


if __name__ == "__main__":
    main()
