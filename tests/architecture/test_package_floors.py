"""Packages import one way: no two packages of the runtime import each other.

`test_import_cycles.py` holds the modules acyclic and `test_layering.py` holds them to their
floors; this holds the packages so. A unit is a top-level package (or module) of
`custodian_runtime`, and inside the core each group (`core/journal/`, `core/authority/`, ...) or
shared module (`core/view.py`). Every import counts: at the top of a module, inside a function
and under TYPE_CHECKING alike, since each is a way one unit needs another.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterator
from functools import cache
from itertools import pairwise
from pathlib import Path

import custodian_runtime

PACKAGE = Path(custodian_runtime.__file__).parent


def _name(path: Path, root: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(tree: ast.Module, module: str, is_face: bool) -> Iterator[tuple[int, str]]:
    """Each dotted name a module imports, with its line; relative imports made absolute."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = module.split(".")[: len(module.split(".")) - node.level + is_face]
                base = ".".join(parts + ([node.module] if node.module else []))
            yield node.lineno, base
            yield from ((node.lineno, f"{base}.{alias.name}") for alias in node.names)


def unit_of(name: str, top: str) -> tuple[str, str | None] | None:
    """(the top-level unit, the core's group or None) of a module of `top`, else None."""
    parts = name.split(".")
    if parts[0] != top or len(parts) < 2:
        return None
    group = f"core.{parts[2]}" if parts[1] == "core" and len(parts) > 2 else None
    return parts[1], group


@cache
def arrows(root: Path, top: str) -> dict[tuple[str, str], list[str]]:
    """unit -> unit, each with the import lines that draw it (`path:line imports name`)."""
    paths = sorted((root / top).rglob("*.py"))
    modules = {_name(path, root): path for path in paths}
    found: dict[tuple[str, str], list[str]] = defaultdict(list)
    for module, path in modules.items():
        source = unit_of(module, top)
        tree = ast.parse(path.read_text("utf-8"), filename=str(path))
        for line, name in _imported(tree, module, path.name == "__init__.py"):
            while name and name not in modules:
                name = name.rpartition(".")[0]
            target = unit_of(name, top) if name else None
            if source is None or target is None:
                continue
            where = f"{path.relative_to(root)}:{line} imports {name}"
            if source[0] != target[0]:
                found[source[0], target[0]].append(where)
            elif source[1] and target[1] and source[1] != target[1]:
                found[source[1], target[1]].append(where)
    return dict(found)


def _reach(graph: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = [start]
    while todo:
        for other in graph[todo.pop()] - seen:
            seen.add(other)
            todo.append(other)
    return seen


def circles(found: dict[tuple[str, str], list[str]]) -> list[list[str]]:
    """The units that reach each other through imports, each circle sorted."""
    graph: dict[str, set[str]] = defaultdict(set)
    for a, b in found:
        graph[a].add(b)
    reach = {unit: _reach(graph, unit) for unit in list(graph)}
    circles = {
        tuple(sorted({unit} | {o for o in reach[unit] if unit in reach.get(o, set())}))
        for unit in reach
        if unit in reach[unit]
    }
    return sorted(list(circle) for circle in circles)


def described(found: dict[tuple[str, str], list[str]], circle: list[str]) -> str:
    """A circle in words: each pair that imports both ways, with one line of each direction,
    then a loop through each unit that is in no such pair."""
    pairs = [
        (a, b) for a in circle for b in circle if a < b and (a, b) in found and (b, a) in found
    ]
    lines = [f"{a} <-> {b}: {found[a, b][0]}; and back: {found[b, a][0]}" for a, b in pairs]
    told = {unit for pair in pairs for unit in pair}
    for unit in circle:
        if unit not in told:
            loop = _loop(found, circle, unit)
            told |= set(loop)
            lines.append(" ; ".join(f"{a} -> {b} ({found[a, b][0]})" for a, b in pairwise(loop)))
    return "\n".join(lines)


def _loop(found: dict[tuple[str, str], list[str]], circle: list[str], start: str) -> list[str]:
    """The shortest way from `start` back to itself inside the circle."""
    ways: list[list[str]] = [[start]]
    while ways:
        way = ways.pop(0)
        for a, b in sorted(found):
            if a == way[-1] and b in circle:
                if b == start:
                    return [*way, b]
                if b not in way:
                    ways.append([*way, b])
    return [start]


def problems(root: Path, top: str) -> list[str]:
    """Each circle of packages, named with its import lines."""
    found = arrows(root, top)
    return [f"{' '.join(circle)}:\n{described(found, circle)}" for circle in circles(found)]


def test_no_two_packages_import_each_other() -> None:
    found = problems(PACKAGE.parent, PACKAGE.name)
    assert found == [], "\n\n".join(found)


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")


def test_the_checker_finds_two_packages_importing_each_other(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "made/__init__.py": "",
            "made/errors.py": "",
            "made/shelf/__init__.py": "",
            "made/shelf/store.py": "import made.errors\n\ndef put():\n"
            "    from made.cart import wheel\n",  # inside a function: it counts
            "made/cart/__init__.py": "",
            "made/cart/wheel.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
            "    from made.shelf.store import put\n",  # for types only: it counts
            "made/core/__init__.py": "",
            "made/core/plan/__init__.py": "",
            "made/core/plan/parse.py": "from made.core.rules import check\n",
            "made/core/rules/__init__.py": "",
            "made/core/rules/check.py": "from . import check\nfrom ..plan.parse import x\n",
            "made/core/view.py": "import made.errors\n",  # one way only: no circle
        },
    )
    found = problems(tmp_path, "made")
    assert found == [
        "cart shelf:\ncart <-> shelf: made/cart/wheel.py:3 imports made.shelf.store; and back: "
        "made/shelf/store.py:4 imports made.cart",
        "core.plan core.rules:\ncore.plan <-> core.rules: made/core/plan/parse.py:1 imports "
        "made.core.rules; and back: made/core/rules/check.py:2 imports made.core.plan.parse",
    ]


def test_the_checker_finds_a_circle_of_three(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "made/__init__.py": "",
            "made/a.py": "import made.b\n",
            "made/b/__init__.py": "from made.c import z\n",
            "made/c/__init__.py": "",
            "made/c/z.py": "import made.a\n",
        },
    )
    assert problems(tmp_path, "made") == [
        "a b c:\na -> b (made/a.py:1 imports made.b) ; b -> c (made/b/__init__.py:1 imports "
        "made.c) ; c -> a (made/c/z.py:1 imports made.a)"
    ]
