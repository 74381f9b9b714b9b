"""The spine's rules for `unknown` and `settled_by_hand`, as pure functions over records."""

from __future__ import annotations

from typing import Any

import pytest

from custodian_runtime.core.fold import api as core_journal
from custodian_runtime.core.fold.checkpoint import compact
from custodian_runtime.core.fold.settle import (
    by_hand,
    open_write,
    open_write_lines,
    parse_ref,
    write_ref,
)
from custodian_runtime.core.journal.kinds import encode
from support.journal import (
    DOMAIN,
    Appender,
    build,
    key_of,
    messages,
    write_completed_run,
    write_interrupted_run,
)


def _unknown(w: Appender, run_id: str) -> None:
    """A run whose write got no answer: dispatched, then `unknown`, then finished."""
    write_interrupted_run(w, run_id)
    w.append("unknown", {"index": 0, "error": "no answer came (timeout)"})
    w.append("finished", {"status": "partial", "exit_code": 5, "counts": {"unknown": 1}})


def _settle(pending: core_journal.PendingWrite, **changes: Any) -> Any:
    def builder(w: Appender, run_id: str) -> None:
        _, data = encode(by_hand(pending, "website:5", "ana", "hub gone"))
        w.append("settled_by_hand", {**data, **changes})

    return builder


def test_an_unknown_write_stays_open_and_says_how_it_settles() -> None:
    records = build(("r1", _unknown))
    [pending] = core_journal.unfinished_items(records)
    assert pending.dispatched and pending.idempotency_key == key_of("r1", 0)
    [problem] = messages(core_journal.verify_spine(records))
    assert "its answer never came (unknown)" in problem
    assert f"custodian journal settle {write_ref(DOMAIN, pending)}" in problem
    # The checkpoint keeps what the next run's reconcile needs, the unknown step included.
    assert [r.kind for r in compact(records) if r.kind == "unknown"] == ["unknown"]


def test_unknown_without_a_dispatch_in_its_run_breaks_the_spine() -> None:
    def early(w: Appender, run_id: str) -> None:
        write_interrupted_run(w, run_id, dispatched=False)
        w.append("unknown", {"index": 0, "error": "no answer came"})

    assert any(
        "unknown without a dispatched record" in m
        for m in messages(core_journal.verify_spine(build(("r1", early))))
    )


def test_a_hand_settling_closes_the_write_in_a_run_of_its_own() -> None:
    [pending] = core_journal.unfinished_items(build(("r1", _unknown)))
    records = build(("r1", _unknown), ("by-hand-1", _settle(pending)))
    assert core_journal.unfinished_items(records) == []
    assert core_journal.verify_spine(records) == []
    assert core_journal.interrupted_runs(records) == []
    # Once a later run follows, neither the write nor the settling run stays in the checkpoint.
    later = build(("r1", _unknown), ("by-hand-1", _settle(pending)), ("r2", write_completed_run))
    assert not {"r1", "by-hand-1"} & {r.run_id for r in compact(later)}


def test_a_hand_settling_of_a_closed_write_or_with_another_key_is_a_problem() -> None:
    [pending] = core_journal.unfinished_items(build(("r1", _unknown)))
    twice = build(
        ("r1", _unknown), ("by-hand-1", _settle(pending)), ("by-hand-2", _settle(pending))
    )
    assert any(
        "settles an item already closed" in m for m in messages(core_journal.verify_spine(twice))
    )
    forged = build(("r1", _unknown), ("by-hand-1", _settle(pending, idempotency_key="other")))
    assert any("idempotency key differs" in m for m in messages(core_journal.verify_spine(forged)))


def test_a_write_is_named_by_domain_and_seq() -> None:
    assert parse_ref("website:42") == ("website", 42)
    for bad in ("website", "website:0", ":4", "web site:4", "website:-1"):
        with pytest.raises(ValueError, match="<domain>:<seq>"):
            parse_ref(bad)
    [pending] = core_journal.unfinished_items(build(("r1", _unknown)))
    assert open_write([pending], DOMAIN, pending.authorized_seq) == pending
    with pytest.raises(ValueError, match=f"open writes: {write_ref(DOMAIN, pending)}"):
        open_write([pending], DOMAIN, 1)
    lines = open_write_lines(DOMAIN, [pending])
    assert lines[0].startswith("open writes (1)") and write_ref(DOMAIN, pending) in lines[1]
    assert open_write_lines(DOMAIN, []) == []
