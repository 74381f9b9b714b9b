"""The seams have real types: nothing a run talks through is annotated `Any`."""

from __future__ import annotations

import ast

from support.paths import REPO

PACKAGE = REPO / "runtime" / "custodian_runtime"
# Parameters and fields that carry something a run talks through: each has a type or Protocol.
SEAMS = {
    "stop",
    "transport",
    "writer",
    "journal",
    "clock",
    "wall_clock",
    "sleep",
    "sub",
    "settings",
}


def _untyped_seams(source: str, where: str) -> list[str]:
    """`where:line name` for each seam in `source` annotated with Any, or not at all."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.arg):
            name, annotation = node.arg, node.annotation
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            name, annotation = node.target.id, node.annotation
        else:
            continue
        if name in SEAMS and (annotation is None or "Any" in ast.unparse(annotation)):
            found.append(f"{where}:{node.lineno} {name}")
    return found


def test_no_seam_is_typed_any() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        found += _untyped_seams(path.read_text(encoding="utf-8"), str(path.relative_to(PACKAGE)))
    assert found == []


def test_the_check_sees_an_any_seam() -> None:
    source = "from typing import Any\ndef f(stop: Any, clock, sleep: Sleep) -> None: ...\n"
    source += "class C:\n    transport: Any | None = None\n"
    assert sorted(_untyped_seams(source, "bad.py")) == [
        "bad.py:2 clock",
        "bad.py:2 stop",
        "bad.py:4 transport",
    ]
