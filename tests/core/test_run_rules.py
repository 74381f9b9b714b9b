"""The run's pure decisions: when to skip the model call, and how a run ended."""

from __future__ import annotations

import io
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from custodian_runtime.core.fold.api import CompletedObservation
from custodian_runtime.core.run_rules import (
    Ending,
    ending,
    failure,
    internal_error,
    observes_after_act,
    signalled,
    skip_reason,
)
from custodian_runtime.errors import (
    ConfigError,
    CustodianError,
    HubUnavailable,
    Interrupted,
    ModelError,
    PlanRejected,
    RunLocked,
)
from custodian_runtime.process.crash import report_crash

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


# How a run that raised ends (`failure`): status, exit code and what it leaves behind.
BAD_ANSWER = PlanRejected("no action plan in the answer")
MODEL_DOWN = ModelError("the provider answered 503", provider="openai", status=503)
HUB_DOWN = HubUnavailable("the hub did not answer")
BAD_SETTING = ConfigError("no such domain", setting="--domain")
SIGTERM = Interrupted("stopped by SIGTERM", signum=15)


@pytest.mark.parametrize(
    ("exc", "status", "noted"),
    [
        (BAD_ANSWER, "rejected", True),
        (MODEL_DOWN, "rejected", True),
        (HUB_DOWN, "failed", True),
        (BAD_SETTING, "failed", False),
        (SIGTERM, "interrupted", True),
        (RunLocked("another run has the lock"), "failed", False),
    ],
)
def test_a_run_that_raised_in_its_steps_ends_by_the_kind_of_error(
    exc: CustodianError, status: str, noted: bool
) -> None:
    how = failure(exc, in_steps=True, dry_run=False)
    assert how.ending == Ending(status, exc.exit_code, exc.message)
    assert how.journaled is True
    assert how.noted is noted
    assert how.shows_answer is (exc is BAD_ANSWER)


def test_the_exit_code_is_the_errors_own() -> None:
    assert failure(BAD_ANSWER, in_steps=True, dry_run=True).ending.exit_code == 4
    assert failure(SIGTERM, in_steps=True, dry_run=False).ending.exit_code == 128 + 15
    assert failure(BAD_SETTING, in_steps=False, dry_run=False).ending.exit_code == 2


@pytest.mark.parametrize("exc", [BAD_ANSWER, MODEL_DOWN, HUB_DOWN, BAD_SETTING])
def test_before_the_steps_and_in_a_dry_run_a_run_fails_and_leaves_nothing(
    exc: CustodianError,
) -> None:
    for how in (
        failure(exc, in_steps=False, dry_run=False),
        failure(exc, in_steps=True, dry_run=True),
    ):
        assert how.ending.status == "failed"  # a bad answer in a dry run is plainly a failure
        assert (how.journaled, how.noted, how.shows_answer) == (False, False, False)


def test_a_signal_interrupts_a_run_at_any_point() -> None:
    for in_steps, dry_run in [(False, False), (True, True), (True, False)]:
        assert failure(SIGTERM, in_steps=in_steps, dry_run=dry_run).ending.status == "interrupted"


def test_the_run_observes_again_only_after_a_write_went_out_cleanly() -> None:
    assert observes_after_act({"executed": 1, "stale": 0}, stopped=False)
    assert not observes_after_act({"executed": 0, "stale": 0}, stopped=False)
    assert not observes_after_act({"executed": 2, "stale": 1}, stopped=False)
    assert not observes_after_act({"executed": 1, "stale": 0}, stopped=True)


def test_a_bug_fails_the_run_with_exit_1_and_names_the_exception(tmp_path: Path) -> None:
    ended = internal_error("KeyError")
    assert (ended.status, ended.exit_code, ended.message) == (
        "failed",
        1,
        "internal error: KeyError",
    )
    # The CLI's crash report exits with the code the run's journal records, and keeps the
    # traceback in the memory directory it was given (not the system's temporary directory).
    assert report_crash(KeyError("k"), tmp_path, {}, io.StringIO()) == ended.exit_code
    assert [p.read_text().splitlines()[-1] for p in (tmp_path / "crashes").iterdir()] == [
        "KeyError: 'k'"
    ]


@pytest.mark.parametrize(("signum", "code"), [(2, 130), (15, 143)])
def test_a_signal_turns_any_ending_into_interrupted(signum: int, code: int) -> None:
    for end in (
        Ending("skipped", 0, "state unchanged"),
        Ending("completed", 0, "1 executed"),
        Ending("failed", 3, "the hub refused"),
    ):
        stopped = signalled(end, signum)
        assert (stopped.status, stopped.exit_code) == ("interrupted", code)
        assert end.status in stopped.message
    assert signalled(Ending("skipped", 0, "x"), None) == Ending("skipped", 0, "x")
    already = Ending("interrupted", code, "stopped")
    assert signalled(already, signum) is already


def test_a_write_without_an_answer_makes_the_run_partial() -> None:
    end = ending(stopped_by=None, executed=1, queued=0, denied=0, failed=0, unknown=1)
    assert (end.status, end.exit_code) == ("partial", 5)
    assert "1 got no answer" in end.message
