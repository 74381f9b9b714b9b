"""Rule, then probe: a probe re-sends a write (through a gateway that drops If-Match it would
apply it), so only a write that would be sent now is ever probed (core/fold/late_landings.py)."""

from __future__ import annotations

import pytest

from custodian_runtime.core.fold.late_landings import ClosedWrite, probe_refusal
from custodian_runtime.core.journal.records import Record
from custodian_runtime.core.ruling.spine import PendingWrite

WRITE = PendingWrite(
    run_id="r1", index=0, operation="update_task_status", params={"task_id": "t", "status": "done"},
    idempotency_key="k", fingerprint="f", authorized_seq=3, dispatched=True,
)  # fmt: skip
CLOSED = Record(v=1, seq=9, run_id="r2", domain="website", kind="stale", at="2026-12-07T00:00:00Z",
                data={}, prev="0" * 64, hash="0" * 64)  # fmt: skip


@pytest.mark.parametrize(
    ("mode", "item", "refused"),
    [
        ("auto", None, None),
        ("ask", "pending", None),
        ("auto", "rejected", "a person rejected its item"),
        ("off", None, "update_task_status is off now"),
        ("shadow", "pending", "update_task_status is shadow now"),
    ],
)
def test_only_a_write_that_would_be_sent_now_is_probed(
    mode: str, item: str | None, refused: str | None
) -> None:
    said = probe_refusal(ClosedWrite(WRITE, "stale", CLOSED, sent=True), mode, item)
    if refused is None:
        assert said is None
    else:
        assert said is not None and refused in said and "not even a probe" in said
