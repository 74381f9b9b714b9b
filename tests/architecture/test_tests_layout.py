"""The tests are laid out as the runtime is, and what names a test's path names one that exists.

A test file sits in the folder of the package it tests: `tests/<package>/` for a package of
`custodian_runtime` (`tests/core/authority/` for `core/authority/`, `tests/statehub/backends/`
for `statehub/backends/`), `tests/hub/` for `custodian_hub`, or one of the few folders for what
is not a runtime package (`EXTRA`). What the tests share and is not a test is in
`tests/support/`, which holds no test; `tests/conftest.py` is the one other module at the top.
"""

from __future__ import annotations

import re
from pathlib import Path

import custodian_hub
import custodian_runtime
from support.paths import REPO, TESTS
from support.trees import write_tree

RUNTIME = Path(custodian_runtime.__file__).parent
HUB = Path(custodian_hub.__file__).parent

# The folders for what is not a runtime package, and what each holds.
EXTRA = {
    "architecture": "the checks of the code's shape",
    "bench": "the bench scripts, each run briefly",
    "docs": "README and docs/: runnable blocks, links, generated references, the demo",
    "k8s": "the manifests, the image and the validator",
    "packaging": "the wheel, the locks, pins and system packages",
}
SUPPORT = "support"
# Where the project names a test's path in prose, comments or recipes.
NAMING = ("README.md", "Makefile", "pyproject.toml", "docs", "scripts", "bench", "k8s", "runtime")
A_TEST_PATH = re.compile(r"\btests/[A-Za-z0-9_./*-]*[A-Za-z0-9_*/]")


def misplaced(tests: Path, runtime: Path) -> list[str]:
    """Each module under `tests` that is not where the layout puts it, with what to do."""
    problems = []
    for path in sorted(tests.rglob("*.py")):
        folder = path.parent.relative_to(tests).parts
        name = "/".join((*folder, path.name))
        if not path.name.startswith("test_"):
            if folder[:1] != (SUPPORT,) and name != "conftest.py":
                problems.append(f"{name}: not a test; what tests share goes in tests/{SUPPORT}/")
        elif not folder:
            problems.append(f"{name}: move it into the folder of the package it tests")
        elif folder[0] == SUPPORT:
            problems.append(f"{name}: a test in tests/{SUPPORT}/; move it to its package's folder")
        elif folder in {("hub",), *((extra,) for extra in EXTRA)}:
            continue
        elif not (runtime.joinpath(*folder) / "__init__.py").is_file():
            where = "/".join(folder)
            problems.append(
                f"{name}: custodian_runtime has no package {where}/; move it to the folder of "
                f"the package it tests, or to one of {', '.join(sorted(EXTRA))}"
            )
    return problems


def twins(tests: Path) -> list[str]:
    """Test files that share a name (pytest imports each by its name alone)."""
    seen: dict[str, list[str]] = {}
    for path in sorted(tests.rglob("test_*.py")):
        seen.setdefault(path.name, []).append(str(path.relative_to(tests)))
    return [" and ".join(paths) for paths in seen.values() if len(paths) > 1]


def stale_paths(repo: Path, places: tuple[str, ...] = NAMING) -> list[str]:
    """Each `tests/...` path a document, recipe or comment names that matches no file."""
    found = []
    for place in places:
        root = repo / place
        files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        for path in files:
            try:
                text = path.read_text("utf-8")
            except (UnicodeDecodeError, OSError):
                continue
            for named in sorted(set(A_TEST_PATH.findall(text))):
                if not any(repo.glob(named.rstrip("/"))):
                    found.append(f"{path.relative_to(repo)}: {named}")
    return found


def test_every_test_file_is_in_the_folder_of_what_it_tests() -> None:
    assert misplaced(TESTS, RUNTIME) == []


def empty_folders(tests: Path) -> list[str]:
    """Each folder of `tests` (outside tests/support/) with no test in it or below it."""
    folders = {p.parent for p in tests.rglob("test_*.py")}
    return sorted(
        str(d.relative_to(tests))
        for d in tests.rglob("*")
        if d.is_dir()
        and d.name != "__pycache__"
        and SUPPORT not in d.relative_to(tests).parts
        and not any(f.is_relative_to(d) for f in folders)
    )


def packaged_extras(runtime: Path) -> list[str]:
    """Each folder for what is not a runtime package (EXTRA) that names a package of `runtime`."""
    return [extra for extra in EXTRA if (runtime / extra / "__init__.py").exists()]


def test_every_folder_of_tests_holds_a_test() -> None:
    assert empty_folders(TESTS) == []


def test_no_two_test_files_share_a_name() -> None:
    assert twins(TESTS) == []


def test_every_test_path_the_project_names_exists() -> None:
    assert stale_paths(REPO) == []


def test_the_reference_hub_has_its_folder_and_the_extras_are_no_package() -> None:
    assert (HUB / "__init__.py").is_file()
    assert packaged_extras(RUNTIME) == []


# --- the checks fail on a made-up layout --------------------------------------------------------


def test_a_test_at_the_top_in_a_made_up_folder_or_in_support_is_named(tmp_path: Path) -> None:
    runtime = write_tree(
        tmp_path / "rt", ["watch/__init__.py", "core/__init__.py", "core/plan/__init__.py"]
    )
    tests = write_tree(
        tmp_path / "tests",
        [
            "conftest.py",
            "test_loose.py",
            "watch/test_watch.py",
            "core/plan/test_plan.py",
            "hub/test_hub.py",
            "docs/test_links.py",
            "wach/test_typo.py",
            "core/planning/test_plan_items.py",
            "support/runs.py",
            "support/test_helper.py",
            "watch/watchsupport.py",
        ],
    )
    assert misplaced(tests, runtime) == [
        "core/planning/test_plan_items.py: custodian_runtime has no package core/planning/; move "
        "it to the folder of the package it tests, or to one of architecture, bench, docs, k8s, "
        "packaging",
        "support/test_helper.py: a test in tests/support/; move it to its package's folder",
        "test_loose.py: move it into the folder of the package it tests",
        "wach/test_typo.py: custodian_runtime has no package wach/; move it to the folder of the "
        "package it tests, or to one of architecture, bench, docs, k8s, packaging",
        "watch/watchsupport.py: not a test; what tests share goes in tests/support/",
    ]


def test_two_test_files_of_one_name_are_named(tmp_path: Path) -> None:
    tests = write_tree(tmp_path, ["watch/test_loop.py", "run/test_loop.py", "run/test_run.py"])
    assert twins(tests) == ["run/test_loop.py and watch/test_loop.py"]


def test_a_stale_test_path_in_a_document_is_named(tmp_path: Path) -> None:
    write_tree(tmp_path, ["tests/watch/test_watch.py", "tests/support/golden/note.md"])
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text(
        "`tests/watch/test_watch.py`, `tests/test_watch.py`, `tests/support/golden/`,"
        " tests/watch/test_*.py and tests/golden/note.md.",
        "utf-8",
    )
    assert stale_paths(tmp_path, ("docs",)) == [
        "docs/a.md: tests/golden/note.md",
        "docs/a.md: tests/test_watch.py",
    ]


def test_an_empty_folder_and_an_extra_that_is_a_package_are_named(tmp_path: Path) -> None:
    tests = write_tree(
        tmp_path / "tests",
        ["watch/test_watch.py", "core/plan/test_plan.py", "support/golden/note.md"],
    )
    (tests / "run").mkdir()
    (tests / "core" / "fold" / "__pycache__").mkdir(parents=True)
    assert empty_folders(tests) == ["core/fold", "run"]
    runtime = write_tree(tmp_path / "rt", ["watch/__init__.py", "docs/__init__.py", "k8s/x.py"])
    assert packaged_extras(runtime) == ["docs"]
