"""Each package names what it offers; outside it, runtime code imports no private module of it."""

from __future__ import annotations

import ast
import importlib
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from custodian_runtime._lazy import offered
from support.paths import REPO
from support.trees import write_tree

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


def offer_problems(package: ModuleType) -> list[str]:
    """What a package offers wrongly: nothing at all, a name twice, a private name, or a name
    it does not have."""
    names = list(getattr(package, "__all__", []))
    problems = [] if names else [f"{package.__name__}: offers nothing"]
    problems += [f"{n}: offered twice" for n in sorted({n for n in names if names.count(n) > 1})]
    problems += [f"{n}: a private name offered" for n in names if n.startswith("_")]
    problems += [f"{n}: offered, and not there" for n in names if not hasattr(package, n)]
    return problems


@pytest.mark.parametrize("name", PACKAGES)
def test_the_package_names_what_it_offers(name: str) -> None:
    assert offer_problems(importlib.import_module(f"{TOP}.{name}")) == []


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


def unlisted_modules(top: Path, root: Path = RUNTIME) -> list[str]:
    """Each package of the core (`top`) and of its groups whose face does not offer exactly its
    public modules and subpackages."""
    # operations/ is the registry: its __init__ offers the specs' lookups, and each operation's
    # module is reached through its spec (test_operations_registry.py checks those).
    groups = sorted(p.parent for p in top.glob("*/__init__.py") if p.parent.name != "operations")
    problems = []
    for package in [top, *groups]:
        name = ".".join(package.relative_to(root).parts)
        modules = sorted(p.stem for p in package.glob("[!_]*.py"))
        modules += [p.parent.name for p in package.glob("*/__init__.py")]
        if importlib.import_module(name).__all__ != sorted(modules):
            problems.append(f"{name}: list each public module in its __init__.py")
    return problems


def test_the_core_names_each_public_module() -> None:
    assert unlisted_modules(RUNTIME / "custodian_runtime" / "core") == []


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


def _named_twice(path: Path) -> list[str]:
    """Each name the face's TYPE_CHECKING block imports more than once."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    block = next(
        n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING"
    )
    names = [
        a.asname or a.name for n in block.body if isinstance(n, ast.ImportFrom) for a in n.names
    ]
    return sorted({n for n in names if names.count(n) > 1})


def _offers_what_it_names(package: ModuleType, names: dict[str, tuple[str, str]]) -> list[str]:
    """Each name the face reads as another object than its module defines, or cannot read."""
    problems = []
    for public, (module, inside) in names.items():
        try:
            defined = importlib.import_module(module)
            expected = getattr(defined, inside) if inside else defined
            if getattr(package, public) is not expected:
                problems.append(f"{public}: not the one {module} defines")
        except (ImportError, AttributeError) as exc:
            problems.append(f"{public}: not offered ({exc})")
    return problems


def face_problems(name: str, path: Path) -> list[str]:
    """What the face of package `name` (its `__init__.py`, `path`) gets wrong: its TYPE_CHECKING
    imports are its one list, each name once, and `__all__`, `dir()` and the lazy reads offer
    exactly those, each the object its module defines."""
    source = path.read_text(encoding="utf-8")
    names = offered(source, name)
    problems = [] if names == _type_checking_imports(path, name) else ["the readers disagree"]
    problems += [f"{n}: named twice in the block" for n in _named_twice(path)]
    if "__all__ =" in source or "dict.fromkeys" in source:
        problems.append("a second list of names: name each name once, in the block")
    # A name that is also a submodule's is the module once that is imported, whatever the face says.
    shadowed = [n for n, (_, inside) in names.items() if inside and n in _submodules(path.parent)]
    problems += [f"{n}: also one of its modules" for n in shadowed]
    package = importlib.import_module(name)
    if package.__all__ != sorted(names):
        problems.append("__all__ is not the block's names")
    return problems + _offers_what_it_names(package, names)


@pytest.mark.parametrize("name", sorted(FACES))
def test_a_face_names_each_name_once_and_offers_exactly_those(name: str) -> None:
    """The face's TYPE_CHECKING imports are its one list: `__all__`, `dir()` and the lazy reads."""
    assert face_problems(name, FACES[name]) == []


def listed_faces(pyproject: Path) -> list[str]:
    """The modules pyproject.toml lists for mypy's `implicit_reexport`."""
    config = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    return next(
        o["module"] for o in config["tool"]["mypy"]["overrides"] if o.get("implicit_reexport")
    )


def faces_of(root: Path) -> list[str]:
    """Every lazy face under `root`, by its dotted name."""
    return sorted(
        ".".join(p.parent.relative_to(root).parts)
        for p in sorted(root.rglob("__init__.py"))
        if "lazy_attributes(globals())" in p.read_text(encoding="utf-8")
    )


def misread_faces(pyproject: Path, root: Path) -> list[str]:
    """Each face under `root` that pyproject.toml leaves out, each listed module that is no face,
    and the list out of order."""
    listed, faces = listed_faces(pyproject), faces_of(root)
    problems = [f"{face}: a face, not listed" for face in faces if face not in listed]
    problems += [f"{name}: listed, and no face" for name in listed if name not in faces]
    return problems + ([] if problems or listed == faces else ["the list is out of order"])


def test_mypy_reads_each_face_as_exporting_its_type_checking_imports() -> None:
    """pyproject.toml lists each face for mypy's `implicit_reexport` (a face has no `__all__`)."""
    assert faces_of(RUNTIME) == sorted(FACES)
    found = misread_faces(RUNTIME.parent / "pyproject.toml", RUNTIME)
    assert found == [], "list each face (and only faces) in pyproject.toml, sorted"


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


# The made-up packages below are imported from a test's tmp_path under names no other module has.
LAZY = "from custodian_runtime._lazy import lazy_attributes\n"
LAZY_END = "\nif not TYPE_CHECKING:\n    __getattr__, __dir__ = lazy_attributes(globals())\n"


@pytest.fixture
def made_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder on sys.path for made-up packages, each forgotten by the import system after."""
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in [m for m in sys.modules if m.split(".")[0].startswith("made_")]:
        del sys.modules[name]


def _face(block: str, after: str = "") -> str:
    head = f'"""A face."""\n\nfrom typing import TYPE_CHECKING\n\n{LAZY}'
    return f"{head}\nif TYPE_CHECKING:\n{block}{after}{LAZY_END}"


def test_the_face_check_fails_on_a_made_up_face_that_offers_wrongly(made_up: Path) -> None:
    """Each way a face can offer other than it names is named: a name its module lacks, a name
    twice, a name that is also a module, a second list, a name of another object."""
    block = (
        "    from made_shop.shelf import Shelf, gone\n"
        "    from made_shop.cart import Shelf\n"
        "    from made_shop.wheel import wheel\n"
    )
    write_tree(
        made_up,
        {
            "made_shop/__init__.py": _face(block, '\n__all__ = ["Shelf"]\n'),
            "made_shop/shelf.py": "class Shelf: ...\n",
            "made_shop/cart.py": "Shelf = 1\n",
            "made_shop/wheel.py": "def wheel(): ...\n",
            "made_good/__init__.py": _face("    from made_good.shelf import Shelf\n"),
            "made_good/shelf.py": "class Shelf: ...\n",
        },
    )
    found = face_problems("made_shop", made_up / "made_shop" / "__init__.py")
    assert found == [
        "Shelf: named twice in the block",
        "a second list of names: name each name once, in the block",
        "wheel: also one of its modules",
        "__all__ is not the block's names",
        "gone: not offered (module 'made_shop.shelf' has no attribute 'gone')",
        "wheel: not the one made_shop.wheel defines",  # the module, once it is imported
    ]
    assert face_problems("made_good", made_up / "made_good" / "__init__.py") == []


def test_the_offer_check_fails_on_a_made_up_package(made_up: Path) -> None:
    write_tree(
        made_up,
        {
            "made_empty/__init__.py": "__all__ = []\n",
            "made_odd/__init__.py": '__all__ = ["a", "a", "_b", "c"]\na = 1\n_b = 2\n',
        },
    )
    assert offer_problems(importlib.import_module("made_empty")) == ["made_empty: offers nothing"]
    assert offer_problems(importlib.import_module("made_odd")) == [
        "a: offered twice",
        "_b: a private name offered",
        "c: offered, and not there",
    ]


def test_the_module_list_check_fails_on_a_made_up_core(made_up: Path) -> None:
    write_tree(
        made_up,
        {
            "made_core/__init__.py": _face("    from made_core import plan, view\n"),
            "made_core/view.py": "",
            "made_core/_fences.py": "",
            "made_core/plan/__init__.py": _face("    from made_core.plan import extract\n"),
            "made_core/plan/extract.py": "",
            "made_core/plan/answer.py": "",
            "made_core/fold/__init__.py": _face("    from made_core.fold import api\n"),
            "made_core/fold/api.py": "",
        },
    )
    assert unlisted_modules(made_up / "made_core", made_up) == [
        "made_core: list each public module in its __init__.py",
        "made_core.plan: list each public module in its __init__.py",
    ]


def test_the_mypy_list_check_fails_on_a_made_up_tree(tmp_path: Path) -> None:
    lazy = _face("    from pkg.a import A\n")
    root = write_tree(
        tmp_path,
        {"pkg/__init__.py": lazy, "pkg/sub/__init__.py": lazy, "pkg/plain/__init__.py": ""},
    )
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(
        '[[tool.mypy.overrides]]\nmodule = ["pkg", "pkg.plain"]\nimplicit_reexport = true\n'
    )
    assert faces_of(root) == ["pkg", "pkg.sub"]
    assert misread_faces(pyproject, root) == [
        "pkg.sub: a face, not listed",
        "pkg.plain: listed, and no face",
    ]
    pyproject.write_text(pyproject.read_text().replace('"pkg", "pkg.plain"', '"pkg.sub", "pkg"'))
    assert misread_faces(pyproject, root) == ["the list is out of order"]
