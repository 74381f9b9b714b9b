"""The core is grouped by purpose, and a public name has one meaning across the runtime."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import custodian_hub
import custodian_runtime
from support.paths import TESTS

PACKAGES = (Path(custodian_runtime.__file__).parent, Path(custodian_hub.__file__).parent)
CORE = PACKAGES[0] / "core"
# Class and type names defined in more than one module on purpose, each with why.
ALLOWED: dict[str, str] = {
    "Reconciled": "a run step's value, and the journal record of the same kind it writes",
    "NoteWritten": "a run step's value, and the journal record of the same kind it writes",
    "ItemKey": "an item's key in the journal: typed more narrowly where records are read",
}
# Names that once meant several things: each now has at most one meaning.
COLLIDED = ("Outcome", "Verdict", "Decision", "SECTIONS", "Clock")
# Names retired for clearer ones: defined nowhere.
RETIRED = ("Talk", "Known", "Seen", "Here", "here", "elsewhere", "hub_here", "Policy", "policy_of")


def _modules() -> list[tuple[str, ast.Module]]:
    found = []
    for package in PACKAGES:
        for path in sorted(package.rglob("*.py")):
            module = ".".join(path.relative_to(package.parent).with_suffix("").parts)
            found.append((module, ast.parse(path.read_text("utf-8"))))
    return found


def _definitions(tree: ast.Module) -> dict[str, str]:
    """Names defined at a module's top: classes and functions as such, others by their value."""
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            found[node.name] = type(node).__name__
        elif isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            value = ast.unparse(node.value)
            found |= {t.id: value for t in targets if isinstance(t, ast.Name)}
    return found


def _meanings() -> dict[str, dict[str, list[str]]]:
    meanings: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for module, tree in _modules():
        for name, value in _definitions(tree).items():
            meanings[name][value].append(module)
    return meanings


def _clash(where: dict[str, list[str]]) -> bool:
    return len(where) > 1 or any(v == "ClassDef" and len(ms) > 1 for v, ms in where.items())


def test_the_core_is_grouped_by_purpose() -> None:
    subpackages = sorted(p.parent.name for p in CORE.glob("*/__init__.py"))
    top = sorted(p.stem for p in CORE.glob("*.py") if p.name != "__init__.py")
    assert len(subpackages) >= 4, subpackages
    assert len(top) <= 15, f"{len(top)} modules at core's top; move some into a subpackage: {top}"


def test_a_public_class_or_type_has_one_meaning() -> None:
    typed = {
        name: where
        for name, where in _meanings().items()
        if name[:1].isupper() and not name.isupper() and name not in ALLOWED
    }
    clashes = {n: sorted(m for ms in w.values() for m in ms) for n, w in typed.items() if _clash(w)}
    assert clashes == {}, "rename one of each, or say in ALLOWED why both are meant"


def test_the_names_that_collided_have_one_meaning() -> None:
    meanings = _meanings()
    assert {n: dict(meanings[n]) for n in COLLIDED if _clash(meanings.get(n, {}))} == {}
    assert {n: dict(meanings[n]) for n in RETIRED if n in meanings} == {}


def test_a_core_group_keeps_its_private_modules() -> None:
    found = []
    for path in sorted(CORE.rglob("*.py")):
        group = path.relative_to(CORE).parts[0]
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            for parts in (n.split(".") for n in names):
                inner = parts[2:] if parts[:2] == ["custodian_runtime", "core"] else []
                private = len(inner) > 1 and inner[1].startswith("_") and inner[0] != group
                found += [f"{path.relative_to(CORE)}: {'.'.join(parts)}"] if private else []
    assert found == [], "import the group's public module instead"


def test_no_module_has_a_one_letter_alias() -> None:
    paths = sorted(TESTS.rglob("*.py")) + [p for k in PACKAGES for p in sorted(k.rglob("*.py"))]
    found = []
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Import | ast.ImportFrom):
                one = [a for a in node.names if a.asname is not None and len(a.asname) == 1]
                found += [f"{path.name}: {a.name} as {a.asname}" for a in one]
    assert found == [], "name a module by what it is"
