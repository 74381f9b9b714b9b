"""The wheel runs alone: built from the repository, installed in a fresh venv outside it, and run
from a directory that holds no canon, scenarios or demo answer.

Offline: the wheel is built with the project venv's setuptools (no build isolation, no index),
installed with `--no-deps`, and the fresh venv reaches the dependencies through a `.pth` line
naming the project venv's site-packages (which adds the directory only: the project's own
editable install there is not activated).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from custodian_runtime.evals.baseline import scores
from support.paths import REPO

SOURCES = ("pyproject.toml", "README.md", "LICENSE", "runtime", "canon", "demo", "evals")
SCENARIOS = sorted(p.stem for p in (REPO / "evals" / "scenarios").glob("*.json"))

pytestmark = pytest.mark.slow


@dataclass(frozen=True)
class Installed:
    """A fresh venv with the wheel installed, and the wheel it came from."""

    venv: Path
    wheel: Path

    def custodian(self, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
        """Run the installed `custodian` in `cwd`, with no project variable set."""
        keep = ("HOME", "LANG", "LC_ALL", "TMPDIR")
        env = {k: v for k, v in os.environ.items() if k in keep}
        # Only the venv on PATH: no `claude` can be found, so the embedded default is `offline`.
        env |= {"PATH": str(self.venv / "bin"), "PYTHONDONTWRITEBYTECODE": "1"}
        return subprocess.run(
            [str(self.venv / "bin" / "custodian"), *args],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )


def _build(tmp: Path) -> Path:
    """Copy the sources (links kept, as git keeps them) and build the wheel there."""
    src = tmp / "src"
    src.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", "build")
    for name in SOURCES:
        if (REPO / name).is_dir():
            shutil.copytree(REPO / name, src / name, symlinks=True, ignore=ignore)
        else:
            shutil.copy2(REPO / name, src / name)
    dist = tmp / "dist"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    subprocess.run(
        [*pip, "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-w", dist, src],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = dist.glob("custodian_runtime-*.whl")
    return wheel


def _install(tmp: Path, wheel: Path) -> Path:
    """A fresh venv holding the wheel; the dependencies come from the project venv."""
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True, timeout=120)
    python = venv / "bin" / "python"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--python", str(python)]
    subprocess.run(
        [*pip, "install", "--no-deps", "--no-index", wheel],
        check=True,
        capture_output=True,
        timeout=300,
    )
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    (Path(site) / "project-dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    return venv


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    tmp = tmp_path_factory.mktemp("wheel")
    assert REPO not in tmp.parents
    wheel = _build(tmp)
    yield Installed(_install(tmp, wheel), wheel)


def _workdir(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    assert REPO not in work.parents and not (work / "canon").exists()
    return work


def test_the_wheel_holds_the_data_the_license_and_its_dependencies(installed: Installed) -> None:
    with zipfile.ZipFile(installed.wheel) as wheel:
        names = set(wheel.namelist())
        (metadata_name,) = (n for n in names if n.endswith(".dist-info/METADATA"))
        metadata = wheel.read(metadata_name).decode("utf-8")
    data = "custodian_runtime/_data/"
    for source in ("canon", "demo", "evals/scenarios", "evals/seeds"):
        files = [p for p in (REPO / source).rglob("*") if p.is_file()]
        assert {data + str(p.relative_to(REPO)) for p in files} <= names, source
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert "License-Expression: Apache-2.0" in metadata.splitlines()
    assert any(line.startswith("Requires-Dist: markupsafe") for line in metadata.splitlines())
    assert any(line.startswith("Requires-Dist: python-dotenv") for line in metadata.splitlines())


def test_the_installed_package_is_the_wheel_not_the_checkout(
    installed: Installed, tmp_path: Path
) -> None:
    python = installed.venv / "bin" / "python"
    probe = "import custodian_runtime.packaged as p; print(p.default_canon().resolve())"
    done = subprocess.run(
        [python, "-c", probe], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    canon = Path(done.stdout.strip())
    assert installed.venv in canon.parents and (canon / "constitution.md").is_file()


def test_a_run_with_the_embedded_hub_and_the_offline_model_uses_the_packaged_canon(
    installed: Installed, tmp_path: Path
) -> None:
    work = _workdir(tmp_path)
    args = ("run", "--domain", "website", "--hub", "embedded", "--llm", "offline", "--json")
    done = installed.custodian(work, *args)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["status"] == "completed" and summary["counts"]["executed"] > 0
    assert "canon: packaged" in done.stderr and str(installed.venv) in done.stderr
    assert (work / ".custodian" / "hub.sqlite3").is_file()


def test_embedded_defaults_run_alone(installed: Installed, tmp_path: Path) -> None:
    work = _workdir(tmp_path)
    done = installed.custodian(work, "run", "--domain", "platform", "--embedded-defaults")
    assert done.returncode == 0, done.stderr
    assert "(platform): completed" in done.stdout
    assert "source=embedded default" in done.stderr
    assert list((work / "memory" / "working").glob("*-platform.md"))


def test_init_copies_the_canon_and_the_demo_it_prints_runs(
    installed: Installed, tmp_path: Path
) -> None:
    work = _workdir(tmp_path)
    done = installed.custodian(work, "init", "canon")
    assert done.returncode == 0, done.stderr
    copied = sorted(str(p.relative_to(work / "canon")) for p in (work / "canon").rglob("*.md"))
    assert copied == ["constitution.md", "domains/platform.md", "domains/website.md"]
    assert (work / "canon" / "constitution.md").read_bytes() == (
        REPO / "canon" / "constitution.md"
    ).read_bytes()
    demos = [line for line in done.stdout.splitlines() if line.startswith("demo: ")]
    assert [d.split()[4] for d in demos] == ["platform", "website"]  # every demo domain's answer
    (demo,) = (line for line in demos if "--domain website " in line)
    argv = shlex.split(demo.removeprefix("demo: "))
    assert argv[0] == "custodian" and str(installed.venv) in demo
    ran = installed.custodian(work, *argv[1:])
    assert ran.returncode == 0, ran.stderr
    assert "completed: 3 executed, 2 queued, 1 denied" in ran.stdout
    assert "canon: packaged" not in ran.stderr
    pending = installed.custodian(work, "approvals", "list", "--status", "pending", "--json")
    assert pending.returncode == 0, pending.stderr
    assert len(json.loads(pending.stdout)) == 2


def test_init_never_overwrites(installed: Installed, tmp_path: Path) -> None:
    work = _workdir(tmp_path)
    (work / "mine").mkdir()
    (work / "mine" / "constitution.md").write_text("my own\n", "utf-8")
    done = installed.custodian(work, "init", "mine")
    assert done.returncode == 2
    assert "not empty" in done.stderr and "init never overwrites" in done.stderr
    assert (work / "mine" / "constitution.md").read_text("utf-8") == "my own\n"


def test_eval_runs_the_packaged_scenarios(installed: Installed, tmp_path: Path) -> None:
    work = _workdir(tmp_path)
    done = installed.custodian(work, "eval", "--llm", "offline", "--json")
    # 0, as in the checkout: the offline planner proposes nothing harmful in any scenario.
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert sorted(s["name"] for s in report["scenarios"]) == SCENARIOS
    baseline = json.loads((REPO / "evals" / "baseline-offline.json").read_text("utf-8"))
    assert scores(report) == baseline
