"""Every hub write leaves through one path: writes/_dispatch's tables, called only from writes/.

A run's own writes, reconcile's re-sends and approved items all go authorized -> dispatched ->
receipt through `writes.send`; nothing else in the package calls a client write or `perform`. The
client writes are each operation's hub call (core/operations/, handed the client as an
argument), and only writes/_dispatch.py reads a spec's `call`.
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
        # statehub/ is the hub's side: its client, and the backends answering it from a tracker
        if "statehub" not in path.relative_to(ROOT).parts and _called(path) & names
    )


def _reads_call(path: Path) -> bool:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return any(isinstance(n, ast.Attribute) and n.attr == "call" for n in ast.walk(tree))


def test_only_dispatch_calls_the_clients_writes() -> None:
    callers = _callers(WRITES)
    assert callers and all(c.startswith("core/operations/") for c in callers), callers
    readers = sorted(p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*.py") if _reads_call(p))
    assert readers == [
        "core/operations/_spec.py",
        "writes/_dispatch.py",
    ]  # the spec checks it has one


def test_only_the_write_chain_performs_a_write() -> None:
    callers = _callers({"perform"})
    assert callers and all(c.startswith("writes/") for c in callers), callers
