"""Each package names what it offers; outside it, runtime code imports no private module of it."""

from __future__ import annotations

import ast
import importlib
import tomllib
from pathlib import Path

import pytest

from custodian_runtime._lazy import offered
from support.paths import REPO

RUNTIME = REPO / "runtime"
TOP = "custodian_runtime"
# Every package of the runtime: a folder with an __init__.py, found on disk, not listed by hand.
PACKAGES = tuple(sorted(p.parent.name for p in (RUNTIME / TOP).glob("*/__init__.py")))
# Every lazy face: an __init__.py whose names are imported when first read (_lazy.py).
FACES = {
    ".".join(p.parent.relative_to(RUNTIME).parts): p
    for p in sorted(RUNTIME.rglob("__init__.py"))
    if "lazy_attributes(globals())" in p.read_text(encoding="utf-8")
}


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


def _submodules(package: Path) -> set[str]:
    return {p.stem for p in package.glob("*.py")} | {
        p.parent.name for p in package.glob("*/__init__.py")
    }


def _type_checking_imports(path: Path, package: str) -> dict[str, tuple[str, str]]:
    """What `offered` should find, read with `ast`: each name the TYPE_CHECKING block imports."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    block = next(
        n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING"
    )
    found = {}
    for node in block.body:
        assert isinstance(node, ast.ImportFrom) and node.module and node.level == 0, ast.unparse(
            node
        )
        for alias in node.names:
            module = node.module
            found[alias.asname or alias.name] = (
                (f"{module}.{alias.name}", "") if module == package else (module, alias.name)
            )
    return found


@pytest.mark.parametrize("name", sorted(FACES))
def test_a_face_names_each_name_once_and_offers_exactly_those(name: str) -> None:
    """The face's TYPE_CHECKING imports are its one list: `__all__`, `dir()` and the lazy reads."""
    path = FACES[name]
    source = path.read_text(encoding="utf-8")
    names = offered(source, name)
    assert names == _type_checking_imports(path, name)
    package = importlib.import_module(name)
    assert package.__all__ == sorted(names)
    assert "__all__ =" not in source and "dict.fromkeys" not in source, "name each name once"
    # A name that is also a submodule's is the module once that is imported, whatever the face says.
    shadowed = [n for n, (_, inside) in names.items() if inside and n in _submodules(path.parent)]
    assert shadowed == [], "a face offers no name that is also one of its modules"
    for public, (module, inside) in names.items():
        defined = importlib.import_module(module)
        assert getattr(package, public) is (getattr(defined, inside) if inside else defined)


def test_mypy_reads_each_face_as_exporting_its_type_checking_imports() -> None:
    """pyproject.toml lists each face for mypy's `implicit_reexport` (a face has no `__all__`)."""
    config = tomllib.loads((RUNTIME.parent / "pyproject.toml").read_text(encoding="utf-8"))
    listed = next(
        o["module"] for o in config["tool"]["mypy"]["overrides"] if o.get("implicit_reexport")
    )
    assert listed == sorted(FACES), "list each face (and only faces) in pyproject.toml"


def test_the_face_reader_agrees_with_ast_and_fails_without_a_block(tmp_path: Path) -> None:
    face = tmp_path / "pkg" / "__init__.py"
    face.parent.mkdir()
    face.write_text(
        '"""A face."""\n\n'
        "from typing import TYPE_CHECKING\n\n"
        "if TYPE_CHECKING:\n"
        "    from pkg import sub  # a submodule\n"
        "    from pkg._a import A, b as public_b\n"
        "    from pkg.c import (\n"
        "        C,\n"
        "        from_c,  # a name with `from` in it\n"
        "    )\n\n"
        "if not TYPE_CHECKING:\n"
        "    __getattr__, __dir__ = lazy_attributes(globals())\n",
        encoding="utf-8",
    )
    names = offered(face.read_text(encoding="utf-8"), "pkg")
    assert names == {
        "sub": ("pkg.sub", ""),
        "A": ("pkg._a", "A"),
        "public_b": ("pkg._a", "b"),
        "C": ("pkg.c", "C"),
        "from_c": ("pkg.c", "from_c"),
    }
    assert names == _type_checking_imports(face, "pkg")
    with pytest.raises(ImportError, match="no `if TYPE_CHECKING:` block"):
        offered('"""A face."""\nX = 1\n', "pkg")
