"""Resolved approval items leave the hot path: a run reads the domain's index, not every item.

The index (`approvals/index/<domain>.json`) is derived from the item files: a file whose stamp
changed is read again and verified; with a seal key an edited index is rebuilt, an unsealed item
anywhere in the queue still stops the run; `journal prune` removes decided items past their
windows.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from custodian_hub import ReferenceHub
from custodian_runtime.core.approvals.items import (
    RECENTLY_REJECTED,
    ApprovalItem,
    history_for,
    new_item,
    prunable,
)
from custodian_runtime.core.journal.seals import SealKey
from custodian_runtime.core.plan.extract import fingerprint
from custodian_runtime.errors import SealError
from custodian_runtime.journal.person.queue import ApprovalStore
from support.runs import run_cli, run_plan

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
KEY = SealKey("k" * 40)


def _item(n: int, status: str, *, days_ago: float = 2, domain: str = "website") -> ApprovalItem:
    params = {"workstream_id": "web-ws-1", "title": f"Task number {n}"}
    fp = fingerprint("create_task", params)
    made = NOW - timedelta(days=days_ago)
    item = new_item(
        approval_id=f"apr-{fp[:12]}",
        domain=domain,
        operation="create_task",
        params=params,
        rationale=f"because {n}",
        run_id="r1",
        fingerprint=fp,
        precondition={"domain": domain},
        now=made,
        ttl_days=14,
    )
    if status == "pending":
        return item
    decided = {"decided_at": made + timedelta(hours=1), "decided_by": "ana"}
    if status == "rejected":
        decided["reject_reason"] = f"not {n}"
    return item.model_copy(update={"status": status, **decided})


def _queue(store: ApprovalStore) -> list[ApprovalItem]:
    items = [_item(n, "executed") for n in range(40)]
    items += [_item(40 + n, "rejected", days_ago=60 + n) for n in range(5)]  # old rejections
    items += [_item(50, "rejected"), _item(51, "pending"), _item(52, "pending")]
    items += [_item(60, "pending", domain="platform"), _item(61, "rejected", domain="platform")]
    for item in items:
        store.save(item)
    return items


def _index(memory: Path) -> Path:
    return memory / "approvals" / "index" / "website.json"


def _read_index(memory: Path) -> tuple[dict[str, Any], str]:
    body, seal = _index(memory).read_text(encoding="utf-8").splitlines()
    return json.loads(body), seal


def _write_index(memory: Path, data: dict[str, Any], seal: str) -> None:
    _index(memory).write_text(json.dumps(data) + "\n" + seal + "\n", encoding="utf-8")


def test_a_second_run_reads_no_item_file_and_sees_the_same_queue(tmp_path: Path) -> None:
    items = _queue(ApprovalStore(tmp_path))
    first = ApprovalStore(tmp_path).refreshed("website", NOW)
    assert (first.read, first.rebuilt) == (len(items), "missing")
    assert _index(tmp_path).is_file()
    again = ApprovalStore(tmp_path).refreshed("website", NOW)
    assert (again.read, again.rebuilt) == (0, None)
    assert again.view == first.view
    view = again.view
    assert [i.id for i in view.pending(NOW)] == [_item(51, "pending").id, _item(52, "pending").id]
    assert [i.id for i in view.rejected(NOW)] == [_item(50, "rejected").id]
    assert view.history(NOW) == history_for(items, "website", NOW)  # old rejections still hold
    assert len(view.items) == 3  # executed and old rejected items are not kept whole


def test_a_changed_or_new_file_is_read_again_and_only_it(tmp_path: Path) -> None:
    store = ApprovalStore(tmp_path)
    _queue(store)
    store.refreshed("website", NOW)
    path = tmp_path / "approvals" / f"{_item(3, 'executed').id}.json"
    before = path.stat()
    text = path.read_text(encoding="utf-8").replace('"executed"', '"pending"')
    path.write_text(text, encoding="utf-8")  # in place, by hand, with the old mtime put back
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    ApprovalStore(tmp_path).save(_item(70, "pending"))
    again = ApprovalStore(tmp_path).refreshed("website", NOW)
    assert again.read == 2  # the ctime gave the edit away
    assert {_item(3, "x").id, _item(70, "x").id} <= {i.id for i in again.view.pending(NOW)}
    (tmp_path / "approvals" / f"{_item(51, 'x').id}.json").unlink()
    gone = ApprovalStore(tmp_path).refreshed("website", NOW)
    assert gone.read == 0 and _item(51, "x").id not in {i.id for i in gone.view.pending(NOW)}


def test_a_store_that_may_not_write_leaves_memory_as_it_was(tmp_path: Path) -> None:
    _queue(ApprovalStore(tmp_path))
    view = ApprovalStore(tmp_path, write_index=False).view("website", NOW)
    assert len(view.pending(NOW)) == 2
    assert not _index(tmp_path).exists()


def test_with_a_key_an_edited_index_is_rebuilt_from_the_files(tmp_path: Path) -> None:
    _queue(ApprovalStore(tmp_path, KEY))
    ApprovalStore(tmp_path, KEY).view("website", NOW)
    index, seal = _read_index(tmp_path)
    entry = index["used"][f"{_item(51, 'pending').id}.json"]
    entry[1] = {**entry[1], "params": {"title": "forged"}}
    _write_index(tmp_path, index, seal)
    again = ApprovalStore(tmp_path, KEY).refreshed("website", NOW)
    assert again.rebuilt == "bad seal" and again.read == 50
    assert all(i.params.get("title") != "forged" for i in again.view.items)


def test_with_a_key_an_unsealed_item_anywhere_still_stops_the_run(tmp_path: Path) -> None:
    _queue(ApprovalStore(tmp_path, KEY))
    ApprovalStore(tmp_path, KEY).view("website", NOW)
    ApprovalStore(tmp_path).save(_item(80, "executed", domain="platform"))  # without the key
    with pytest.raises(SealError, match="approval file"):
        ApprovalStore(tmp_path, KEY).view("website", NOW)


def test_with_a_key_an_index_entry_kept_for_an_edited_item_is_checked_again(
    tmp_path: Path,
) -> None:
    store = ApprovalStore(tmp_path, KEY)
    _queue(store)
    store.view("website", NOW)
    index, _ = _read_index(tmp_path)
    index["used"][f"{_item(51, 'x').id}.json"][1]["rationale"] = "edited"
    _write_index(tmp_path, index, "-")  # an index without its seal is rebuilt, never read
    assert ApprovalStore(tmp_path, KEY).refreshed("website", NOW).rebuilt == "unsealed"


def test_prunable_keeps_open_items_and_every_decision_within_its_window() -> None:
    keep = timedelta(hours=36)
    assert not prunable(_item(1, "approved", days_ago=400), NOW, keep)
    assert prunable(_item(1, "executed", days_ago=3), NOW, keep)
    assert not prunable(_item(1, "executed", days_ago=1), NOW, keep)
    assert not prunable(_item(1, "rejected", days_ago=20), NOW, keep)
    assert prunable(_item(1, "rejected", days_ago=RECENTLY_REJECTED.days + 2), NOW, keep)
    assert not prunable(_item(1, "executed", days_ago=50), NOW, timedelta(days=90))
    expired = _item(1, "pending", days_ago=16)  # expired two days ago, the file still pending
    assert prunable(expired, NOW, keep) and not prunable(_item(1, "pending", days_ago=1), NOW, keep)


def test_journal_prune_removes_decided_items_past_their_windows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    memory = tmp_path / "memory"
    assert (
        run_plan(tmp_path, monkeypatch, small_hub.url, {"observations": ["quiet"]}, "--force").code
        == 0
    )
    now = datetime.now(UTC)
    store = ApprovalStore(memory)
    old = [  # past the shortest keep prune allows (31 days, what the authority reads back)
        _item(n, "executed").model_copy(update={"decided_at": now - timedelta(days=40)})
        for n in range(4)
    ]
    kept = [
        _item(10, "pending").model_copy(
            update={"created_at": now, "expires_at": now + timedelta(days=1)}
        ),
        _item(11, "rejected").model_copy(update={"decided_at": now - timedelta(days=3)}),
        _item(12, "executed", domain="platform").model_copy(
            update={"decided_at": now - timedelta(days=3)}
        ),
    ]
    for item in [*old, *kept]:
        store.save(item)
    argv = ["journal", "prune", "--domain", "website", "--keep", "31d", "--memory", str(memory)]
    result = run_cli(argv, tmp_path, monkeypatch)
    assert result.code == 0, result.stderr
    assert "removed 4 decided approval item(s)" in result.stdout
    assert sorted(ApprovalStore(memory).ids()) == sorted(i.id for i in kept)
    assert (
        run_plan(tmp_path, monkeypatch, small_hub.url, {"observations": ["quiet"]}, "--force").code
        == 0
    )  # the index follows the files
    body = _index(memory).read_text(encoding="utf-8")
    assert all(i.id in body for i in kept) and all(i.id not in body for i in old)


def test_without_a_key_a_damaged_index_is_rebuilt(tmp_path: Path) -> None:
    _queue(ApprovalStore(tmp_path))
    ApprovalStore(tmp_path).view("website", NOW)
    _index(tmp_path).write_text("{not json\n-\n", encoding="utf-8")
    again = ApprovalStore(tmp_path).refreshed("website", NOW)
    assert again.rebuilt == "damaged" and again.read == 50
    assert len(again.view.pending(NOW)) == 2


def test_an_in_place_edit_of_an_item_a_run_reads_whole_is_seen(tmp_path: Path) -> None:
    store = ApprovalStore(tmp_path, KEY)
    _queue(store)
    store.view("website", NOW)
    ApprovalStore(tmp_path, KEY).view("website", NOW)  # the index is settled
    path = tmp_path / "approvals" / f"{_item(51, 'x').id}.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["rationale"] = "edited in place"
    with path.open("r+", encoding="utf-8") as handle:  # no rename: the directory is unchanged
        handle.write(json.dumps(data, indent=2))
        handle.truncate()
    with pytest.raises(SealError, match=path.name):
        ApprovalStore(tmp_path, KEY).view("website", NOW)


def test_damaged_stamps_are_read_again_from_the_files(tmp_path: Path) -> None:
    _queue(ApprovalStore(tmp_path))
    ApprovalStore(tmp_path).view("website", NOW)
    index, seal = _read_index(tmp_path)
    index["files"] = "no-slashes-here\0"
    index["directory"] = "changed"
    _write_index(tmp_path, index, seal)
    again = ApprovalStore(tmp_path).refreshed("website", NOW)
    assert again.read == 50 and len(again.view.pending(NOW)) == 2


def test_a_plan_record_keeps_only_the_history_its_items_can_match() -> None:
    from custodian_runtime.core.authority.authorize import authorize
    from custodian_runtime.core.limits import Limits
    from support.authority import plan_of, proposal, website

    items = [_item(n, "rejected") for n in range(30)] + [_item(40 + n, "pending") for n in range(3)]
    history = history_for(items, "website", NOW)
    plan = plan_of(
        proposals=[
            proposal("create_task", workstream_id="web-ws-1", title="Task number 3"),
            proposal("create_task", workstream_id="web-ws-1", title="task  number 7."),
            proposal("create_task", workstream_id="web-ws-1", title="Task number 41"),
            proposal("create_task", workstream_id="web-ws-1", title="Something new"),
        ]
    )
    kept = history.for_items(plan.items)
    assert len(kept.rejected) + len(kept.rejected_texts) <= 4 and kept.pending_count == 3
    full = authorize(plan, website(), Limits(), history)
    assert authorize(plan, website(), Limits(), kept) == full
    assert [r.outcome for r in full][:3] == ["deny", "deny", "deny"]
