"""The core decides; it must not do I/O, read a clock or draw random numbers."""

from __future__ import annotations

import ast
from pathlib import Path

import custodian_runtime.core

CORE = Path(custodian_runtime.core.__file__).parent

FORBIDDEN_MODULES = {
    "httpx",
    "tenacity",
    "subprocess",
    "socket",
    "os",
    "shutil",
    "pathlib",
    "time",
    "random",
    "requests",
    "urllib",
    "http",
    "sqlite3",
    "threading",
    "asyncio",
    "signal",
    "tempfile",
    "io",
    "secrets",
    "uuid",
    "glob",
    "custodian_hub",
    "jinja2",
}
# Of the package itself the core sees only itself, the error types it raises, and the lazy
# attributes of its __init__ (importlib only).
CORE_MAY_IMPORT = ("custodian_runtime.core", "custodian_runtime.errors", "custodian_runtime._lazy")
FORBIDDEN_CALLS = {"open", "print", "input", "exec", "eval", "breakpoint"}
CLOCK_ATTRIBUTES = {"now", "utcnow", "today", "time", "monotonic", "perf_counter"}


def _violations(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[str] = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        for name in names:
            if any(name == bad or name.startswith(bad + ".") for bad in FORBIDDEN_MODULES):
                found.append(f"{path.name}:{node.lineno} imports {name}")
            elif name.startswith("custodian") and not _inside(name, CORE_MAY_IMPORT):
                found.append(f"{path.name}:{node.lineno} imports the shell's {name}")
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id in FORBIDDEN_CALLS:
                found.append(f"{path.name}:{node.lineno} calls {func.id}()")
            if isinstance(func, ast.Attribute) and func.attr in CLOCK_ATTRIBUTES:
                found.append(f"{path.name}:{node.lineno} reads a clock via .{func.attr}()")
    return found


def _inside(name: str, packages: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in packages)


def test_core_modules_exist() -> None:
    assert len(list(CORE.rglob("*.py"))) >= 4


def test_core_does_no_io_and_reads_no_clock() -> None:
    violations = [v for path in sorted(CORE.rglob("*.py")) for v in _violations(path)]
    assert violations == []


def test_the_checker_catches_a_violation(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import os\nfrom datetime import datetime\nfrom custodian_runtime.run import act\n"
        "x = datetime.now()\nopen('f')\n"
    )
    assert len(_violations(bad)) == 4
