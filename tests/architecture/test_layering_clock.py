"""The wall clock is read in one place (custodian/clock.py); everything else takes it in."""

from __future__ import annotations

import ast
from pathlib import Path

from support.paths import REPO

PACKAGE = REPO / "runtime" / "custodian_runtime"
CLOCK = PACKAGE / "clock.py"
# Reads of the time of day: datetime.now(), datetime.utcnow(), date.today(), time.time().
WALL = {("datetime", "now"), ("datetime", "utcnow"), ("datetime", "today"), ("date", "today")}
WALL |= {("time", "time"), ("time", "time_ns")}
# Each exception names its file and why it may read the wall clock itself (none today).
EXCEPTIONS: dict[str, str] = {}


def _wall_reads(path: Path, root: Path = PACKAGE) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        where = f"{path.relative_to(root)}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.ImportFrom) and node.module == "time":
            found += [f"{where} time.{a.name}" for a in node.names if ("time", a.name) in WALL]
        name = (
            node.value.id
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
            else ""
        )
        if isinstance(node, ast.Attribute) and (name, node.attr) in WALL:
            found.append(f"{where} {name}.{node.attr}")
    return found


def test_only_the_clock_module_reads_the_wall_clock() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path != CLOCK and str(path.relative_to(PACKAGE)) not in EXCEPTIONS:
            found += _wall_reads(path)
    assert found == [], "take the time from custodian_runtime.clock.utc_now (or a clock argument)"


def test_each_exception_still_reads_the_wall_clock() -> None:
    stale = [name for name in EXCEPTIONS if not _wall_reads(PACKAGE / name)]
    assert stale == [], "remove these from EXCEPTIONS: they no longer read the wall clock"


def test_the_clock_module_is_what_it_says() -> None:
    assert _wall_reads(CLOCK) == ["clock.py:18 datetime.now"]


def test_the_checker_finds_each_way_of_reading_the_wall_clock(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import time\n"
        "from datetime import date, datetime\n"
        "from time import time_ns, monotonic\n"
        "a = datetime.now()\n"
        "b = date.today()\n"
        "c = time.time()\n"
        "d = time.monotonic()\n"
        "e = datetime.fromisoformat('2026-01-01')\n",
        encoding="utf-8",
    )
    assert _wall_reads(bad, tmp_path) == [
        "bad.py:3 time.time_ns",
        "bad.py:4 datetime.now",
        "bad.py:5 date.today",
        "bad.py:6 time.time",
    ]
