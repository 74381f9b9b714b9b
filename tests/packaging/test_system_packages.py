"""scripts/system_packages.sh: what `make check` and `make setup` need from Debian, on a fake PATH.

The fake PATH holds stubs for the commands that are "installed"; no test runs the real apt-get.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

import pytest

from support.paths import REPO

SCRIPT = REPO / "scripts" / "system_packages.sh"
BASH = shutil.which("bash") or "/bin/bash"
ALL = ("npm", "chromium", "chromedriver", "prometheus-pushgateway", "promtool")
INSTALL = "apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y"


def _fake_path(
    tmp_path: Path, *commands: str, script: str = "exit 0", dpkg: str = "exit 0"
) -> Path:
    """Stubs of `commands`, and a `dpkg` that says Redmine's packages are installed (or not)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "dpkg").write_text(f"#!{BASH}\n{dpkg}\n")
    (bin_dir / "dpkg").chmod(0o755)
    for name in commands:
        stub = bin_dir / name
        stub.write_text(f"#!{BASH}\n{script}\n")
        stub.chmod(0o755)
    return bin_dir


def _run_script(bin_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [BASH, str(SCRIPT), *args],
        env={"PATH": str(bin_dir), "LC_ALL": "C"},
        capture_output=True,
        text=True,
        timeout=30,
    )


def _expected_command(packages: str) -> str:
    if os.geteuid() == 0:
        return f"  {INSTALL} {packages}"
    return f"  sudo sh -c '{INSTALL} {packages}'"


def test_everything_present_is_silent_and_exit_0(tmp_path: Path) -> None:
    result = _run_script(_fake_path(tmp_path, *ALL), "--check-only")
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def test_a_missing_package_stops_at_once_with_the_exact_command(tmp_path: Path) -> None:
    bin_dir = _fake_path(tmp_path, "npm", "chromium", "prometheus-pushgateway")
    result = _run_script(bin_dir, "--check-only")
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    assert lines[0] == "missing system packages (Debian):"
    assert lines[1] == "  chromedriver (package chromium-driver): the review page's browser tests"
    assert lines[2] == "  promtool (package prometheus): tests/k8s/test_k8s_prometheusrule.py"
    assert lines[-1] == _expected_command("chromium-driver prometheus")
    assert result.stdout == ""


def test_two_commands_of_one_package_name_it_once(tmp_path: Path) -> None:
    result = _run_script(
        _fake_path(tmp_path, "npm", "prometheus-pushgateway", "promtool"), "--check-only"
    )
    assert result.returncode == 1
    assert result.stderr.splitlines()[-1] == _expected_command("chromium chromium-driver")


def test_named_commands_check_only_those(tmp_path: Path) -> None:
    bin_dir = _fake_path(tmp_path, "chromium")
    assert _run_script(bin_dir, "--check-only", "chromium").returncode == 0
    result = _run_script(bin_dir, "--check-only", "npm")
    assert result.returncode == 1
    assert result.stderr.splitlines()[-1] == _expected_command("npm")


def test_redmines_packages_are_asked_of_dpkg_by_name(tmp_path: Path) -> None:
    asked = tmp_path / "dpkg.log"
    bin_dir = _fake_path(tmp_path, *ALL, dpkg=f'echo "$*" >> {asked}; [[ $2 != ruby-webrick ]]')
    result = _run_script(bin_dir, "--check-only")
    assert result.returncode == 1
    assert result.stderr.splitlines()[1] == (
        "  ruby-webrick (package ruby-webrick): tests/statehub/backends/test_redmine_*.py:"
        " the server Redmine runs in"
    )
    assert result.stderr.splitlines()[-1] == _expected_command("ruby-webrick")
    assert asked.read_text().split() == [
        "-s",
        "redmine",
        "-s",
        "redmine-sqlite",
        "-s",
        "ruby-webrick",
    ]


def test_venv_is_pythons_venv_module_with_ensurepip(tmp_path: Path) -> None:
    # A `python3` without ensurepip, as Debian's python3 is until python3-venv is installed.
    bin_dir = _fake_path(tmp_path, "python3", script="exit 1")
    result = _run_script(bin_dir, "--check-only", "venv")
    assert result.returncode == 1
    assert (
        result.stderr.splitlines()[1]
        == "  venv (package python3-venv): make setup: python3 -m venv"
    )
    assert result.stderr.splitlines()[-1] == _expected_command("python3-venv")
    (bin_dir / "python3").unlink()
    (bin_dir / "python3").symlink_to(sys.executable)  # this one has ensurepip
    assert _run_script(bin_dir, "--check-only", "venv").returncode == 0


def test_an_unknown_command_or_option_is_exit_2_naming_the_known(tmp_path: Path) -> None:
    bin_dir = _fake_path(tmp_path)
    unknown = _run_script(bin_dir, "docker")
    assert unknown.returncode == 2
    assert "unknown command docker (known: venv npm chromium chromedriver" in unknown.stderr
    assert _run_script(bin_dir, "--install").returncode == 2


def test_not_as_root_it_prints_the_command_with_sudo_and_installs_nothing(tmp_path: Path) -> None:
    """As a user (root drops to nobody with setpriv for this), even without --check-only."""
    shared = Path(tempfile.mkdtemp(prefix="system-packages-"))
    try:
        shared.chmod(0o755)
        log = shared / "apt.log"
        bin_dir = _fake_path(shared, *ALL[:-1])
        _fake_path(shared, "apt-get", script=f'echo "$*" >> {log}')
        # A copy the dropped user can read, wherever the clone lies (a 0700 folder, say).
        script = shared / SCRIPT.name
        shutil.copy(SCRIPT, script)
        script.chmod(0o755)
        argv = [BASH, str(script)]
        if os.geteuid() == 0:
            setpriv = shutil.which("setpriv")
            assert setpriv, "setpriv (util-linux) drops root for this test"
            argv = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", *argv]
        result = subprocess.run(
            argv, env={"PATH": str(bin_dir)}, capture_output=True, text=True, timeout=30
        )
    finally:
        shutil.rmtree(shared)
    assert result.returncode == 1
    assert result.stderr.splitlines()[-2:] == [
        "install them as root (or run make as root, which installs them):",
        f"  sudo sh -c '{INSTALL} prometheus'",
    ]
    assert not log.exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="installing is what root does (CI runs as root)")
def test_as_root_it_updates_once_then_installs_what_is_missing(tmp_path: Path) -> None:
    log = tmp_path / "apt.log"
    bin_dir = _fake_path(tmp_path, "npm", "chromium", "chromedriver")
    _fake_path(tmp_path, "apt-get", script=f'echo "$DEBIAN_FRONTEND $*" >> {log}')
    result = _run_script(bin_dir)
    assert result.returncode == 0, result.stderr
    assert log.read_text().splitlines() == [
        " update",
        "noninteractive install -y prometheus-pushgateway prometheus",
    ]


def test_ci_runs_make_check_and_make_check_starts_with_the_packages() -> None:
    ci = (SCRIPT.parent.parent / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    commands = [line for line in ci if line.strip() and not line.startswith("#")]
    assert commands == ["set -euo pipefail", 'cd "$(dirname "$0")/.."', "make check"]
    make = shutil.which("make")
    assert make is not None
    # Under `make check` itself, MAKELEVEL and MAKEFLAGS would make it print its directory.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MAKE", "MFLAGS"))}
    planned = subprocess.run(
        [make, "-n", "--no-print-directory", "check"],
        cwd=SCRIPT.parent.parent,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.splitlines()
    assert planned[0] == "scripts/system_packages.sh"


def test_the_readmes_requirements_name_python_and_every_package() -> None:
    repo = SCRIPT.parent.parent
    readme = (repo / "README.md").read_text(encoding="utf-8")
    pyproject = tomllib.loads((repo / "pyproject.toml").read_text(encoding="utf-8"))
    least = pyproject["project"]["requires-python"].removeprefix(">=")
    start = readme.index("On a fresh clone")
    requirements = " ".join(readme[start : readme.index("```", start)].split())
    assert f"Python ≥ {least}" in requirements
    script = SCRIPT.read_text(encoding="utf-8")
    packages = re.findall(r"^  \[[\w-]+\]=([\w-]+)$", script, re.MULTILINE)
    assert len(packages) == 9
    for package in ["make", "npm", *packages]:
        assert f"`{package}`" in requirements or f" {package} " in requirements, package
