"""Which figures describe a domain (core/metrics.py), and what a call cost (core/prices.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from custodian_runtime.core.approvals.items import new_item
from custodian_runtime.core.fold import api as core_journal
from custodian_runtime.core.fold.checkpoint import compact, empty, fold
from custodian_runtime.core.metrics import (
    METRICS,
    Figures,
    RunFacts,
    figures_of,
    samples,
    status_data,
    status_lines,
)
from custodian_runtime.core.prices import PRICES, cost_usd

T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
DOMAIN = "website"


def _journal(*runs: tuple[str, int, dict[str, Any]]) -> list[core_journal.Record]:
    """Runs of 90 s each, an hour apart: run_started then finished with the given exit code."""
    records: list[core_journal.Record] = []
    for n, (status, code, extra) in enumerate(runs):
        start = T0 + timedelta(hours=n)
        for kind, at, data in (
            ("run_started", start, {}),
            (
                "finished",
                start + timedelta(seconds=90),
                {"status": status, "exit_code": code, **extra},
            ),
        ):
            prev = records[-1] if records else None
            records.append(core_journal.make_record(prev, f"r{n}", DOMAIN, kind, at, data))
    return records


def _item(n: int, created: datetime, domain: str = DOMAIN) -> Any:
    return new_item(
        approval_id=f"apr-{n:012x}",
        domain=domain,
        operation="create_task",
        params={"title": f"t{n}"},
        rationale=None,
        run_id="r0",
        fingerprint=f"f{n}",
        precondition={"domain": domain},
        now=created,
        ttl_days=14,
    )


USAGE = {"input_tokens": 1000, "output_tokens": 200, "cost_usd": None}


def test_the_last_run_and_the_last_success_come_from_the_finished_records() -> None:
    counts = {"executed": 3, "queued": 2, "denied": 1, "failed": 0, "stale": 0}
    records = _journal(
        ("completed", 0, {"counts": counts, "model": "claude-sonnet-4-5", "usage": USAGE}),
        ("failed", 3, {"counts": {}}),
    )
    now = T0 + timedelta(hours=3)
    items = [_item(1, T0 - timedelta(days=2)), _item(2, T0), _item(3, T0, "platform")]
    f = figures_of(DOMAIN, records, items, now)
    assert f.last_run is not None and f.last_run.exit_code == 3 and f.last_run.status == "failed"
    assert f.last_success == T0 + timedelta(seconds=90)
    assert (
        f.pending == 2
        and f.oldest_pending_age_s == (now - (T0 - timedelta(days=2))).total_seconds()
    )
    got = {(s.name, tuple(s.labels.items())): s.value for s in samples(f)}
    assert got[("custodian_run_exit_code", (("domain", DOMAIN),))] == 3
    assert got[("custodian_run_duration_seconds", (("domain", DOMAIN),))] == 90
    assert got[("custodian_run_items", (("domain", DOMAIN), ("outcome", "executed")))] == 0
    # The failed run reported no usage: no tokens and no cost, not zero.
    assert "custodian_run_cost_usd" not in {s.name for s in samples(f)}


def test_cost_is_as_reported_else_from_the_price_table_else_unknown() -> None:
    assert cost_usd("anything", {"cost_usd": 0.25, "input_tokens": 5}) == 0.25
    per_in, per_out = PRICES["claude-sonnet-4-5"]
    expected = (1000 * per_in + 200 * per_out) / 1_000_000
    assert cost_usd("claude-sonnet-4-5", USAGE) == expected
    assert cost_usd("some-local-model", USAGE) is None  # not in the table: never a guess
    assert cost_usd("claude-sonnet-4-5", {"input_tokens": 1000}) is None
    assert cost_usd(None, {}) is None


def test_a_run_that_just_ended_replaces_the_last_run_and_moves_success_only_on_exit_0() -> None:
    before = Figures(DOMAIN, None, T0, 0, None)
    failed = RunFacts(T0, T0 + timedelta(hours=1), 4, "failed")
    assert before.with_run(failed).last_success == T0
    ok = RunFacts(T0, T0 + timedelta(hours=2), 0, "completed")
    assert before.with_run(ok).last_success == T0 + timedelta(hours=2)


def test_overdue_past_max_age_or_never_succeeded() -> None:
    day = timedelta(days=1)
    assert Figures(DOMAIN, None, None, 0, None).overdue(T0, day)
    assert not Figures(DOMAIN, None, T0 - day, 0, None).overdue(T0, day)
    assert Figures(DOMAIN, None, T0 - day - timedelta(seconds=1), 0, None).overdue(T0, day)


def test_every_sample_is_a_declared_metric_with_its_labels() -> None:
    declared = {m.name: set(m.labels) for m in METRICS}
    records = _journal(("completed", 0, {"counts": {"executed": 1}, "usage": USAGE}))
    totals = fold(empty(DOMAIN), records).totals
    f = figures_of(DOMAIN, records, [_item(1, T0)], T0 + timedelta(hours=1), totals)
    for s in samples(f):
        assert set(s.labels) == declared[s.name]
    # build_info is the process's, not a domain's (metrics/_registry.py adds it once).
    unset = {"custodian_run_cost_usd", "custodian_build_info", "custodian_writes_total"}
    assert {s.name for s in samples(f)} >= set(declared) - unset


def test_the_checkpoint_keeps_the_last_run_and_the_last_success() -> None:
    records = _journal(
        ("completed", 0, {"counts": {"executed": 1}}),
        ("skipped", 0, {}),
        ("failed", 4, {}),
    )
    kept = compact(records)
    now = T0 + timedelta(hours=5)
    assert figures_of(DOMAIN, kept, [], now) == figures_of(DOMAIN, records, [], now)
    assert {r.run_id for r in kept if r.kind == "finished"} >= {"r1", "r2"}


def test_status_text_and_json_say_the_same() -> None:
    records = _journal(
        ("completed", 0, {"counts": {"executed": 2}, "model": "gpt-4.1", "usage": USAGE})
    )
    now = T0 + timedelta(days=3)
    f = figures_of(DOMAIN, records, [_item(1, T0)], now)
    data = status_data(f, now, timedelta(hours=48))
    assert data["overdue"] is True and data["items"]["executed"] == 2 and data["exit_code"] == 0
    assert data["cost_usd"] == cost_usd("gpt-4.1", USAGE)
    head, detail = status_lines(f, now, timedelta(hours=48))
    assert head.startswith("website  OVERDUE  last success 2d ago; last run 2d ago: completed")
    assert "executed 2" in detail and "pending 1 (oldest 3d)" in detail
    assert "tokens 1000 in / 200 out" in detail
