"""Every verdict on an approval, from the pure core alone: no hub, no files, no clock."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from custodian_runtime.core import operations
from custodian_runtime.core.approvals.items import ApprovalItem, listed_status, new_item
from custodian_runtime.core.authority.origin import DecisionSite, HubOrigin
from custodian_runtime.core.authority.precondition import precondition
from custodian_runtime.core.person import verdicts
from custodian_runtime.core.person.verdicts import ObservedNow
from custodian_runtime.core.plan.extract import fingerprint
from custodian_runtime.core.ruling.path import as_item
from custodian_runtime.writes import APPROVED_CALLS, SANCTIONED_CALLS
from support.authority import NOW, website

HUB = "http://hub.test"
CANON = "/srv/canon"
SHA = "ab" * 32


def _item(operation: str, params: dict[str, Any], **fields: Any) -> ApprovalItem:
    fp = fingerprint(operation, params)
    under = precondition(as_item(operation, params, fp), website())
    if operation == "write_canon":
        under = {"file_sha256": SHA}
    item = new_item(
        approval_id="apr-1",
        domain="website",
        operation=operation,
        params=params,
        rationale="why",
        run_id="r1",
        fingerprint=fp,
        precondition=under,
        now=NOW,
        ttl_days=7,
        hub=HUB,
        canon=CANON,
    )
    return item.model_copy(update=fields)


CANCEL = ("set_task_status", {"task_id": "t-todo", "status": "cancelled"})
CANON_WRITE = ("write_canon", {"path": "notes/a.md", "content": "# A\n"})
LATER = NOW + timedelta(hours=1)


def _records(settled: verdicts.Verdict) -> list[tuple[str, str | None]]:
    return [(kind, data.get("decision", data.get("outcome"))) for kind, data in settled.records]


def test_a_pending_item_passes_the_gate() -> None:
    assert verdicts.gate("apr-1", _item(*CANCEL), LATER) == verdicts.Gate(None)


def test_an_item_past_its_expiry_is_stored_expired_and_refused() -> None:
    gate = verdicts.gate("apr-1", _item(*CANCEL), NOW + timedelta(days=8))
    assert gate.refusal == "apr-1 is expired, not pending: only pending items can be decided"
    assert gate.stored is not None and gate.stored.status == "expired"
    assert gate.stored.decided_at == NOW + timedelta(days=8)


def test_a_decided_item_is_refused_and_left_as_it_is() -> None:
    gate = verdicts.gate("apr-1", _item(*CANCEL, status="executed"), LATER)
    assert gate.stored is None and gate.refusal is not None and "is executed" in gate.refusal


BY_URL = HubOrigin(None, HUB)  # a v1.1 hub: items are bound to its URL
HUB_A = HubOrigin("hub-a", "http://hub-a.test:8765")


@pytest.mark.parametrize(
    ("item", "hub", "canon", "expected"),
    [
        (_item(*CANCEL), BY_URL, CANON, None),
        (_item(*CANCEL), None, CANON, None),  # no hub here: the client says how to set one
        (_item(*CANCEL), HubOrigin(None, "http://other.test"), CANON, "proposed on hub http:"),
        (_item(*CANCEL, hub=None), BY_URL, CANON, "records no hub"),
        (_item(*CANON_WRITE), None, CANON, None),
        (_item(*CANON_WRITE), BY_URL, "/elsewhere", "proposed for the canon /srv/canon"),
        # Bound by hub_id: the same hub under another URL is the same hub; another is not.
        (_item(*CANCEL, hub="hub_id:hub-a"), HUB_A, CANON, None),
        (_item(*CANCEL, hub="hub_id:hub-a"), HubOrigin("hub-a", "http://proxy:1"), CANON, None),
        (_item(*CANCEL, hub="hub_id:hub-a"), HubOrigin("hub-b", HUB), CANON, "hub_id:hub-b"),
        (_item(*CANCEL, hub="hub_id:hub-a"), BY_URL, CANON, "proposed on hub hub_id:hub-a"),
        # Bound by URL before v1.2: it keeps working against that URL, now serving a hub_id.
        (_item(*CANCEL), HubOrigin("hub-a", HUB), CANON, None),
    ],
)
def test_an_item_acts_only_on_the_hub_or_canon_it_was_proposed_on(
    item: ApprovalItem, hub: HubOrigin | None, canon: str, expected: str | None
) -> None:
    refused = verdicts.foreign_refusal(item, DecisionSite(hub, canon, "/m"), None)
    if expected is None:
        assert refused is None
        return
    assert refused is not None and refused.exit_code == verdicts.EXIT_REFUSED
    assert refused.message.startswith("apr-1: refused: ") and expected in refused.message
    assert refused.records == () and refused.stored is None and not refused.execute


@pytest.mark.parametrize(
    ("item", "command"),
    [
        (_item(*CANCEL), f"custodian approvals --memory /m approve apr-1 --hub {HUB}"),
        (
            _item(*CANCEL, hub="hub_id:hub-a", hub_at="http://hub-a.test:8765"),
            "custodian approvals --memory /m approve apr-1 --hub http://hub-a.test:8765",
        ),
        (
            _item(*CANCEL, hub="hub_id:hub-a", hub_at="embedded:/var/my hub/hub.sqlite3"),
            "CUSTODIAN_EMBEDDED_DIR='/var/my hub' custodian approvals --memory /m approve apr-1"
            " --hub embedded",
        ),
        (
            _item(*CANON_WRITE),
            "custodian approvals --memory /m approve apr-1 --canon /srv/canon",
        ),
    ],
)
def test_a_refusal_names_a_command_for_the_items_own_hub_or_canon(
    item: ApprovalItem, command: str
) -> None:
    here = DecisionSite(HubOrigin("hub-z", "http://z.test"), "/elsewhere", "/m")
    refused = verdicts.foreign_refusal(item, here, None)
    assert refused is not None and refused.message.endswith(command)


def test_without_where_its_hub_was_a_refusal_names_no_command() -> None:
    item = _item(*CANCEL, hub="hub_id:hub-a")
    refused = verdicts.foreign_refusal(
        item, DecisionSite(HubOrigin("hub-z", "http://z"), CANON, "/m"), None
    )
    assert refused is not None and "custodian approvals" not in refused.message


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        (_item(*CANCEL), "hub"),
        (_item(*CANON_WRITE), "canon"),
        (_item("drop_database", {"name": "x"}), "nothing"),
        (_item("set_task_status", {"task_id": "t-todo"}), "nothing"),
    ],
)
def test_only_an_item_that_could_run_is_observed(item: ApprovalItem, expected: str) -> None:
    assert verdicts.to_observe(item) == expected


@pytest.mark.parametrize(
    ("item", "seen", "reason"),
    [
        (_item("drop_database", {"name": "x"}), ObservedNow(), "Custodian has no way to perform"),
        (_item("set_task_status", {"task_id": "t-todo"}), ObservedNow(), "its params do not fit"),
        (
            _item(*CANON_WRITE),
            ObservedNow(canon_problem="a symlink is on the way"),
            "a symlink is on",
        ),
        (_item(*CANCEL), ObservedNow(), "it could not be ruled on"),
    ],
)
def test_what_cannot_run_is_refused_before_anything_is_sent(
    item: ApprovalItem, seen: ObservedNow, reason: str
) -> None:
    settled = verdicts.approved(item, "ana", "ok", seen, LATER)
    assert settled.exit_code == verdicts.EXIT_REFUSED and not settled.execute
    assert settled.message.startswith("apr-1: refused before anything ran: ")
    assert _records(settled) == [("approval_decided", "refused")]
    assert settled.stored is not None and settled.stored.status == "failed"
    assert reason in str(settled.stored.result) and settled.stored.decided_by == "ana"


def test_an_item_edited_after_queuing_is_refused_by_the_authority() -> None:
    item = _item(*CANCEL).model_copy(update={"params": {"task_id": "t-prog", "status": "blocked"}})
    settled = verdicts.approved(item, "ana", None, ObservedNow(summary=website()), LATER)
    assert settled.exit_code == verdicts.EXIT_REFUSED and not settled.execute
    assert settled.message.startswith("apr-1: refused, nothing ran: ")
    assert "edited after queuing" in settled.message
    assert _records(settled) == [("approval_decided", "refused"), ("ruling", "deny")]
    assert settled.stored is not None and settled.stored.status == "failed"


def test_a_target_that_moved_makes_the_item_stale() -> None:
    item = _item(*CANCEL, precondition={"task": {"id": "t-todo", "status": "blocked"}})
    settled = verdicts.approved(item, "ana", "n", ObservedNow(summary=website()), LATER)
    assert settled.exit_code == verdicts.EXIT_STALE and not settled.execute
    assert settled.message == (
        "apr-1: stale: the target changed since it was proposed; nothing ran"
    )
    assert _records(settled) == [("approval_decided", "stale"), ("ruling", "deny")]
    stored = settled.stored
    assert stored is not None and stored.status == "stale" and stored.decision_note == "n"
    assert stored.result == {
        "proposed_under": {"task": {"id": "t-todo", "status": "blocked"}},
        "now": precondition(as_item(*CANCEL, item.fingerprint), website()),
    }


def test_an_item_whose_state_holds_is_sent_on_the_task_it_observed() -> None:
    settled = verdicts.approved(_item(*CANCEL), "ana", "go", ObservedNow(summary=website()), LATER)
    assert settled.execute and settled.exit_code == verdicts.EXIT_EXECUTED
    assert settled.stored is None  # stored only once the write came to something
    assert _records(settled) == [("approval_decided", "approved"), ("ruling", "execute")]
    assert settled.records[0][1]["reason"] == "go"
    assert settled.task is not None and settled.task.id == "t-todo"
    ruling = settled.records[1][1]
    assert (
        ruling["approval_id"] == "apr-1" and ruling["precondition"] == _item(*CANCEL).precondition
    )


@pytest.mark.parametrize(
    ("sha", "execute", "code"),
    [(SHA, True, verdicts.EXIT_EXECUTED), ("cd" * 32, False, verdicts.EXIT_STALE)],
)
def test_a_canon_write_rules_on_its_file_hash_now(sha: str, execute: bool, code: int) -> None:
    settled = verdicts.approved(
        _item(*CANON_WRITE), "ana", None, ObservedNow(canon_sha256=sha), LATER
    )
    assert settled.execute is execute and settled.exit_code == code and settled.task is None


@pytest.mark.parametrize(
    ("outcome", "status", "code"),
    [
        ({"hub_id": "t-todo"}, "executed", verdicts.EXIT_EXECUTED),
        ({"stale": "changed", "current_status": "done"}, "stale", verdicts.EXIT_STALE),
        ({"error": "hub said no"}, "failed", verdicts.EXIT_FAILED),
        ({"path": "notes/a.md", "sha256": SHA, "file": "a.md"}, "executed", verdicts.EXIT_EXECUTED),
    ],
)
def test_what_the_write_came_to_is_stored_and_printed(
    outcome: dict[str, Any], status: str, code: int
) -> None:
    settled = verdicts.carried_out(_item(*CANCEL), "ana", "go", outcome, LATER)
    assert settled.exit_code == code and settled.records == () and not settled.execute
    stored = settled.stored
    assert stored is not None and stored.status == status and stored.result == outcome
    # The status, not the result's JSON (the item keeps it; the shell says it as a sentence).
    assert settled.message == f"apr-1: {status}"
    assert (
        stored.decided_at == LATER and stored.decided_by == "ana" and stored.decision_note == "go"
    )


def test_a_rejection_is_journaled_and_stored_with_its_reason() -> None:
    settled = verdicts.rejected(_item(*CANCEL), "bo", "not now", LATER)
    assert (settled.exit_code, settled.message) == (0, "apr-1: rejected by bo")
    assert settled.records == (
        ("approval_decided", {"approval_id": "apr-1", "decision": "rejected", "by": "bo",
                              "reason": "not now"}),
    )  # fmt: skip
    assert settled.stored is not None and settled.stored.status == "rejected"
    assert settled.stored.reject_reason == "not now" and not settled.execute


def test_a_listing_marks_an_item_whose_seal_fails() -> None:
    item = _item(*CANCEL)
    assert listed_status(item, LATER, None) == "pending"
    assert listed_status(item, NOW + timedelta(days=8), None) == "expired"
    assert listed_status(item, LATER, "no seal") == "unsealed"
    assert listed_status(item.model_copy(update={"seal": "x"}), LATER, "bad") == "bad-seal"


def test_the_core_knows_exactly_what_the_approved_table_can_send() -> None:
    assert set(APPROVED_CALLS.table) | {"write_canon"} == verdicts.approved_operations()
    assert operations.names("approvable") <= verdicts.approved_operations()
    # Any sanctioned write is approvable: a person's `ask` mode queues it (core/standing/modes.py).
    assert set(SANCTIONED_CALLS.table) <= verdicts.approved_operations()
