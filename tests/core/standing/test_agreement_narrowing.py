"""A suggested grant covers what the person approved, never what they rejected (pure core)."""

from __future__ import annotations

import shlex
from datetime import UTC, datetime, timedelta
from typing import Any

from custodian_runtime.cli.standing import _where
from custodian_runtime.core.approvals.items import ApprovalItem
from custodian_runtime.core.standing.agreement import agreement, shared_params
from custodian_runtime.core.standing.grants import Grant, covering

NOW = datetime(2026, 12, 1, 12, tzinfo=UTC)
HUB = "hub-1"


def _item(n: int, params: dict[str, Any], status: str, op: str = "set_task_status") -> ApprovalItem:
    return ApprovalItem(
        id=f"apr-{n}", domain="website", operation=op, params=params, run_id="run-1",
        fingerprint=f"f{n}", precondition={}, status=status,
        created_at=NOW - timedelta(days=1), expires_at=NOW + timedelta(days=13),
    )  # fmt: skip


def _blocks(count: int) -> list[ApprovalItem]:
    return [
        _item(n, {"task_id": f"web-t-{n}", "status": "blocked"}, "executed") for n in range(count)
    ]


def _granted(suggestion: str) -> Grant:
    """The grant the suggested command issues, its `--where`s read as the CLI reads them."""
    words = shlex.split(suggestion)
    pairs = [words[i + 1] for i, w in enumerate(words) if w == "--where"]
    return Grant(
        id="grant-0123456789ab", domain="website", operation=words[words.index("--operation") + 1],
        where=_where(pairs), max_uses=10, expires_at=NOW + timedelta(days=7), by="ana",
        reason="agreement", hub_id=HUB, issued_at=NOW,
    )  # fmt: skip


def _covers(grant: Grant, item: ApprovalItem) -> bool:
    return covering(item.operation, item.params, [grant], {}, NOW, HUB).grant is not None


def test_a_suggested_grant_is_narrowed_to_what_every_approval_shared() -> None:
    cancel = _item(99, {"task_id": "web-t-99", "status": "cancelled"}, "rejected")
    items = [*_blocks(12), cancel]
    [row] = agreement(items, NOW, 30)
    assert row.where == {"status": "blocked"} and row.rejected_covered == 0
    suggestion = row.suggestion("website")
    assert suggestion is not None and "--where status=blocked" in suggestion
    grant = _granted(suggestion)
    assert all(_covers(grant, item) for item in items[:-1])
    assert not _covers(grant, cancel)


def test_no_grant_is_suggested_that_would_cover_a_rejected_proposal() -> None:
    approved = [
        _item(n, {"task_id": f"web-t-{n}", "status": "blocked" if n % 2 else "todo"}, "executed")
        for n in range(12)
    ]
    cancel = _item(99, {"task_id": "web-t-99", "status": "cancelled"}, "rejected")
    [row] = agreement([*approved, cancel], NOW, 30)
    assert row.rate is not None and row.rate >= 0.9  # agreement alone would earn a grant
    assert row.where == {} and row.rejected_covered == 1
    # Not the operation as a whole: each class with no rejection, as a first grant (6 of 6,
    # lower bound 0.61: 8 uses), covering its approved moves and never the cancellation.
    said = row.as_json("website")
    assert said["rejected_covered"] == 1
    commands = [str(one["command"]) for one in said["suggestions"]]
    assert [c.split("--where ")[1].split(" --max 8 ")[0] for c in commands] == [
        "status=blocked", "status=todo",
    ]  # fmt: skip
    grants = [_granted(c) for c in commands]
    assert all(any(_covers(g, item) for g in grants) for item in approved)
    assert not any(_covers(g, cancel) for g in grants)


def test_never_rejected_and_nothing_shared_is_suggested_as_worded() -> None:
    creates = [
        _item(
            n, {"workstream_id": f"web-ws-{n % 3}", "title": f"Task {n}"}, "executed", "create_task"
        )
        for n in range(10)
    ]
    [row] = agreement(creates, NOW, 30)
    assert row.where == {"status": "todo"}  # as the hub holds a create that says no status
    suggestion = str(row.suggestion("website"))
    assert "--operation create_task --where status=todo --max" in suggestion


def test_a_shared_value_with_spaces_is_quoted_for_the_shell_and_round_trips() -> None:
    params = {"workstream_id": "web-ws-1", "title": "Fix the 'docs' page"}
    items = [_item(n, dict(params), "executed", "create_task") for n in range(10)]
    other = {"workstream_id": "web-ws-2", "title": "Drop the docs"}
    rejected = _item(99, other, "rejected", "create_task")  # the whole operation would cover it
    [row] = agreement([*items, rejected], NOW, 30)
    grant = _granted(str(row.suggestion("website")))
    assert grant.where == {
        "status": "todo",
        "title": "Fix the 'docs' page",
        "workstream_id": "web-ws-1",
    }
    assert all(_covers(grant, item) for item in items) and not _covers(grant, rejected)


def test_shared_params_keep_only_scalar_values_every_item_had() -> None:
    assert shared_params([]) == {}
    one = {"task_id": "web-t-1", "status": "blocked", "evidence": ["ev-1"], "n": 3}
    two = {"task_id": "web-t-2", "status": "blocked", "evidence": ["ev-1"], "n": 3}
    assert shared_params([one, two]) == {"n": "3", "status": "blocked"}
