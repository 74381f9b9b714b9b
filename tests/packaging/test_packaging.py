"""The package metadata builds on current setuptools, and CI's gatekeepers are pinned."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions, version

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from support.paths import REPO

PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())


def test_the_license_is_a_pep_639_expression_and_setuptools_supports_it() -> None:
    project = PYPROJECT["project"]
    assert project["license"] == "Apache-2.0"
    assert project["license-files"] == ["LICENSE"]
    text = (REPO / "LICENSE").read_text("utf-8")
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    # PEP 639: with a license expression, a `License ::` classifier is an error.
    assert not [c for c in project["classifiers"] if c.startswith("License ::")]
    assert "Typing :: Typed" in project["classifiers"]
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


RUNTIME = REPO / "runtime"


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


def _imported_top_levels() -> set[str]:
    """Every top-level module the two packages import, outside the standard library."""
    found: set[str] = set()
    for path in RUNTIME.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Import):
                found |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.add(node.module.split(".")[0])
    return found - set(sys.stdlib_module_names) - {"custodian_runtime", "custodian_hub"}


def _normal(name: str) -> str:
    """A distribution name as the index compares it (PEP 503): `prometheus_client` is
    `prometheus-client`."""
    return re.sub(r"[-_.]+", "-", name).lower()


def test_every_library_the_runtime_imports_is_a_declared_dependency() -> None:
    declared = {
        _normal(re.split(r"[<>=!~\[ ;]", r)[0]) for r in PYPROJECT["project"]["dependencies"]
    }
    distributions = packages_distributions()
    missing = {
        module: distributions.get(module)
        for module in _imported_top_levels()
        if not {_normal(d) for d in distributions.get(module, [])} & declared
    }
    assert missing == {}, "declare these in [project] dependencies"
    assert {"markupsafe", "python-dotenv"} <= declared


def test_the_default_canon_scenarios_and_demo_ship_as_links_to_the_one_copy() -> None:
    data = RUNTIME / "custodian_runtime" / "_data"
    links = {
        "canon": "canon",
        "demo": "demo",
        "evals/scenarios": "evals/scenarios",
        "evals/seeds": "evals/seeds",
    }
    for inside, source in links.items():
        assert (data / inside).is_symlink(), f"_data/{inside} must link to {source}/, not copy it"
        assert (data / inside).resolve() == (REPO / source).resolve()
    shipped = PYPROJECT["tool"]["setuptools"]["package-data"]["custodian_runtime"]
    files = {
        f.resolve() for pattern in shipped for f in (RUNTIME / "custodian_runtime").glob(pattern)
    }
    for source in ("canon", "demo", "evals/scenarios", "evals/seeds"):
        wanted = {f.resolve() for f in (REPO / source).rglob("*") if f.is_file()}
        assert wanted and wanted <= files, f"a file under {source}/ is not shipped"


def test_project_urls_are_absolute_when_given() -> None:
    # The project has no public home yet: an invented host would mislead, and a relative path
    # is not a URL (PyPI rejects it). Any URL added later must be absolute https.
    for url in PYPROJECT["project"].get("urls", {}).values():
        assert url.startswith("https://"), url
