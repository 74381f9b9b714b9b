"""Packages import their names on first access, so `custodian --help` loads only what it needs.

Not timed (bench/startup.py measures): the tests check which modules a real process loaded.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import custodian_hub
import custodian_runtime.core
import custodian_runtime.run
from support.trees import write_tree

CUSTODIAN = Path(sys.executable).parent / "custodian"
# What `--help` must not load: the HTTP client, templates, the models' validation, the hub.
HEAVY = ("httpx", "jinja2", "pydantic", "pydantic_core", "custodian_hub", "dotenv")
PACKAGES = (
    "custodian_runtime.core",
    "custodian_runtime.audit",
    "custodian_runtime.evals",
    "custodian_runtime.llm",
    "custodian_runtime.files",
    "custodian_runtime.journal.person",
    "custodian_runtime.metrics",
    "custodian_runtime.person",
    "custodian_runtime.render",
    "custodian_runtime.review",
    "custodian_runtime.run",
    "custodian_runtime.statehub",
    "custodian_hub",
)


def _clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("CUSTODIAN_", "STATE_HUB_"))}


def _loaded(argv: list[str], cwd: Path) -> tuple[set[str], str]:
    """The modules a process running `argv[0]` as a script held at exit, and its stdout."""
    listing = cwd / "modules.txt"
    wrapper = (
        "import atexit, runpy, sys\n"
        f"atexit.register(lambda: open({str(listing)!r}, 'w').write('\\n'.join(sys.modules)))\n"
        "sys.argv = sys.argv[1:]\n"
        "runpy.run_path(sys.argv[0], run_name='__main__')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", wrapper, *argv],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=_clean_env(),
        timeout=60,
        check=True,
    )
    return set(listing.read_text().split("\n")), done.stdout


def _script(tmp_path: Path, code: str) -> str:
    path = tmp_path / "script.py"
    path.write_text(code)
    return str(path)


def _heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in HEAVY)


def test_help_loads_no_http_client_templates_pydantic_or_hub(tmp_path: Path) -> None:
    modules, out = _loaded([str(CUSTODIAN), "--help"], tmp_path)
    assert "usage: custodian" in out and "approvals" in out
    assert "custodian_runtime.cli" in modules
    assert _heavy(modules) == [], "import these inside the command that needs them"
    assert "custodian_runtime.settings._load" not in modules


# What `--help` does not need either: the revision `--version` reads, JSON mode's log lines, what
# an error or a run prints, pathlib without a .env to read, and the grants' random ids.
NOT_FOR_HELP = (
    "custodian_runtime.packaged",
    "custodian_runtime.process.log_lines",
    "custodian_runtime.clock",
    "custodian_runtime.process.stopping",
    "custodian_runtime.core.inert",
    "custodian_runtime.core.redact",
    "pathlib",
    "secrets",
    "logging",
    "datetime",
)


def test_help_builds_the_parser_of_argparse_and_the_help_text_alone(tmp_path: Path) -> None:
    modules, out = _loaded([str(CUSTODIAN), "--help"], tmp_path)
    assert "usage: custodian" in out
    assert sorted(set(NOT_FOR_HELP) & modules) == [], "import these where they are used"
    modules, out = _loaded([str(CUSTODIAN), "--version"], tmp_path)
    assert out.startswith("custodian ") and "(revision " in out
    assert "custodian_runtime.packaged" in modules  # read when asked for, not before


def test_a_subcommands_help_is_as_light(tmp_path: Path) -> None:
    modules, out = _loaded([str(CUSTODIAN), "approvals", "list", "--help"], tmp_path)
    assert "--status" in out and "rejected" in out
    assert _heavy(modules) == []


def loaded_at_once(package: str, cwd: Path) -> list[str]:
    """The modules of `package` that a process importing it alone (from `cwd`) loads."""
    modules, _ = _loaded([_script(cwd, f"import {package}")], cwd)
    assert package in modules
    return sorted(m for m in modules if m.startswith(package + "."))


@pytest.mark.parametrize("package", PACKAGES)
def test_importing_a_package_loads_none_of_its_modules(package: str, tmp_path: Path) -> None:
    inside = loaded_at_once(package, tmp_path)
    assert inside == [], f"{package}/__init__.py imports {inside} at once"


def test_a_made_up_face_that_imports_at_once_is_named(tmp_path: Path) -> None:
    lazy = (
        "from typing import TYPE_CHECKING\n"
        "from custodian_runtime._lazy import lazy_attributes\n"
        "if TYPE_CHECKING:\n    from made_lazy.shelf import Shelf\n"
        "if not TYPE_CHECKING:\n    __getattr__, __dir__ = lazy_attributes(globals())\n"
    )
    write_tree(
        tmp_path,
        {
            "made_eager/__init__.py": "from made_eager.shelf import Shelf\n",
            "made_eager/shelf.py": "class Shelf: ...\n",
            "made_lazy/__init__.py": lazy,
            "made_lazy/shelf.py": "class Shelf: ...\n",
        },
    )
    assert loaded_at_once("made_eager", tmp_path) == ["made_eager.shelf"]
    assert loaded_at_once("made_lazy", tmp_path) == []


def test_the_embedded_hub_does_not_load_the_http_server(tmp_path: Path) -> None:
    code = "import custodian_hub; custodian_hub.in_process"
    modules, _ = _loaded([_script(tmp_path, code)], tmp_path)
    assert "custodian_hub._transport" in modules
    assert "custodian_hub._server" not in modules and "custodian_hub._serve" not in modules


def test_a_name_is_the_one_its_module_defines_and_listed_by_dir() -> None:
    from custodian_hub._transport import in_process
    from custodian_runtime.run._runner import run

    assert custodian_hub.in_process is in_process
    assert custodian_runtime.run.run is run
    assert custodian_runtime.core.plan.extract is sys.modules["custodian_runtime.core.plan.extract"]
    assert set(custodian_runtime.run.__all__) <= set(dir(custodian_runtime.run))
    assert set(custodian_runtime.core.__all__) <= set(dir(custodian_runtime.core))


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'nothing_here'"):
        _ = custodian_hub.nothing_here  # type: ignore[attr-defined]
    assert not hasattr(custodian_runtime.core, "nothing_here")


# What a run that skips on a 304 does not need: the steps past the conditional read, the prompt's
# templates, the metrics client without a Pushgateway (bench/skip.py measures the cost).
NOT_FOR_A_SKIP = (
    "custodian_runtime.run._full",
    "custodian_runtime.run.orient",
    "custodian_runtime.run.decide",
    "custodian_runtime.run.act",
    "custodian_runtime.run._reconcile",
    "custodian_runtime.render.prompt",
    "jinja2",
    "prometheus_client",
)


def test_a_skip_on_a_304_loads_none_of_the_steps_past_it(tmp_path: Path) -> None:
    from custodian_hub import ReferenceHub, load_seed
    from support.runs import CANON, small_dataset

    load_seed(tmp_path / "hub.sqlite3", small_dataset())
    with ReferenceHub(tmp_path / "hub.sqlite3") as hub:
        argv = [str(CUSTODIAN), "run", "--domain", "website", "--hub", hub.url, "--llm",
                "offline", "--memory", str(tmp_path / "memory"), "--canon", str(CANON)]  # fmt: skip
        first, _ = _loaded([*argv, "--force"], tmp_path)
        assert "custodian_runtime.run._full" in first  # a run that reads loads them
        modules, out = _loaded(argv, tmp_path)
    assert "skipped" in out, out
    assert sorted(set(NOT_FOR_A_SKIP) & modules) == [], "import these past the skip"
