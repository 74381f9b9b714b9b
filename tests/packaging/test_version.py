"""One version source: the package's `__version__`, read by pyproject, printed and journalled."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from datetime import UTC, datetime
from importlib.metadata import entry_points, version
from pathlib import Path

import pytest
from packaging.version import Version

from custodian_hub import ReferenceHub
from custodian_runtime import __version__, packaged
from custodian_runtime.core.journal.kinds import RunStarted, decode
from custodian_runtime.core.journal.records import make_record
from custodian_runtime.journal.store import JournalStore
from support.paths import REPO
from support.runs import run_plan

PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


def test_pyproject_reads_the_packages_version_and_the_install_agrees() -> None:
    project = PYPROJECT["project"]
    assert "version" not in project and "version" in project["dynamic"]
    dynamic = PYPROJECT["tool"]["setuptools"]["dynamic"]["version"]
    assert dynamic == {"attr": "custodian_runtime.__version__"}
    assert version("custodian-runtime") == __version__
    assert Version(__version__) > Version("0.1.0")


def test_both_console_scripts_run_the_same_function() -> None:
    scripts = PYPROJECT["project"]["scripts"]
    assert scripts["custodian"] == scripts["custodian-state"] == "custodian_runtime.cli:main"
    installed = {e.name: e for e in entry_points(group="console_scripts")}
    assert installed["custodian"].value == installed["custodian-state"].value
    assert installed["custodian-state"].load() is installed["custodian"].load()


def test_version_flag_prints_the_version_and_revision() -> None:
    bin_dir = Path(sys.executable).parent
    for name in ("custodian", "custodian-state"):
        done = subprocess.run(
            [str(bin_dir / name), "--version"], capture_output=True, text=True, timeout=30
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == f"custodian {__version__} (revision {packaged.revision()})"


def test_revision_is_read_from_the_build_file_never_from_git(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    read = packaged.revision.__wrapped__
    monkeypatch.setattr(packaged, "DATA", tmp_path)
    assert read() == "unknown"  # no file: not built from a checkout that knew it
    (tmp_path / "REVISION").write_text("0123abcd" * 5 + "\n", encoding="utf-8")
    assert read() == "0123abcd" * 5
    (tmp_path / "REVISION").write_text("$(git rev-parse HEAD)\n", encoding="utf-8")
    assert read() == "unknown"  # an unexpanded build argument is not a revision


def test_every_run_started_says_which_release_wrote_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    memory = tmp_path / "memory"
    assert (
        run_plan(tmp_path, monkeypatch, small_hub.url, {"observations": ["quiet"]}, "--force").code
        == 0
    )
    records = JournalStore(memory).open("website", repair=False).history
    started = [decode(r) for r in records if r.kind == "run_started"]
    assert started and all(isinstance(s, RunStarted) for s in started)
    assert {(s.version, s.revision) for s in started} == {(__version__, packaged.revision())}


def test_a_run_started_of_an_older_release_still_decodes() -> None:
    data = {"model_spec": "offline", "pid": 7, "host": "h", "dry_run": False}
    old = make_record(None, "r1", "website", "run_started", datetime(2026, 1, 1, tzinfo=UTC), data)
    started = decode(old)
    assert isinstance(started, RunStarted)
    assert (started.version, started.revision, started.model_spec) == (None, None, "offline")
