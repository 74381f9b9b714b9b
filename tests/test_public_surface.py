"""Each package names what it offers; outside it, runtime code imports no private module of it."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

RUNTIME = Path(__file__).resolve().parent.parent / "runtime"
PACKAGES = (
    "core",
    "memory",
    "llm",
    "statehub",
    "render",
    "audit",
    "approvals",
    "writes",
    "run",
    "review",
    "evals",
    "metrics",
)


@pytest.mark.parametrize("name", PACKAGES)
def test_the_package_names_what_it_offers(name: str) -> None:
    package = importlib.import_module(f"custodian_runtime.{name}")
    offered = package.__all__
    assert offered and len(set(offered)) == len(offered)
    assert all(hasattr(package, n) and not n.startswith("_") for n in offered)


def _private_imports(path: Path) -> list[str]:
    """`custodian.<pkg>._x` imported by `path`, when `path` is not inside `<pkg>`."""
    inside = path.relative_to(RUNTIME / "custodian_runtime").parts[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = []
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        for full in names:
            parts = full.split(".")
            public = len(parts) < 3 or parts[0] != "custodian" or parts[1] not in PACKAGES
            if not public and parts[2].startswith("_") and parts[1] != inside:
                found.append(f"{path.relative_to(RUNTIME)}:{node.lineno} {full}")
    return found


def test_no_private_module_is_imported_from_outside_its_package() -> None:
    found = []
    for path in sorted((RUNTIME / "custodian_runtime").rglob("*.py")):
        found += _private_imports(path)
    assert found == [], "import the package's public name instead"


def test_the_core_names_each_public_module() -> None:
    top = RUNTIME / "custodian_runtime" / "core"
    # operations/ is the registry: its __init__ offers the specs' lookups, and each operation's
    # module is reached through its spec (tests/test_operations_registry.py checks those).
    groups = sorted(p.parent for p in top.glob("*/__init__.py") if p.parent.name != "operations")
    for package in [top, *groups]:
        name = ".".join(package.relative_to(RUNTIME).parts)
        modules = sorted(p.stem for p in package.glob("[!_]*.py"))
        modules += [p.parent.name for p in package.glob("*/__init__.py")]
        offered = importlib.import_module(name).__all__
        assert offered == sorted(modules), f"list each public module of {name} in its __init__.py"
