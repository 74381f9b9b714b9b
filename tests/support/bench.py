"""The bench scripts as the tests of bench/ import them: in a test's folder, with no settings."""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from types import ModuleType

import pytest

from support.paths import REPO

BENCH = REPO / "bench"


def bench_module(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, name: str) -> ModuleType:
    """The bench script `name`, imported, run in `tmp_path` with no CUSTODIAN or STATE_HUB
    variable."""
    monkeypatch.syspath_prepend(str(BENCH))
    monkeypatch.chdir(tmp_path)
    for variable in [n for n in os.environ if n.startswith(("CUSTODIAN_", "STATE_HUB_"))]:
        monkeypatch.delenv(variable)
    return importlib.import_module(name)


@pytest.fixture
def bench(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> ModuleType:
    """The month's bench module (grants_month_hub), as `bench_module` gives it."""
    return bench_module(monkeypatch, tmp_path, "grants_month_hub")
