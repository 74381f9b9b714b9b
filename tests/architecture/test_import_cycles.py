"""The house is acyclic: no two modules of the runtime packages import each other, even for types.

The graph is read with `ast` alone (nothing is imported), by these rules:

- Every import counts: at the top, under `if TYPE_CHECKING:`, and inside a function. A type-only
  or function-local import that closes a circle is a circle all the same.
- `import a.b.c` and `from a.b.c import x` are edges to `a.b.c`; `from a.b import c` is an edge
  to `a.b` and, when `c` is a module, to `a.b.c`. Relative imports are resolved first.
- A package's `__init__` is the module named after the package (its face). Its edges are what it
  imports: its `TYPE_CHECKING` block is also the list its lazy attributes import from when a
  name is first read (`_lazy.py`), so each module it names is an edge.
- So importing a package's face imports all that its face names. A module that imports the face
  of a package containing it (`from custodian_runtime.core import operations` inside the core)
  closes a circle through that face: import the module that defines the thing instead.
- Importing `a.b.c` runs the `__init__` of `a` and `a.b` first. Those runs count only when the
  face imports at once (at the top, outside `TYPE_CHECKING`), and only for a package the importer
  is not itself inside (the package of the importer is already running): `a.b`'s eager imports
  then become edges of the importer. A lazy face imports nothing when it runs.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import custodian_hub
import custodian_runtime

PACKAGES = (Path(custodian_runtime.__file__).parent, Path(custodian_hub.__file__).parent)
Graph = Mapping[str, frozenset[str]]


@dataclass
class _Module:
    name: str
    package: str  # the package that relative imports start from
    imports: set[str] = field(default_factory=set)  # every dotted name imported, resolved
    eager: set[str] = field(default_factory=set)  # those imported when the module runs


def _parse(path: Path, root: Path) -> _Module:
    parts = path.relative_to(root.parent).with_suffix("").parts
    is_package = parts[-1] == "__init__"
    name = ".".join(parts[:-1] if is_package else parts)
    found = _Module(name, name if is_package else name.rpartition(".")[0])
    tree = ast.parse(path.read_text("utf-8"), filename=str(path))
    for node in ast.walk(tree):
        found.imports |= _targets(node, found.package)
    for node in _eager_statements(tree.body):
        found.eager |= _targets(node, found.package)
    return found


def _targets(node: ast.AST, package: str) -> set[str]:
    """The dotted names an import statement imports (`from a import b` gives `a` and `a.b`)."""
    if isinstance(node, ast.Import):
        return {a.name for a in node.names}
    if not isinstance(node, ast.ImportFrom):
        return set()
    base = node.module or ""
    if node.level:
        anchor = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1])
        base = f"{anchor}.{base}" if base else anchor
    return {base} | {f"{base}.{a.name}" for a in node.names if a.name != "*"}


def _eager_statements(body: Iterable[ast.stmt]) -> Iterable[ast.stmt]:
    """The module-level statements that run on import: skips `if TYPE_CHECKING:` and functions."""
    for node in body:
        if isinstance(node, ast.If):
            if "TYPE_CHECKING" not in ast.unparse(node.test):
                yield from _eager_statements(node.body)
            yield from _eager_statements(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody, *(h.body for h in node.handlers)):
                yield from _eager_statements(block)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            yield node


def import_graph(roots: Iterable[Path] = PACKAGES) -> dict[str, frozenset[str]]:
    """Each module of the packages under `roots` -> the modules of those packages it imports."""
    parsed = {
        m.name: m for root in roots for p in sorted(root.rglob("*.py")) for m in [_parse(p, root)]
    }
    graph: dict[str, frozenset[str]] = {}
    for name, module in parsed.items():
        edges = set(module.imports)
        for target in edges & parsed.keys():
            ran = [parsed[f].eager - {f} for f in _faces_run(name, target) if f in parsed]
            edges = edges.union(*ran)
        graph[name] = frozenset(e for e in edges if e in parsed and e != name)
    return graph


def _faces_run(importer: str, target: str) -> list[str]:
    """The packages whose `__init__` importing `target` runs, the importer's own excepted."""
    parts = target.split(".")
    faces = [".".join(parts[:i]) for i in range(1, len(parts))]
    return [f for f in faces if importer != f and not importer.startswith(f + ".")]


def cycles(graph: Graph) -> list[list[str]]:
    """One shortest circle per group of modules that import each other, in import order."""
    reach = {name: _reachable(graph, name) for name in graph}
    looped = sorted(name for name in graph if name in reach[name])
    found: dict[frozenset[str], list[str]] = {}
    for name in looped:
        group = frozenset(other for other in reach[name] if name in reach[other])
        if group not in found:  # `name` is the group's first, as `looped` is sorted
            found[group] = _shortest_circle(graph, name)
    return sorted(found.values())


def _reachable(graph: Graph, start: str) -> set[str]:
    """Every module `start` imports, directly or not (itself only through a circle)."""
    seen: set[str] = set()
    todo = list(graph.get(start, ()))
    while todo:
        node = todo.pop()
        if node not in seen:
            seen.add(node)
            todo.extend(graph.get(node, ()))
    return seen


def _shortest_circle(graph: Graph, start: str) -> list[str]:
    """The shortest import path from `start` back to itself (breadth first, by name order)."""
    came_from: dict[str, str] = {}
    frontier = [start]
    while start not in came_from:
        following = []
        for node in frontier:
            for child in sorted(graph.get(node, ())):
                if child not in came_from:
                    came_from[child] = node
                    following.append(child)
        frontier = following
    path = [start, came_from[start]]
    while path[-1] != start:
        path.append(came_from[path[-1]])
    return path[::-1]


def _describe(found: list[list[str]]) -> str:
    return "\n".join(" -> ".join(circle) for circle in found)


def test_the_runtime_packages_import_no_circle() -> None:
    found = cycles(import_graph())
    assert found == [], "import circles (move the shared part below both):\n" + _describe(found)


def test_the_graph_is_the_real_one() -> None:
    graph = import_graph()
    assert len(graph) > 200
    # A type-only import, a function-local one and an import of a sibling module are all edges.
    assert "custodian_runtime.core.view" in graph["custodian_runtime.core.operations.write_canon"]
    assert "custodian_runtime.core.operations" in graph["custodian_runtime.core.limits"]
    assert "custodian_runtime.run._runner" in graph["custodian_runtime.run"]  # its face's list


def test_the_finder_names_each_circle_in_order() -> None:
    graph = {
        "a": frozenset({"b", "c"}),
        "b": frozenset({"c"}),
        "c": frozenset({"a"}),
        "d": frozenset({"a"}),  # leads into a circle, is not on one
        "e": frozenset({"f"}),
        "f": frozenset({"e"}),
        "g": frozenset(),
    }
    assert cycles(graph) == [["a", "c", "a"], ["e", "f", "e"]]
    assert cycles({"a": frozenset({"b"}), "b": frozenset({"c"}), "c": frozenset()}) == []
    assert _describe(cycles(graph)) == "a -> c -> a\ne -> f -> e"


def _package(root: Path, files: Mapping[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root / "pkg"


def test_type_only_local_relative_and_lazy_imports_are_edges(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "pkg/__init__.py": (
                "from typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n"
                "    from pkg._low import Low\n"
                "if not TYPE_CHECKING:\n"
                "    __getattr__, __dir__ = lazy_attributes(globals())\n"
            ),
            "pkg/_low.py": (
                "from typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n"
                "    from pkg.high import High\n"
            ),
            "pkg/high.py": "def later():\n    from . import _low\n",
        },
    )
    graph = import_graph([root])
    assert graph["pkg"] == {"pkg._low"}
    assert graph["pkg._low"] == {"pkg.high"}
    assert graph["pkg.high"] == {"pkg", "pkg._low"}  # `from . import _low` goes through the face
    assert cycles(graph) == [["pkg", "pkg._low", "pkg.high", "pkg"]]


def test_a_face_that_imports_at_once_runs_for_who_imports_below_it(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/registry/__init__.py": (
                "from pkg.registry import one\nfrom pkg.registry._two import x\n"
            ),
            "pkg/registry/one.py": "from pkg.view import View\n",
            "pkg/registry/_two.py": "from pkg.registry.one import y\n",
            "pkg/view.py": "from pkg.registry._two import x\n",
        },
    )
    graph = import_graph([root])
    assert graph["pkg.registry._two"] == {"pkg.registry.one"}  # its own package already runs
    assert graph["pkg.view"] == {"pkg.registry._two", "pkg.registry.one"}  # the face ran first
    assert cycles(graph) == [
        ["pkg.registry._two", "pkg.registry.one", "pkg.view", "pkg.registry._two"]
    ]
