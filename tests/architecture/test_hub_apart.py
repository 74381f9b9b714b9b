"""The reference hub is a package apart: the runtime reaches it in one place, and lazily.

What the hub may import of the runtime is checked with the floors, in test_layering.py.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import custodian_hub
import custodian_runtime

RUNTIME = Path(custodian_runtime.__file__).parent
HUB = Path(custodian_hub.__file__).parent
# The runtime modules that may import the hub, and whether they must do it inside a function.
ALLOWED: dict[str, bool] = {
    "cli/hub.py": True,  # the CLI wires the embedded hub into the settings
    "cli/_main.py": True,  # `custodian hub serve`
    "evals/runner.py": False,  # `custodian eval` runs each scenario on a hub of its own
    "evals/scenario.py": False,  # a scenario's seed is checked as the hub would load it
}


def _imports(path: Path) -> list[tuple[str, bool]]:
    """Each imported module of `path`, and whether the import is inside a function."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nested: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            nested.update(id(inner) for inner in ast.walk(node) if inner is not node)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, id(node) in nested) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.module, id(node) in nested))
    return found


def _hub_imports_in_runtime() -> dict[str, list[bool]]:
    seen: dict[str, list[bool]] = {}
    for path in sorted(RUNTIME.rglob("*.py")):
        for module, lazy in _imports(path):
            if module == "custodian_hub" or module.startswith("custodian_hub."):
                seen.setdefault(path.relative_to(RUNTIME).as_posix(), []).append(lazy)
    return seen


def test_the_runtime_imports_the_hub_only_where_allowed_and_lazily() -> None:
    seen = _hub_imports_in_runtime()
    assert set(seen) <= set(ALLOWED), f"the hub is imported from {sorted(set(seen) - set(ALLOWED))}"
    eager = [name for name, lazies in seen.items() if ALLOWED[name] and not all(lazies)]
    assert eager == [], f"these must import the hub inside a function: {eager}"


def _in_a_loop(graph: dict[str, set[str]]) -> list[str]:
    """The modules from which the import graph leads back to themselves."""

    def reaches(start: str, goal: str, seen: frozenset[str]) -> bool:
        return any(
            nxt == goal or reaches(nxt, goal, seen | {nxt})
            for nxt in graph.get(start, set()) - seen
        )

    return sorted(m for m in graph if reaches(m, m, frozenset()))


def test_the_hub_has_only_private_modules_and_no_import_loop() -> None:
    modules = {path.stem for path in HUB.glob("*.py")} - {"__init__"}
    assert modules and all(m.startswith("_") for m in modules)
    graph = {
        path.stem: {
            module.removeprefix("custodian_hub.")
            for module, _ in _imports(path)
            if module.startswith("custodian_hub.")
        }
        for path in HUB.glob("_*.py")
    }
    assert _in_a_loop(graph) == []
    assert _in_a_loop({"_server": {"_serve"}, "_serve": {"_server"}, "_app": set()}) == [
        "_serve",
        "_server",
    ]


def test_the_checker_sees_an_eager_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import custodian_hub\ndef f():\n    from custodian_hub import x\n")
    assert _imports(bad) == [("custodian_hub", False), ("custodian_hub", True)]


def test_the_client_and_the_cli_load_without_the_hub() -> None:
    code = (
        "import sys, custodian_runtime.cli, custodian_runtime.statehub.client, "
        "custodian_runtime.statehub.connect; "
        "print(sorted(m for m in sys.modules if m.startswith('custodian_hub')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_the_hub_reads_the_wall_clock_only_through_custodian_clock() -> None:
    wall = {("datetime", "now"), ("datetime", "utcnow"), ("date", "today"), ("time", "time")}
    found = [
        f"{path.name}:{node.lineno} {node.value.id}.{node.attr}"
        for path in sorted(HUB.glob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and (node.value.id, node.attr) in wall
    ]
    assert found == []
