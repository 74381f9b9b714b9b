"""Every hub write leaves through one path: writes/_dispatch's tables, called only from writes/.

A run's own writes, reconcile's re-sends and approved items all go authorized -> dispatched ->
receipt through `writes.send`; nothing else in the package calls a client write or `perform`.
"""

from __future__ import annotations

import ast
from pathlib import Path

import custodian_runtime

ROOT = Path(custodian_runtime.__file__).parent
WRITES = {
    "add_event",
    "update_task_status",
    "add_flag",
    "resolve_flag",
    "create_workstream",
    "create_task",
    "create_decision",
    "resolve_decision",
}


def _called(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute):
                names.add(func.attr)
            elif isinstance(func, ast.Name):
                names.add(func.id)
    return names


def _callers(names: set[str]) -> list[str]:
    return sorted(
        path.relative_to(ROOT).as_posix()
        for path in ROOT.rglob("*.py")
        if path.parts[-2] != "statehub" and _called(path) & names
    )


def test_only_dispatch_calls_the_clients_writes() -> None:
    assert _callers(WRITES) == ["writes/_dispatch.py"]


def test_only_the_write_chain_performs_a_write() -> None:
    callers = _callers({"perform"})
    assert callers and all(c.startswith("writes/") for c in callers), callers
