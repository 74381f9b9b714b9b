"""The end-to-end grants month (bench/grants_month_hub.py), a few days of it, so it cannot rot.

Five days are the fewest in which `policy report` suggests a grant and a run uses it.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import ModuleType

import pytest

from custodian_runtime.clock import utc_now

BENCH = Path(__file__).resolve().parent.parent / "bench"


@pytest.fixture
def bench(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> ModuleType:
    """The bench module, importable, run in `tmp_path` with no CUSTODIAN or STATE_HUB variable."""
    monkeypatch.syspath_prepend(str(BENCH))
    monkeypatch.chdir(tmp_path)
    for name in [n for n in os.environ if n.startswith(("CUSTODIAN_", "STATE_HUB_"))]:
        monkeypatch.delenv(name)
    import grants_month_hub

    return grants_month_hub


def test_five_days_with_grants_issue_a_narrowed_grant_use_it_and_execute_nothing_harmful(
    bench: ModuleType, tmp_path: Path
) -> None:
    arm = bench.live_month(bench.Arm("B", grants=True), tmp_path, 5, 7)
    assert arm.runs["exit 0"] == 5, arm.runs
    assert dict(arm.granted) == {"set_task_status status=blocked": 1}
    assert arm.decided["issue"] == 1 and arm.written["grant"] > 0
    assert arm.decided["reject"] == 1  # day 4's cancellation: the grant does not cover it
    assert arm.written["harmful"] == 0 and arm.cancelled_on_hub == 0
    assert arm.written["person"] == arm.decided["approve"] > 0
    assert arm.written["policy"] > 0
    # Outside the simulated month the clock is the wall clock again.
    assert abs(utc_now() - datetime.now(UTC)) < timedelta(minutes=1)


def test_make_bench_prints_both_arms_and_their_ratio(
    bench: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    assert bench.main(["--days", "1"]) == 0
    out = capsys.readouterr().out
    assert out.count("harmful executed    0 in the journal, 0 tasks cancelled") == 2, out
    assert "A, without grants: 1 daily" in out and "B, with the suggested grants: 1" in out
    assert "ratio of the person's decisions B/A: 1.00" in out


def test_simulated_clock_is_every_reading_within_and_the_wall_clock_after() -> None:
    from custodian_runtime.clock import simulated_clock

    moment = datetime(2026, 3, 2, 9, tzinfo=UTC)
    with simulated_clock(lambda: moment):
        assert utc_now() == moment
    assert abs(utc_now() - datetime.now(UTC)) < timedelta(minutes=1)
