"""The core is grouped by purpose, and a public name has one meaning across the runtime."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import custodian_hub
import custodian_runtime
from support.paths import TESTS
from support.trees import write_tree

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


def _modules(packages: tuple[Path, ...] = PACKAGES) -> list[tuple[str, ast.Module]]:
    found = []
    for package in packages:
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


def _meanings(packages: tuple[Path, ...] = PACKAGES) -> dict[str, dict[str, list[str]]]:
    meanings: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for module, tree in _modules(packages):
        for name, value in _definitions(tree).items():
            meanings[name][value].append(module)
    return meanings


def _clash(where: dict[str, list[str]]) -> bool:
    return len(where) > 1 or any(v == "ClassDef" and len(ms) > 1 for v, ms in where.items())


def ungrouped(core: Path) -> list[str]:
    """What keeps `core` from being grouped by purpose: too few groups, too many loose modules."""
    subpackages = sorted(p.parent.name for p in core.glob("*/__init__.py"))
    top = sorted(p.stem for p in core.glob("*.py") if p.name != "__init__.py")
    problems = [f"{len(subpackages)} groups in core: {subpackages}"] if len(subpackages) < 4 else []
    if len(top) > 15:
        problems.append(f"{len(top)} modules at core's top; move some into a subpackage: {top}")
    return problems


def test_the_core_is_grouped_by_purpose() -> None:
    assert ungrouped(CORE) == []


def clashes(packages: tuple[Path, ...] = PACKAGES) -> dict[str, list[str]]:
    """Each public class or type name defined with more than one meaning, and where."""
    typed = {
        name: where
        for name, where in _meanings(packages).items()
        if name[:1].isupper() and not name.isupper() and name not in ALLOWED
    }
    return {n: sorted(m for ms in w.values() for m in ms) for n, w in typed.items() if _clash(w)}


def test_a_public_class_or_type_has_one_meaning() -> None:
    assert clashes() == {}, "rename one of each, or say in ALLOWED why both are meant"


def test_the_names_that_collided_have_one_meaning() -> None:
    meanings = _meanings()
    assert {n: dict(meanings[n]) for n in COLLIDED if _clash(meanings.get(n, {}))} == {}
    assert {n: dict(meanings[n]) for n in RETIRED if n in meanings} == {}


def private_reaches(core: Path) -> list[str]:
    """Each import of a core group's private module from another group of `core`."""
    found = []
    for path in sorted(core.rglob("*.py")):
        group = path.relative_to(core).parts[0]
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            for parts in (n.split(".") for n in names):
                inner = parts[2:] if parts[:2] == ["custodian_runtime", "core"] else []
                private = len(inner) > 1 and inner[1].startswith("_") and inner[0] != group
                found += [f"{path.relative_to(core)}: {'.'.join(parts)}"] if private else []
    return found


def test_a_core_group_keeps_its_private_modules() -> None:
    assert private_reaches(CORE) == [], "import the group's public module instead"


def one_letter_aliases(paths: list[Path]) -> list[str]:
    """Each `import x as y` or `from x import z as y` whose alias is one letter."""
    found = []
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Import | ast.ImportFrom):
                one = [a for a in node.names if a.asname is not None and len(a.asname) == 1]
                found += [f"{path.name}: {a.name} as {a.asname}" for a in one]
    return found


def test_no_module_has_a_one_letter_alias() -> None:
    paths = sorted(TESTS.rglob("*.py")) + [p for k in PACKAGES for p in sorted(k.rglob("*.py"))]
    assert one_letter_aliases(paths) == [], "name a module by what it is"


# --- each check fails on a made-up violation ----------------------------------------------------


def test_a_core_of_loose_modules_is_not_grouped(tmp_path: Path) -> None:
    loose = {f"m{i:02}.py": "" for i in range(16)}
    core = write_tree(tmp_path / "core", {"__init__.py": "", "plan/__init__.py": "", **loose})
    assert ungrouped(core) == [
        "1 groups in core: ['plan']",
        f"16 modules at core's top; move some into a subpackage: {sorted(loose)}".replace(
            ".py", ""
        ),
    ]


def test_a_class_defined_twice_or_a_name_with_two_meanings_clashes(tmp_path: Path) -> None:
    package = write_tree(
        tmp_path / "pkg",
        {
            "__init__.py": "",
            "a.py": "class Verdict: ...\nLimit = int\nWords = str\n",
            "b.py": "class Verdict: ...\nLimit = float\nWords = str\n",
            "c.py": "Reconciled = int\n",
            "d.py": "class Reconciled: ...\n",
        },
    )
    assert clashes((package,)) == {"Limit": ["pkg.a", "pkg.b"], "Verdict": ["pkg.a", "pkg.b"]}


def test_a_group_reaching_into_anothers_private_module_is_named(tmp_path: Path) -> None:
    core = write_tree(
        tmp_path / "core",
        {
            "plan/__init__.py": "",
            "plan/_json.py": "",
            "plan/extract.py": "from custodian_runtime.core.plan._json import loads\n",
            "journal/fold.py": (
                "from custodian_runtime.core.plan import extract\n"
                "from custodian_runtime.core.plan._json import loads\n"
                "from custodian_runtime.core._timestamps import clamp\n"
            ),
        },
    )
    assert private_reaches(core) == [
        "journal/fold.py: custodian_runtime.core.plan._json",
        "journal/fold.py: custodian_runtime.core.plan._json.loads",
    ]


def test_a_one_letter_alias_is_named(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text("import json as j\nfrom os import path as p\nimport sys as system\n", "utf-8")
    assert one_letter_aliases([path]) == ["m.py: json as j", "m.py: path as p"]
