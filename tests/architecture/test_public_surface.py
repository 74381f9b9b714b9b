"""Each package names what it offers; outside it, runtime code imports no private module of it."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from support.paths import REPO

RUNTIME = REPO / "runtime"
TOP = "custodian_runtime"
# Every package of the runtime: a folder with an __init__.py, found on disk, not listed by hand.
PACKAGES = tuple(sorted(p.parent.name for p in (RUNTIME / TOP).glob("*/__init__.py")))


@pytest.mark.parametrize("name", PACKAGES)
def test_the_package_names_what_it_offers(name: str) -> None:
    package = importlib.import_module(f"{TOP}.{name}")
    offered = package.__all__
    assert offered and len(set(offered)) == len(offered)
    assert all(hasattr(package, n) and not n.startswith("_") for n in offered)


def _module_of(path: Path, root: Path) -> tuple[str, ...]:
    parts = path.relative_to(root).with_suffix("").parts
    return parts[:-1] if parts[-1] == "__init__" else parts


def _owner(parts: list[str], root: Path) -> tuple[str, ...] | None:
    """The package a private name belongs to: the one holding its first `_x` part, or None."""
    for i, part in enumerate(parts[1:], start=1):
        if part.startswith("_") and not part.startswith("__"):
            owner = tuple(parts[:i])
            # `pkg.module._name`: a private name of a module belongs to the module's package.
            return owner if (root.joinpath(*owner) / "__init__.py").is_file() else owner[:-1]
    return None


def private_imports(path: Path, root: Path = RUNTIME) -> list[str]:
    """Each private name (`custodian_runtime.<pkg>…._x`) `path` imports from outside its package."""
    here = _module_of(path, root)
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = []
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        for full in names:
            parts = full.split(".")
            owner = _owner(parts, root) if parts[0] == TOP else None
            if owner is not None and here[: len(owner)] != owner:
                found.append(f"{path.relative_to(root)}:{node.lineno} {full}")
    return found


def test_no_private_module_is_imported_from_outside_its_package() -> None:
    found = []
    for path in sorted((RUNTIME / TOP).rglob("*.py")):
        found += private_imports(path)
    assert found == [], "import the package's public name instead"


def test_the_checker_finds_a_made_up_violation(tmp_path: Path) -> None:
    """The checker itself: a private import across packages is caught, one inside is not."""
    root = tmp_path / "runtime"
    files = {
        "journal/__init__.py": "",
        "journal/_lines.py": "def parse_line(): ...\n",
        "journal/store.py": "from custodian_runtime.journal._lines import parse_line\n",
        "journal/verify.py": "from custodian_runtime.journal.store import _helper\n",
        "standing/__init__.py": "",
        "standing/shadow.py": (
            "import os\n"
            "from custodian_runtime.journal import store\n"
            "from custodian_runtime.journal._lines import parse_line\n"
            "from custodian_runtime.journal import _lines\n"
            "import custodian_runtime.journal._lines\n"
            "from custodian_runtime.journal.store import _helper\n"
            "from custodian_runtime._lazy import lazy_attributes\n"
        ),
    }
    for name, text in files.items():
        path = root / TOP / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (root / TOP / "__init__.py").write_text("", encoding="utf-8")
    inside = [private_imports(root / TOP / "journal" / n, root) for n in ("store.py", "verify.py")]
    assert inside == [[], []]
    assert private_imports(root / TOP / "standing" / "shadow.py", root) == [
        f"{TOP}/standing/shadow.py:3 {TOP}.journal._lines",
        f"{TOP}/standing/shadow.py:3 {TOP}.journal._lines.parse_line",
        f"{TOP}/standing/shadow.py:4 {TOP}.journal._lines",
        f"{TOP}/standing/shadow.py:5 {TOP}.journal._lines",
        f"{TOP}/standing/shadow.py:6 {TOP}.journal.store._helper",
    ]


def test_the_core_names_each_public_module() -> None:
    top = RUNTIME / "custodian_runtime" / "core"
    # operations/ is the registry: its __init__ offers the specs' lookups, and each operation's
    # module is reached through its spec (test_operations_registry.py checks those).
    groups = sorted(p.parent for p in top.glob("*/__init__.py") if p.parent.name != "operations")
    for package in [top, *groups]:
        name = ".".join(package.relative_to(RUNTIME).parts)
        modules = sorted(p.stem for p in package.glob("[!_]*.py"))
        modules += [p.parent.name for p in package.glob("*/__init__.py")]
        offered = importlib.import_module(name).__all__
        assert offered == sorted(modules), f"list each public module of {name} in its __init__.py"
