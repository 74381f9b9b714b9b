"""The one write chain at the transport: what answer makes a write unknown, failed or executed.

No answer (a connection lost, every attempt) is `unknown` and leaves the write open; a refusal
is `failed`; a replayed answer is `executed` only for a key this memory sent before.
"""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest

from custodian_runtime.core.fold import api as core_journal
from custodian_runtime.journal.run_journal import MemoryJournal
from custodian_runtime.statehub.client import StateHubClient
from custodian_runtime.writes import SANCTIONED_CALLS, send

PARAMS = {
    "workstream_id": "web-ws-1",
    "event_type": "note",
    "rests_on": ["web-t-1"],
    "summary": "Looked.",
}
EVENT = {
    "id": "evt-000001",
    "workstream_id": "web-ws-1",
    "event_type": "note",
    "summary": "Looked. [custodian run r1]",
    "source": "custodian",
    "created_at": "2026-01-01T00:00:00Z",
}


def _send(handler: httpx.MockTransport, *, sent_before: bool = False) -> tuple[str, MemoryJournal]:
    journal = MemoryJournal("r1", "website", lambda: datetime(2026, 1, 1, tzinfo=UTC))
    with StateHubClient(
        "http://hub.test", transport=handler, max_attempts=2, sleep=lambda _: None
    ) as client:
        sent = send(
            journal,
            client,
            SANCTIONED_CALLS,
            index=0,
            operation="add_progress_event",
            params=dict(PARAMS),
            run_id="r1",
            key="custodian-r1-fp-nonce",
            sent_before=sent_before,
        )
    return sent.kind, journal


def _hung_up(request: httpx.Request) -> httpx.Response:
    raise httpx.RemoteProtocolError("the hub hung up", request=request)


def test_no_answer_on_every_attempt_is_unknown_and_the_write_stays_open() -> None:
    kind, journal = _send(httpx.MockTransport(_hung_up))
    assert kind == "unknown"
    assert [r.kind for r in journal.records] == ["dispatched", "unknown"]
    assert "no answer came" in journal.records[-1].data["error"]


def test_a_refusal_is_failed() -> None:
    refused = httpx.MockTransport(
        lambda r: httpx.Response(404, json={"error": {"code": "not_found", "message": "no ws"}})
    )
    kind, journal = _send(refused)
    assert kind == "failed" and [r.kind for r in journal.records] == ["dispatched", "failed"]


@pytest.mark.parametrize(("sent_before", "kind"), [(False, "failed"), (True, "executed")])
def test_a_replayed_answer_counts_only_for_a_key_sent_before(sent_before: bool, kind: str) -> None:
    replayed = httpx.MockTransport(
        lambda r: httpx.Response(201, json=EVENT, headers={"Idempotent-Replayed": "true"})
    )
    got, journal = _send(replayed, sent_before=sent_before)
    assert got == kind
    last = journal.records[-1]
    if kind == "failed":
        assert last.kind == "failed" and last.data["code"] == "replayed_unknown_key"
    else:
        assert last.kind == "receipt" and last.data["replayed"] is True


def test_a_replay_after_an_earlier_attempt_of_the_same_call_is_its_own_answer() -> None:
    calls: list[int] = []

    def first_lost_then_replayed(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        if len(calls) == 1:
            raise httpx.RemoteProtocolError("lost after the hub took it", request=request)
        return httpx.Response(201, json=EVENT, headers={"Idempotent-Replayed": "true"})

    kind, journal = _send(httpx.MockTransport(first_lost_then_replayed))
    assert kind == "executed" and journal.records[-1].data["attempts"] == 2
    assert {"unknown", "settled_by_hand"} <= core_journal.KINDS
