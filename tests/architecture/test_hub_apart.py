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
from support.trees import write_tree

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


def _hub_imports_in_runtime(runtime: Path = RUNTIME) -> dict[str, list[bool]]:
    seen: dict[str, list[bool]] = {}
    for path in sorted(runtime.rglob("*.py")):
        for module, lazy in _imports(path):
            if module == "custodian_hub" or module.startswith("custodian_hub."):
                seen.setdefault(path.relative_to(runtime).as_posix(), []).append(lazy)
    return seen


def hub_doors_broken(runtime: Path = RUNTIME) -> list[str]:
    """Each module of `runtime` that imports the hub where ALLOWED does not let it, or eagerly
    where it must import it inside a function."""
    seen = _hub_imports_in_runtime(runtime)
    found = [f"{name}: imports the hub" for name in sorted(set(seen) - set(ALLOWED))]
    eager = [n for n, lazies in seen.items() if n in ALLOWED and ALLOWED[n] and not all(lazies)]
    return found + [f"{name}: imports the hub outside a function" for name in sorted(eager)]


def test_the_runtime_imports_the_hub_only_where_allowed_and_lazily() -> None:
    assert _hub_imports_in_runtime(), "the check looks at the real package"
    assert hub_doors_broken() == []


def test_the_door_check_fails_on_a_made_up_runtime(tmp_path: Path) -> None:
    files = {
        "cli/hub.py": "def wire():\n    from custodian_hub import ReferenceHub\n",
        "cli/_main.py": "import custodian_hub\n",
        "evals/runner.py": "from custodian_hub import ReferenceHub\n",
        "run/act.py": "def f():\n    import custodian_hub._app\n",
    }
    assert hub_doors_broken(write_tree(tmp_path, files)) == [
        "run/act.py: imports the hub",
        "cli/_main.py: imports the hub outside a function",
    ]


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


def _wall_reads(hub: Path) -> list[str]:
    wall = {("datetime", "now"), ("datetime", "utcnow"), ("date", "today"), ("time", "time")}
    return [
        f"{path.name}:{node.lineno} {node.value.id}.{node.attr}"
        for path in sorted(hub.glob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and (node.value.id, node.attr) in wall
    ]


def test_the_hub_reads_the_wall_clock_only_through_custodian_clock() -> None:
    assert _wall_reads(HUB) == []


def test_the_clock_check_fails_on_a_made_up_hub(tmp_path: Path) -> None:
    (tmp_path / "_store.py").write_text(
        "import time\nfrom datetime import datetime\n"
        "a = datetime.now()\nb = time.time()\nc = time.monotonic()\n",
        encoding="utf-8",
    )
    assert _wall_reads(tmp_path) == ["_store.py:3 datetime.now", "_store.py:4 time.time"]
