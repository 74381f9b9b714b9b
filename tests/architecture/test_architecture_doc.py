"""docs/architecture.md is held to the code, and the package's top holds only its faces.

Each package of the runtime has an entry in the layout block, each of its modules is named in
that entry (or in the core's block, for `core/`), and each path the blocks name exists; each
module, class and function the document names in backticks exists.
"""

from __future__ import annotations

import ast
import importlib
import re
from itertools import pairwise
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


def crowded_top(package: Path, most: int = TOP_MODULES_AT_MOST) -> list[str]:
    """The modules at the package's top when there are more than `most` (else none)."""
    top = sorted(p.name for p in package.glob("*.py"))
    return top if len(top) > most else []


def test_the_package_top_holds_only_its_faces() -> None:
    assert crowded_top(PACKAGE) == []


def test_a_crowded_made_up_top_is_named(tmp_path: Path) -> None:
    write_tree(tmp_path, ["__init__.py", "clock.py", "errors.py", "run/__init__.py"])
    assert crowded_top(tmp_path, most=3) == []
    write_tree(tmp_path, ["helpers.py"])
    assert crowded_top(tmp_path, most=3) == ["__init__.py", "clock.py", "errors.py", "helpers.py"]


def test_the_checker_finds_a_module_the_layout_leaves_out() -> None:
    lines = ["x/                a package: one.py", "  two.py          the other"]
    entries = _entries(lines, "")
    assert set(entries) == {"x/", "x/two.py"}
    assert "three" not in _words(" ".join(entries.values()))


# What docs/architecture.md names in backticks: a path (`run/act.py`, `core/journal/`), a path
# and a name in it (`core/approvals/history.history_for`), a dotted name (`writes.send`,
# `Ruling.defers_to`) or an identifier that reads as code (`RunSoFar`, `rule_plan`, `utc_now()`).
# Each must exist; other spans (commands, values, settings) are prose, and so are the shapes of
# files on disk (`memory/approvals/`, `snapshots/<domain>/`).
SPAN = re.compile(r"`([^`\n]+)`")
FENCE = re.compile(r"^```.*?^```", re.M | re.S)
# In a fenced block: a call (`open_hub(`), a CamelCase name (`RunContext`), a snake_case name
# (`read_summary`), none of them part of a path.
FENCED = re.compile(
    r"(?<![\w./-])([A-Za-z_]\w*)\(|(?<![\w./-])([A-Z][a-z]+(?:[A-Z][a-z0-9]*)+)\b(?![./])"
    r"|(?<![\w./-])([a-z]+(?:_[a-z0-9]+)+)\b(?!\.py|/|\.)"
)
NAME = re.compile(r"[A-Za-z_][\w./]*(?:\(\)|\(\.\.\.\))?")
PROSE = frozenset({"OpenAPI"})  # a name of the world, not of the code
NOT_CODE = ("memory/", ".custodian/", "state/", "metrics/", "templates/", "static/", "application/")


def _spans(text: str) -> list[str]:
    """Each backticked span of the prose, and each call or code-like name of a fenced block."""
    fences = FENCE.findall(text)
    prose = FENCE.sub("", text)
    found = [s.strip() for s in SPAN.findall(prose)]
    for block in fences:
        for call, camel, snake in FENCED.findall(block):
            found.append(f"{call}()" if call else camel or snake)
    return found


def _defined(roots: list[Path]) -> set[str]:
    """Every name the code under `roots` defines or imports as: modules, classes, functions,
    attributes, parameters, aliases, and its strings that are one word (a journal kind, a
    reason code)."""
    names: set[str] = set()
    for path in (p for root in roots for p in root.rglob("*.py")):
        names.add(path.stem)
        tree = ast.parse(path.read_text("utf-8"))
        docstrings = {
            id(n.body[0].value)
            for n in ast.walk(tree)
            if isinstance(n, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            and n.body
            and isinstance(n.body[0], ast.Expr)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Name):
                names.add(node.id)
            elif isinstance(node, ast.arg | ast.keyword) and node.arg:
                names.add(node.arg)
            elif isinstance(node, ast.alias):
                names.add(node.asname or node.name.rpartition(".")[2])
            elif isinstance(node, ast.Attribute):
                names.add(node.attr)
            elif isinstance(node, ast.Constant) and id(node) not in docstrings:
                names.update(re.findall(r"^\w+$", str(node.value)))
    return names


def _looks_like_code(name: str) -> bool:
    return "_" in name.strip("_") or (name[:1].isupper() and not name.isupper())


def _module_exists(dotted: str, packages: tuple[str, ...]) -> bool:
    """`a.b.c` is a module of one of `packages`, or a module and an attribute chain in it."""
    parts = dotted.split(".")
    for package in packages:
        for cut in range(len(parts), 0, -1):
            try:
                value: object = importlib.import_module(f"{package}.{'.'.join(parts[:cut])}")
            except ImportError:
                continue
            for attr in parts[cut:]:
                value = getattr(value, attr, None)
            if value is not None:
                return True
            break  # the module is there, the rest is not: try the next package
    return False


def _exists(name: str, package: Path, defined: set[str]) -> bool:
    if name.endswith(".py") and "/" not in name:
        return any(p.name == name for p in package.parent.rglob(name))
    if "/" in name:
        head, _, tail = name.rpartition("/")
        module, _, inside = tail.partition(".") if not tail.endswith(".py") else (tail, "", "")
        roots = (package, package / "core", package.parent, package.parent.parent)
        here = [r / head / module for r in roots] + [r / head / f"{module}.py" for r in roots]
        return any(p.exists() for p in here) and all(a in defined for a in inside.split(".") if a)
    if "." in name:
        dotted = name.removeprefix(f"{package.name}.")
        packages = (package.name, "custodian_hub")
        return _module_exists(dotted, packages) or all(a in defined for a in dotted.split("."))
    return not _looks_like_code(name) or name in defined


def missing_names(text: str, package: Path) -> list[str]:
    """Each span of `text` that names code that is not there."""
    tests = package.parent.parent / "tests"  # the made-up operations the tests register
    defined = _defined([package, package.parent / "custodian_hub", tests])
    gone = []
    for span in dict.fromkeys(_spans(text)):
        if not NAME.fullmatch(span) or span.startswith(NOT_CODE) or span.endswith(".md"):
            continue
        if span in PROSE:
            continue
        name = span.removesuffix("()").removesuffix("(...)").rstrip("/")
        if not _exists(name, package, defined):
            gone.append(span)
    return gone


def test_every_name_the_document_gives_in_backticks_exists() -> None:
    gone = missing_names(DOC.read_text("utf-8"), PACKAGE)
    assert gone == [], "docs/architecture.md names what the code does not have:\n" + "\n".join(gone)


def test_the_name_checker_finds_a_made_up_name(tmp_path: Path) -> None:
    package = tmp_path / "custodian_runtime"
    (package / "run").mkdir(parents=True)
    (package / "run" / "act.py").write_text("def act(): ...\nclass Outcome: ...\n")
    text = (
        "The step `run/act.py` returns an `Outcome` from `act()`; `policy set` is a command.\n"
        "It once called `run/settle.py`, `settle_open()`, `Settled` and `run.act.nothing_here`.\n"
        "```\nrun/\n  act.py   act(), then gone_too(x), an Outcome, a GoneClass, a gone_name\n```\n"
    )
    assert missing_names(text, package) == [
        "run/settle.py",
        "settle_open()",
        "Settled",
        "run.act.nothing_here",
        "gone_too()",
        "GoneClass",
        "gone_name",
    ]


def _floor_table(text: str) -> dict[str, int]:
    """Each unit the document's floor table names (`run/`, `cli/_run.py`), as a dotted name,
    -> its place, counting the `;`-separated groups of a row (`6–9`) one by one."""
    section = text.split("## Floors", 1)[1].split("\n## ", 1)[0]
    places: dict[str, int] = {}
    place = 0
    for row in re.findall(r"^\| [\d–-]+ \| (.+?) \|", section, re.M):
        for group in row.split(";"):
            place += 1
            for unit in re.findall(r"`([^`]+)`", group):
                places[unit.removesuffix(".py").strip("/").replace("/", ".")] = place
    return places


def table_problems(places: dict[str, int], floors: tuple[tuple[str, ...], ...]) -> list[str]:
    """Where the floor table (`places`) and the layering plan (`floors`) part."""
    planned = [unit for floor in floors for unit in floor if unit not in ("", "_lazy")]
    problems = [f"{u}: in the table, not in the plan" for u in sorted(set(places) - set(planned))]
    problems += [f"{u}: in the plan, not in the table" for u in planned if u not in places]
    order = [(u, places[u]) for u in planned if u in places]
    problems += [
        f"{u}: the table puts it below {before}, which the plan puts under it"
        for (before, a), (u, b) in pairwise(order)
        if b < a
    ]
    return problems


def test_the_floor_table_is_the_layering_plan() -> None:
    """Each unit of test_layering.py's floors is in the table, in the same order."""
    from test_layering import FLOORS

    assert table_problems(_floor_table(DOC.read_text("utf-8")), FLOORS) == []


def test_a_made_up_table_apart_from_the_plan_is_named() -> None:
    floors = (("core", "errors", "", "_lazy"), ("journal",), ("run",), ("cli",))
    places = {"core": 1, "errors": 1, "run": 2, "journal": 3, "watch": 4}
    assert table_problems(places, floors) == [
        "watch: in the table, not in the plan",
        "cli: in the plan, not in the table",
        "run: the table puts it below journal, which the plan puts under it",
    ]


def test_the_floor_reader_counts_each_group_of_a_row() -> None:
    text = (
        "## Floors\n\n| floor | units | what |\n|---|---|---|\n"
        "| 1 | `core/` `errors.py` | pure |\n| 2–3 | `journal/`; `standing/store.py` | disk |\n"
        "\n## Next\n| 9 | `nothing/` | x |\n"
    )
    assert _floor_table(text) == {"core": 1, "errors": 1, "journal": 2, "standing.store": 3}


def _first_line(package: Path) -> str:
    tree = ast.parse((package / "__init__.py").read_text("utf-8"))
    return " ".join((ast.get_docstring(tree) or "").split("\n\n", 1)[0].split())


def drift(core: dict[str, str], top: Path) -> list[str]:
    """Each group of the core at `top` whose entry does not open with its face's docstring."""
    found = []
    for group in sorted(p.parent for p in top.glob("*/__init__.py")):
        said = " ".join(core.get(f"core/{group.name}/", "").split())
        first = _first_line(group)
        if first and not said.startswith(first):
            found.append(f"{group.name}/: the face says {first!r}")
    return found


def test_each_core_group_is_introduced_as_its_face_says() -> None:
    """The core block's entry of each group opens with its face's docstring: the code words it."""
    found = drift(_entries(_block("core-layout"), ""), PACKAGE / "core")
    assert found == [], "open each entry with its face's docstring:\n" + "\n".join(found)


def test_a_made_up_entry_that_words_its_group_otherwise_is_named(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "plan/__init__.py": '"""The plan: the model\'s answer parsed.\n\nMore."""\n',
            "fold/__init__.py": '"""The journal folded."""\n',
            "skip/__init__.py": "",
        },
    )
    core = _entries(
        [
            "core/",
            "  plan/   The plan: the model's",
            "          answer parsed. x.py",
            "  fold/  Folds.",
        ],
        "",
    )
    assert drift(core, tmp_path) == ["fold/: the face says 'The journal folded.'"]


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
