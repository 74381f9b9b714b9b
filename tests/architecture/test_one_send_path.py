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
from support.trees import write_tree

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


def _callers(names: set[str], root: Path = ROOT) -> list[str]:
    return sorted(
        path.relative_to(root).as_posix()
        for path in root.rglob("*.py")
        # statehub/ is the hub's side: its client, and the backends answering it from a tracker
        if "statehub" not in path.relative_to(root).parts and _called(path) & names
    )


def _reads_call(path: Path) -> bool:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return any(isinstance(n, ast.Attribute) and n.attr == "call" for n in ast.walk(tree))


def around_the_chain(root: Path = ROOT) -> list[str]:
    """Each module of `root` that sends a hub write around the chain, and how."""
    found = [f"{c}: calls a client write" for c in _callers(WRITES, root)]
    found = [f for f in found if not f.startswith("core/operations/")]
    readers = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.py") if _reads_call(p))
    found += [f"{r}: reads a spec's call" for r in readers if r not in CALL_READERS]
    performers = _callers({"perform"}, root)
    return found + [f"{c}: calls perform" for c in performers if not c.startswith("writes/")]


# Who reads a spec's `call`: the spec (it checks it has one) and the dispatch table.
CALL_READERS = ("core/operations/_spec.py", "writes/_dispatch.py")


def test_only_dispatch_calls_the_clients_writes_and_only_the_chain_performs() -> None:
    assert _callers(WRITES) and _callers({"perform"}), "the checks look at the real package"
    assert around_the_chain() == []


def test_the_checker_finds_a_write_sent_around_the_chain(tmp_path: Path) -> None:
    files = {
        "writes/_send.py": "def send(spec, client): return perform(spec, client)\n",
        "writes/_dispatch.py": "def dispatch(spec, client): return spec.call(client)\n",
        "core/operations/add_progress_event.py": "def call(client, p): client.add_event(p)\n",
        "run/act.py": "def act(client, spec): client.add_event({}); spec.call(client)\n",
        "approvals/_execute.py": "from x import perform\nperform(None, None)\n",
        "statehub/client.py": "def add_flag(self): self.add_event({})\n",
    }
    assert around_the_chain(write_tree(tmp_path, files)) == [
        "run/act.py: calls a client write",
        "run/act.py: reads a spec's call",
        "approvals/_execute.py: calls perform",
    ]
