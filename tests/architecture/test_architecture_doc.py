"""docs/architecture.md's layout is held to the code, and the package's top holds only its faces.

Each package of the runtime has an entry in the layout block, each of its modules is named in
that entry (or in the core's block, for `core/`), and each path the blocks name exists.
"""

from __future__ import annotations

import re
from pathlib import Path

import custodian_runtime
from support.trees import write_tree

PACKAGE = Path(custodian_runtime.__file__).parent
DOC = PACKAGE.parent.parent / "docs" / "architecture.md"
TOP_MODULES_AT_MOST = 8
ENTRY = re.compile(r"^(?P<indent> *)(?P<name>[\w./]+/|[\w.]+\.py)(?:\s|$)")


def _block(marker: str) -> list[str]:
    text = DOC.read_text("utf-8")
    inner = text.split(f"<!-- {marker} -->", 1)[1].split(f"<!-- /{marker} -->", 1)[0]
    return inner.strip().strip("`").strip("\n").splitlines()


def _entries(lines: list[str], root: str) -> dict[str, str]:
    """Each entry's path (relative to the package) and the text of its entry, nested by indent."""
    found: dict[str, str] = {}
    stack: list[tuple[int, str]] = []
    current = ""
    for line in lines:
        match = ENTRY.match(line)
        if match is None or len(match["indent"]) % 2:
            if current:
                found[current] += " " + line.strip()
            continue
        depth = len(match["indent"])
        stack = [(d, p) for d, p in stack if d < depth]
        parent = stack[-1][1] if stack else ""
        current = parent + match["name"]
        if current.startswith(root):
            current = current[len(root) :]
        found[current] = line[match.end() :].strip()
        if match["name"].endswith("/"):
            stack.append((depth, current))
    return found


def _packages(package: Path = PACKAGE) -> list[Path]:
    return sorted(
        p.parent
        for p in package.rglob("__init__.py")
        if "__pycache__" not in p.parts and "_data" not in p.relative_to(package).parts
    )


def _words(text: str) -> set[str]:
    return set(re.findall(r"[\w.]+", text))


def unnamed(package: Path, layout: dict[str, str], core: dict[str, str]) -> list[str]:
    """Each package with no entry, and each module its package's entry does not name."""
    missing = []
    for inner in _packages(package):
        rel = inner.relative_to(package).as_posix() + "/" if inner != package else ""
        entries = core if rel.startswith("core/") else layout
        if rel and rel not in entries:
            missing.append(f"{rel}: no entry")
            continue
        named = " ".join(text for path, text in entries.items() if path.startswith(rel))
        named += " " + " ".join(p.rsplit("/", 1)[-1] for p in entries if p.startswith(rel))
        for module in sorted(inner.glob("*.py")):
            if module.name == "__init__.py":
                continue
            if module.name not in _words(named) and module.stem not in _words(named):
                missing.append(f"{rel}{module.name}: not named in its package's entry")
    return missing


def gone(package: Path, layout: dict[str, str], core: dict[str, str]) -> list[str]:
    """Each path the layout names that is not in the package."""
    return [
        path
        for path in [*layout, *core]
        if path and not path.startswith("runtime/") and not (package / path).exists()
    ]


def test_every_package_and_module_is_named_in_the_layout() -> None:
    layout = _entries(_block("layout"), "runtime/custodian_runtime/")
    core = _entries(_block("core-layout"), "")
    missing = unnamed(PACKAGE, layout, core)
    assert missing == [], "docs/architecture.md's layout, out of date:\n" + "\n".join(missing)


def test_every_path_the_layout_names_exists() -> None:
    layout = _entries(_block("layout"), "runtime/custodian_runtime/")
    core = _entries(_block("core-layout"), "")
    assert gone(PACKAGE, layout, core) == []


def test_the_package_top_holds_only_its_faces() -> None:
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(top) <= TOP_MODULES_AT_MOST, top


def test_the_checker_finds_a_module_the_layout_leaves_out() -> None:
    lines = ["x/                a package: one.py", "  two.py          the other"]
    entries = _entries(lines, "")
    assert set(entries) == {"x/", "x/two.py"}
    assert "three" not in _words(" ".join(entries.values()))


def test_the_checks_fail_on_a_made_up_package_the_layout_is_behind(tmp_path: Path) -> None:
    files = ["__init__.py", "clock.py", "run/__init__.py", "run/act.py", "run/_late.py"]
    files += ["watch/__init__.py", "core/__init__.py", "core/plan/__init__.py", "core/plan/x.py"]
    write_tree(tmp_path, files)
    block = [
        "runtime/custodian_runtime/",
        "  clock.py        the wall clock",
        "  run/            a run's steps: act.py",
        "    observe.py    what it read",
        "  core/           the pure core",
    ]
    layout = _entries(block, "runtime/custodian_runtime/")
    core = _entries(["core/", "  plan/   the plan: extract.py"], "")
    assert unnamed(tmp_path, layout, core) == [
        "core/plan/x.py: not named in its package's entry",
        "run/_late.py: not named in its package's entry",
        "watch/: no entry",
    ]
    assert gone(tmp_path, layout, core) == ["run/observe.py"]
