"""docs/architecture.md's layout is held to the code, and the package's top holds only its faces.

Each package of the runtime has an entry in the layout block, each of its modules is named in
that entry (or in the core's block, for `core/`), and each path the blocks name exists.
"""

from __future__ import annotations

import re
from pathlib import Path

import custodian_runtime

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


def _packages() -> list[Path]:
    return sorted(
        p.parent
        for p in PACKAGE.rglob("__init__.py")
        if "__pycache__" not in p.parts and "_data" not in p.relative_to(PACKAGE).parts
    )


def _words(text: str) -> set[str]:
    return set(re.findall(r"[\w.]+", text))


def test_every_package_and_module_is_named_in_the_layout() -> None:
    layout = _entries(_block("layout"), "runtime/custodian_runtime/")
    core = _entries(_block("core-layout"), "")
    missing = []
    for package in _packages():
        rel = package.relative_to(PACKAGE).as_posix() + "/" if package != PACKAGE else ""
        entries = core if rel.startswith("core/") or rel == "core/" else layout
        if rel and rel not in entries:
            missing.append(f"{rel}: no entry")
            continue
        named = " ".join(text for path, text in entries.items() if path.startswith(rel))
        named += " " + " ".join(p.rsplit("/", 1)[-1] for p in entries if p.startswith(rel))
        for module in sorted(package.glob("*.py")):
            if module.name == "__init__.py":
                continue
            if module.name not in _words(named) and module.stem not in _words(named):
                missing.append(f"{rel}{module.name}: not named in its package's entry")
    assert missing == [], "docs/architecture.md's layout, out of date:\n" + "\n".join(missing)


def test_every_path_the_layout_names_exists() -> None:
    layout = _entries(_block("layout"), "runtime/custodian_runtime/")
    core = _entries(_block("core-layout"), "")
    gone = [
        path
        for path in [*layout, *core]
        if path and not path.startswith("runtime/") and not (PACKAGE / path).exists()
    ]
    assert gone == []


def test_the_package_top_holds_only_its_faces() -> None:
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(top) <= TOP_MODULES_AT_MOST, top


def test_the_checker_finds_a_module_the_layout_leaves_out() -> None:
    lines = ["x/                a package: one.py", "  two.py          the other"]
    entries = _entries(lines, "")
    assert set(entries) == {"x/", "x/two.py"}
    assert "three" not in _words(" ".join(entries.values()))
