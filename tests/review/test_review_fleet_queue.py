"""One queue for a fleet at the cost of the page: the review page shows every domain's pending
items a page at a time, reads again only the item files that changed, and believes the journal
over a file (bench/fleet_queue.py measures 2,000 items over 40 domains)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx

from custodian_runtime.core.approvals.items import ApprovalItem, new_item
from custodian_runtime.core.plan.extract import fingerprint
from custodian_runtime.journal.person.queue import ApprovalStore
from custodian_runtime.journal.store import JournalStore
from custodian_runtime.review.queue import PAGE_SIZE, Filter, queue
from custodian_runtime.review.waiting import Waiting, WaitingItems
from custodian_runtime.settings import load_settings
from support.review import review_page

NOW = datetime.now(UTC)


class Clock:
    def __init__(self) -> None:
        self.now = NOW - timedelta(days=1)

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


def _item(domain: str, run: str, n: int, made: datetime) -> ApprovalItem:
    params = {"workstream_id": f"{domain}-ws", "title": f"Task {run} {n}"}
    fp = fingerprint("create_task", params)
    return new_item(
        approval_id=f"apr-{fp[:12]}", domain=domain, operation="create_task", params=params,
        rationale="Needed.", run_id=run, fingerprint=fp,
        precondition={"workstream": f"{domain}-ws", "same_title": []}, now=made, ttl_days=14,
    )  # fmt: skip


def _fleet(memory: Path, domains: dict[str, int]) -> dict[str, list[ApprovalItem]]:
    """Items queued by one run per domain, journaled as a run journals them; the items by domain."""
    journals, store, clock = JournalStore(memory), ApprovalStore(memory), Clock()
    found = {}
    for domain, count in domains.items():
        run = f"r-{domain}"
        writer = journals.writer(domain, run, clock, journals.open(domain))
        items = [_item(domain, run, n, clock()) for n in range(count)]
        # Journaled in reverse: the plan's order is the journal's, not the files' times.
        for n, item in reversed(list(enumerate(items))):
            writer.append("queued", {"index": n, "approval_id": item.id, "fingerprint": "x"})
        journals.commit(writer)
        for item in items:
            store.save(item)
        found[domain] = items
    return found


def _reject_in_journal(memory: Path, item: ApprovalItem) -> None:
    """The journal decides the item; its file is not rewritten (as after a crash between)."""
    journals = JournalStore(memory)
    writer = journals.writer(
        item.domain, f"approval-{item.id}-x", Clock(), journals.open(item.domain)
    )
    said = {"approval_id": item.id, "decision": "rejected", "by": "ana", "reason": "No."}
    writer.append("approval_decided", said)
    journals.commit(writer)


class CountingStore(ApprovalStore):
    """The store, counting the item files read one by one."""

    reads = 0

    def get(self, approval_id: str, *, verify: bool = True) -> ApprovalItem:
        CountingStore.reads += 1
        return super().get(approval_id, verify=verify)


def test_the_queue_is_shown_a_page_at_a_time_over_every_domain(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    fleet = _fleet(memory, {"alpha": PAGE_SIZE - 5, "beta": 8, "gamma": 2})
    settings = load_settings(
        {"memory": str(memory)}, {}, tmp_path, domain_required=False, hub_required=False
    )
    with review_page(settings) as server, httpx.Client(timeout=10) as client:
        client.get(server.url)
        base = f"http://{server.address}"
        first = client.get(f"{base}/").text
        second = client.get(f"{base}/?page=2").text
        beyond = client.get(f"{base}/?page=9").text  # past the last page: the last page
        one = client.get(f"{base}/?domain=beta").text
    every = {i.id for items in fleet.values() for i in items}
    shown = [set(re.findall(r"apr-[0-9a-f]{12}", page)) & every for page in (first, second)]
    assert len(shown[0]) == PAGE_SIZE and len(shown[1]) == len(every) - PAGE_SIZE
    assert shown[0].isdisjoint(shown[1]) and shown[0] | shown[1] == every
    assert "Page 1 of 2" in first and 'href="/?page=2" rel="next"' in first
    assert "Page 2 of 2" in second and 'href="/" rel="prev"' in second
    assert "Page 2 of 2" in beyond
    assert set(re.findall(r"apr-[0-9a-f]{12}", one)) & every == {i.id for i in fleet["beta"]}
    assert "Page 1 of" not in one
    # The nav counts every domain's items, whatever the page shows.
    assert re.search(r'data-domain-count="gamma">gamma <span class="count">2<', second)


def test_a_page_reads_again_only_what_changed_and_believes_the_journal(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    fleet = _fleet(memory, {"alpha": 6, "beta": 4})
    store = CountingStore(memory)
    waiting = WaitingItems()
    first = waiting.pending(store, NOW)
    assert CountingStore.reads == 10 and len(first.items) == 10
    # The plan's order is the journal's: alpha's items were journaled last to first.
    alpha = [i.id for i in fleet["alpha"]]
    assert sorted(alpha, key=lambda i: first.order[i]) == alpha[::-1]
    CountingStore.reads = 0
    again = waiting.pending(store, NOW)
    assert CountingStore.reads == 0 and again.items == first.items
    decided = fleet["beta"][0]
    _reject_in_journal(memory, decided)
    after = waiting.pending(store, NOW)
    assert decided.id not in {i.id for i in after.items} and len(after.items) == 9
    # The file the journal decided is rewritten from the journal, and only it is read again.
    assert ApprovalStore(memory).get(decided.id).status == "rejected"
    CountingStore.reads = 0
    assert len(waiting.pending(store, NOW).items) == 9 and CountingStore.reads == 1


def test_pages_of_a_filter_hold_every_kept_item_once() -> None:
    items = tuple(
        _item(d, "r", n, NOW - timedelta(minutes=n)) for d in ("a", "b") for n in range(50)
    )
    waiting = Waiting(tuple(sorted(items, key=lambda i: (i.created_at, i.id))), {})
    pages = [queue(waiting, Filter(page=p)) for p in (1, 2, 3)]
    assert [len(p.items) for p in pages] == [PAGE_SIZE, PAGE_SIZE, 100 - 2 * PAGE_SIZE]
    assert len({i.id for p in pages for i in p.items}) == 100
    only_b = queue(waiting, Filter(domain="b", page=2))
    assert only_b.kept == 50 and {i.domain for i in only_b.items} == {"b"}
    assert only_b.counts == (("a", 50), ("b", 50)) and only_b.total == 100
    assert Filter.parse("page=0").page == 1 and Filter.parse("page=x").page == 1
    assert Filter(domain="b", page=3).query == "?domain=b&page=3"
