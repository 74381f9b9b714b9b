"""The shortest gap between two firings of a simple cron schedule, for the activeDeadline check."""

from __future__ import annotations

import itertools

MINUTES_PER_DAY = 24 * 60
# Shortest period of each macro the CronJob controller accepts (a month can be 28 days).
MACRO_PERIOD_S = {
    "@hourly": 3600,
    "@daily": 86400,
    "@midnight": 86400,
    "@weekly": 7 * 86400,
    "@monthly": 28 * 86400,
    "@yearly": 365 * 86400,
    "@annually": 365 * 86400,
}
DAY_NAMES = {"sun": 0, "mon": 1, "tue": 2, "wed": 3, "thu": 4, "fri": 5, "sat": 6}


class CronError(ValueError):
    """The schedule is not a cron expression this checker can read."""


def _number(text: str, names: dict[str, int]) -> int:
    lowered = text.lower()
    if lowered in names:
        return names[lowered]
    if not text.isdigit():
        raise CronError(f"{text!r} is not a number")
    return int(text)


def _item(item: str, low: int, high: int, names: dict[str, int]) -> set[int]:
    base, _, step_text = item.partition("/")
    step = _number(step_text, {}) if step_text else 1
    if step < 1:
        raise CronError(f"step in {item!r} must be at least 1")
    if base in ("*", "?"):
        start, stop = low, high
    elif "-" in base:
        first, _, last = base.partition("-")
        start, stop = _number(first, names), _number(last, names)
    else:
        start = _number(base, names)
        stop = high if step_text else start
    if not low <= start <= stop <= high:
        raise CronError(f"{item!r} is outside {low}-{high}")
    return set(range(start, stop + 1, step))


def parse_field(field: str, low: int, high: int, names: dict[str, int] | None = None) -> set[int]:
    """`*/15` over 0-59 -> {0, 15, 30, 45}; lists, ranges, steps and day names are understood."""
    values: set[int] = set()
    for item in field.split(","):
        values |= _item(item, low, high, names or {})
    return values


def shortest_period_s(schedule: str) -> int | None:
    """Seconds between the two closest firings; None when day-of-month or month is restricted."""
    text = schedule.strip()
    if text.startswith("@"):
        if text not in MACRO_PERIOD_S:
            raise CronError(f"unknown macro {text!r}; use one of {sorted(MACRO_PERIOD_S)}")
        return MACRO_PERIOD_S[text]
    fields = text.split()
    if len(fields) != 5:
        raise CronError(f"{schedule!r} has {len(fields)} fields; cron needs 5")
    minute_f, hour_f, dom_f, month_f, dow_f = fields
    if dom_f not in ("*", "?") or month_f not in ("*", "?"):
        return None
    minutes = parse_field(minute_f, 0, 59)
    hours = parse_field(hour_f, 0, 23)
    days = {d % 7 for d in parse_field(dow_f, 0, 7, DAY_NAMES)}
    # Two weeks of minutes hold every gap of a schedule that repeats weekly, the wrap included.
    firings = [
        t
        for t in range(14 * MINUTES_PER_DAY)
        if (t // MINUTES_PER_DAY) % 7 in days and (t // 60) % 24 in hours and t % 60 in minutes
    ]
    if len(firings) < 2:
        raise CronError(f"{schedule!r} never fires")
    return 60 * min(b - a for a, b in itertools.pairwise(firings))
