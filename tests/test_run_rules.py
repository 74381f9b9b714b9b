"""The run's pure decisions: when to skip the model call, and how a run ended."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from custodian.core.journal import CompletedObservation
from custodian.core.run_rules import ending, skip_reason

NOW = datetime(2026, 11, 30, 8, 0, tzinfo=UTC)
DAY = timedelta(hours=24)


def _last(hours_ago: float, digest: str = "d1") -> CompletedObservation:
    return CompletedObservation(
        finished_at=NOW - timedelta(hours=hours_ago), state_digest=digest, summary={}
    )


def test_an_unchanged_recent_state_is_skipped() -> None:
    reason = skip_reason(_last(2), "d1", NOW, DAY, force=False)
    assert reason is not None and "--force" in reason


def test_a_changed_old_forced_or_first_run_is_not_skipped() -> None:
    assert skip_reason(_last(2), "d2", NOW, DAY, force=False) is None
    assert skip_reason(_last(24), "d1", NOW, DAY, force=False) is None
    assert skip_reason(_last(2), "d1", NOW, DAY, force=True) is None
    assert skip_reason(None, "d1", NOW, DAY, force=False) is None


def test_how_a_run_ended() -> None:
    assert ending(stopped_by=15, executed=1, queued=0, denied=0, failed=0).exit_code == 143
    partial = ending(stopped_by=None, executed=2, queued=0, denied=0, failed=1)
    assert (partial.status, partial.exit_code) == ("partial", 5)
    done = ending(stopped_by=None, executed=2, queued=1, denied=3, failed=0)
    assert (done.status, done.exit_code, done.message) == (
        "completed",
        0,
        "2 executed, 1 queued, 3 denied",
    )
