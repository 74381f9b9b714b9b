"""The end-to-end month (bench/grants_month_hub.py), a few days of it, so it cannot rot.

Five days are the fewest in which the person reads `policy report` (day 4), runs what it
prints as printed, and a run uses what that issued.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import ModuleType

import pytest

from custodian_runtime.clock import utc_now


def test_five_days_with_levers_run_the_report_as_printed_and_break_no_rule(
    bench: ModuleType, tmp_path: Path
) -> None:
    from month_person import Ledger

    arm = bench.Arm("levers", levers=True, seed=7, ledger=Ledger())
    bench.live_month(bench.WORLDS["month"], arm, tmp_path, 5)
    assert arm.runs["exit 0"] == 5, arm.runs
    assert arm.ledger.ran and all(" custodian " in f" {line}" for line in arm.ledger.ran)
    assert arm.ledger.judged["grant issued"] >= 1 and arm.written["grant"] > 0
    assert arm.ledger.findings == []  # each printed command ran as printed
    # What was judged before day 4's report, which no lever waiting for a person can change.
    assert arm.ledger.first_report_day == 4
    assert 0 < arm.ledger.before_report < arm.ledger.total
    # Day 4's cancellation: no grant covers it; on a task a person just decided it is held.
    held = arm.items[("reason", "denied", "held in deference to a person's decision")]
    assert arm.ledger.judged["reject"] <= 1 and held > 0
    assert arm.written["harmful"] == 0 and arm.harmed_on_hub == 0
    assert arm.overridden == [] and arm.asked_again == []
    assert arm.written["person"] == arm.ledger.judged["approve"] > 0
    # Outside the simulated month the clock is the wall clock, and the person's variables gone.
    assert abs(utc_now() - datetime.now(UTC)) < timedelta(minutes=1)
    assert "STATE_HUB_URL" not in os.environ


def test_a_person_who_reads_the_report_daily_reads_it_from_the_second_morning(
    bench: ModuleType, tmp_path: Path
) -> None:
    from month_person import Ledger

    arm = bench.Arm("levers", levers=True, seed=7, ledger=Ledger(), daily_until=3)
    bench.live_month(bench.WORLDS["month"], arm, tmp_path, 3)
    assert arm.ledger.first_report_day == 1 and arm.ledger.findings == []
    # Only day 0's items come before it; days 1 and 2 are judged after a report.
    assert arm.ledger.before_report is not None
    assert 0 < arm.ledger.before_report < arm.ledger.total


def test_make_bench_prints_both_arms_the_ratio_and_what_must_be_zero(
    bench: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    assert bench.main(["--days", "1", "--world", "month"]) == 0
    out = capsys.readouterr().out
    assert out.count("harmful 0 (journal), 0 (hub); overridden 0; asked again 0") == 2, out
    assert "today (no report followed)" in out and "with levers (the weekly report" in out
    assert "today's arm on this code 5, with levers 5; ratio 1.00x" in out
    # One more arm per lever, switched off by the bench alone, and each one's share.
    from month_levers import LEVERS

    assert "each lever's share" in out and "must be 0 with levers: harmful 0" in out
    assert all(f"{lever.name}: " in out for lever in LEVERS), out


def test_a_printed_line_runs_as_printed_with_only_by_and_reason_filled(bench: ModuleType) -> None:
    from month_person import as_run, items_of, suggested_lines

    text = (
        "set_task_status: 9 proposals, 8 approved; agreement 89%\n"
        "  suggested: custodian grants issue --operation x --where 'status=blocked' "
        "--by NAME --reason TEXT\n"
        "custodian policy set --operation all --mode ask   # fill --by and --reason\n"
        "run custodian approvals list to see them\n"
    )
    (first, labelled), (second, alone) = suggested_lines(text)
    assert labelled and not alone
    assert as_run(first) == (
        ["grants", "issue", "--operation", "x", "--where", "status=blocked", "--by", "ana",
         "--reason", "policy report, as suggested"],
        None,
    )  # fmt: skip
    argv, problem = as_run(second)
    assert problem is None and argv is not None and argv[-4:-2] == ["--by", "ana"]
    assert items_of(argv)[0] == "mode set" and items_of(argv)[1] > 1
    assert as_run("custodian grants revoke <ID>")[0] is None


def test_the_audit_finds_a_person_overridden_unless_a_newer_word_of_a_person_supports_it(
    bench: ModuleType,
) -> None:
    from month_audit import Landed, overridden
    from month_kit import Word, Words

    t = datetime(2026, 3, 2, 9, tzinfo=UTC)
    words = Words([Word(t, "set", "t-1", "ws-1", "in_progress", "ben")])
    blocked = {"task_id": "t-1", "status": "blocked"}
    write = Landed(t + timedelta(days=1), "set_task_status", blocked, "grant:g-1")
    assert len(overridden(words, [write])) == 1
    approved = Landed(write.at, write.operation, write.params, "person:ana")
    assert overridden(words, [approved]) == []
    words.said.append(Word(t + timedelta(hours=2), "event", "t-1", "ws-1", by="ben"))
    assert overridden(words, [write]) == []


def test_the_audit_finds_a_proposal_asked_again_unless_a_person_changed_its_facts(
    bench: ModuleType,
) -> None:
    from month_audit import asked_again
    from month_kit import Word, Words

    from custodian_runtime.core.approvals.items import ApprovalItem

    t = datetime(2026, 3, 2, 9, tzinfo=UTC)
    cancel = {"task_id": "t-1", "status": "cancelled"}

    def item(day: int, status: str) -> ApprovalItem:
        decided = t + timedelta(days=day, hours=1) if status != "pending" else None
        return ApprovalItem.model_construct(
            operation="set_task_status", params=cancel, status=status,
            created_at=t + timedelta(days=day), decided_at=decided,
        )  # fmt: skip

    items = [item(0, "rejected"), item(3, "pending")]
    assert len(asked_again(items, Words(), [])) == 1
    ben = Words([Word(t + timedelta(days=2), "event", "t-1", "ws-1", by="ben")])
    assert asked_again(items, ben, []) == []
