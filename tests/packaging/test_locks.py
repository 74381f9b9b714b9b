"""The hash-locked requirement files cover pyproject.toml; the running environment is the lock."""

from __future__ import annotations

import re
import shlex
import tomllib
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from support.paths import REPO

LOCKS = REPO / "requirements"
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
PIN = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>\S+)(?P<rest>.*)$")
HASH = re.compile(r"--hash=sha256:[0-9a-f]{64}")
# The pip-compile options Renovate's pip-compile manager re-runs from a lock's header; any other
# option makes it skip the file, and the lock would silently stop being kept current.
RENOVATE_OPTIONS = {
    "--allow-unsafe",
    "--generate-hashes",
    "--no-emit-index-url",
    "--strip-extras",
    "--extra",
    "--constraint",
    "--output-file",
}


def entries(path: Path) -> list[str]:
    """Each requirement of a lock as one line: continuations joined, comments dropped."""
    joined = re.sub(r"\\\n", " ", path.read_text(encoding="utf-8"))
    lines = (line.split("#", 1)[0].strip() for line in joined.splitlines())
    return [line for line in lines if line]


def pins(path: Path) -> dict[str, Version]:
    """Canonical name -> pinned version for every entry of a lock."""
    found: dict[str, Version] = {}
    for entry in entries(path):
        match = PIN.match(entry)
        assert match, f"{path.name}: {entry[:80]!r} is not pinned with =="
        found[canonicalize_name(match["name"])] = Version(match["version"])
    return found


def runtime_requirements() -> list[Requirement]:
    return [Requirement(r) for r in PROJECT["project"]["dependencies"]]


def dev_requirements() -> list[Requirement]:
    return [Requirement(r) for r in PROJECT["project"]["optional-dependencies"]["dev"]]


def build_requirements() -> list[Requirement]:
    return [Requirement(r) for r in PROJECT["build-system"]["requires"]]


@pytest.mark.parametrize(
    ("lock", "requirements"),
    [
        ("runtime.txt", runtime_requirements),
        ("dev.txt", lambda: runtime_requirements() + dev_requirements()),
        ("build.txt", build_requirements),
    ],
)
def test_every_dependency_pyproject_names_is_locked_within_its_range(
    lock: str, requirements: object
) -> None:
    locked = pins(LOCKS / lock)
    assert callable(requirements)
    for requirement in requirements():
        name = canonicalize_name(requirement.name)
        assert name in locked, f"{requirement.name} is not in requirements/{lock}: run `make lock`"
        assert requirement.specifier.contains(locked[name], prereleases=True), (
            f"requirements/{lock} pins {name}=={locked[name]}, outside {requirement}: `make lock`"
        )


@pytest.mark.parametrize("lock", ["runtime.txt", "dev.txt", "build.txt"])
def test_every_pinned_line_carries_a_sha256_hash(lock: str) -> None:
    for entry in entries(LOCKS / lock):
        assert HASH.search(entry), f"requirements/{lock}: {entry.split()[0]} has no sha256 hash"
        assert "@" not in entry.split()[0] and not entry.startswith("-e"), entry


def test_the_dev_lock_pins_runtime_packages_as_the_runtime_lock_does() -> None:
    runtime, dev = pins(LOCKS / "runtime.txt"), pins(LOCKS / "dev.txt")
    differ = {n: (v, dev.get(n)) for n, v in runtime.items() if dev.get(n) != v}
    assert not differ, f"runtime and dev locks disagree: {differ}; run `make lock`"


def test_the_build_lock_input_matches_the_build_system_requirement() -> None:
    wanted = {str(r) for r in build_requirements()}
    declared = {str(Requirement(line)) for line in entries(LOCKS / "build.in")}
    assert declared == wanted, "requirements/build.in must equal [build-system] requires"


@pytest.mark.parametrize("lock", ["runtime.txt", "dev.txt", "build.txt"])
def test_each_header_is_a_pip_compile_command_renovate_can_rerun(lock: str) -> None:
    text = (LOCKS / lock).read_text(encoding="utf-8")
    command = re.search(r"^#    (pip-compile .*)$", text, re.MULTILINE)
    assert command, f"requirements/{lock} has no pip-compile header: regenerate with `make lock`"
    argv = shlex.split(command[1])[1:]
    options = {a.split("=", 1)[0] for a in argv if a.startswith("-")}
    assert options <= RENOVATE_OPTIONS, f"Renovate cannot re-run {options - RENOVATE_OPTIONS}"
    assert {"--generate-hashes", "--no-emit-index-url"} <= options
    assert f"--output-file=requirements/{lock}" in argv


def test_the_environment_running_the_tests_was_installed_from_the_locks() -> None:
    locked = pins(LOCKS / "dev.txt") | pins(LOCKS / "build.txt")
    wrong = {}
    for name, pinned in locked.items():
        try:
            installed = Version(version(name))
        except PackageNotFoundError:
            installed = None
        if installed != pinned:
            wrong[name] = (str(pinned), str(installed))
    assert not wrong, f"installed differs from the lock (locked, installed): {wrong}; `make setup`"
