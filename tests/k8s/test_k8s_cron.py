"""The cron reader behind the activeDeadlineSeconds-below-period check."""

from __future__ import annotations

import importlib.util
from types import ModuleType

import pytest

from support.paths import REPO

PATH = REPO / "k8s" / "cron_period.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("cron_period", PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


cron = _load()


@pytest.mark.parametrize(
    ("schedule", "period_s"),
    [
        ("0 6 * * *", 86400),
        ("*/15 * * * *", 900),
        ("0 */6 * * *", 21600),
        ("30 7 * * 1-5", 86400),  # Friday to Monday is longer, Monday to Tuesday is the shortest
        ("5,50 * * * *", 900),  # uneven: 45 min then 15 min
        ("0 9 * * mon", 7 * 86400),
        ("0 0 * * 0,7", 7 * 86400),  # 0 and 7 are both Sunday
        ("0 22-23 * * *", 3600),
        ("@hourly", 3600),
        ("@monthly", 28 * 86400),
    ],
)
def test_shortest_period(schedule: str, period_s: int) -> None:
    assert cron.shortest_period_s(schedule) == period_s


def test_day_of_month_or_month_restrictions_are_not_simple() -> None:
    assert cron.shortest_period_s("0 9 1 * *") is None
    assert cron.shortest_period_s("0 9 * 1 *") is None


@pytest.mark.parametrize(
    ("schedule", "message"),
    [
        ("0 6 * *", "has 4 fields"),
        ("61 * * * *", "outside 0-59"),
        ("x * * * *", "not a number"),
        ("*/0 * * * *", "at least 1"),
        ("@often", "unknown macro"),
    ],
)
def test_bad_schedules_say_what_is_wrong(schedule: str, message: str) -> None:
    with pytest.raises(cron.CronError, match=message):
        cron.shortest_period_s(schedule)
