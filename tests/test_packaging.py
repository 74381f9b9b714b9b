"""The package metadata builds on current setuptools, and CI's gatekeepers are pinned."""

from __future__ import annotations

import re
import tomllib
from importlib.metadata import version
from pathlib import Path

from packaging.specifiers import SpecifierSet
from packaging.version import Version

PYPROJECT = tomllib.loads((Path(__file__).resolve().parent.parent / "pyproject.toml").read_text())


def test_the_license_is_a_pep_639_expression_and_setuptools_supports_it() -> None:
    assert PYPROJECT["project"]["license"] == "LicenseRef-Proprietary"
    setuptools = next(r for r in PYPROJECT["build-system"]["requires"] if r.startswith("setup"))
    # PEP 639 license expressions arrived in setuptools 77.
    assert Version("76.9") not in SpecifierSet(setuptools.removeprefix("setuptools"))


def test_ruff_and_mypy_are_pinned_to_a_range_that_holds_the_installed_version() -> None:
    dev = PYPROJECT["project"]["optional-dependencies"]["dev"]
    for tool in ("ruff", "mypy"):
        spec = next(r for r in dev if re.match(rf"{tool}\b", r))
        allowed = SpecifierSet(spec.removeprefix(tool))
        assert any(s.operator == "<" for s in allowed), f"{tool} has no upper bound"
        assert Version(version(tool)) in allowed


RUNTIME = Path(__file__).resolve().parent.parent / "runtime"


def test_both_packages_are_found_and_every_package_data_pattern_matches_a_file() -> None:
    from setuptools import find_packages

    found = PYPROJECT["tool"]["setuptools"]["packages"]["find"]
    packages = find_packages(found["where"][0], include=found["include"])
    assert {"custodian_runtime", "custodian_runtime.statehub", "custodian_hub"} <= set(packages)
    assert all(p.split(".")[0] in ("custodian_runtime", "custodian_hub") for p in packages)
    for package, patterns in PYPROJECT["tool"]["setuptools"]["package-data"].items():
        assert package in packages
        for pattern in patterns:
            assert list((RUNTIME / package).glob(pattern)), f"{package}: {pattern} matches nothing"
    hub_data = PYPROJECT["tool"]["setuptools"]["package-data"]["custodian_hub"]
    shipped = {f.name for pattern in hub_data for f in (RUNTIME / "custodian_hub").glob(pattern)}
    assert "demo.json" in shipped, "the demo seed ships with the hub"


def test_mypy_checks_the_runtime_and_the_reference_hub() -> None:
    assert PYPROJECT["tool"]["mypy"]["packages"] == ["custodian_runtime", "custodian_hub"]
