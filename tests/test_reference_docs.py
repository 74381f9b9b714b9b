"""docs/commands.md and docs/settings.md are generated from the code, and stay so.

The command reference comes from the parser, the settings table from settings/table.py
(scripts/gen_reference.py, `make docs`); every variable the runtime names is in the table.
"""

from __future__ import annotations

import ast
import importlib.util
import re
from dataclasses import fields
from pathlib import Path
from types import ModuleType

import pytest

from custodian_runtime.core.limits import Limits
from custodian_runtime.settings import load_settings
from custodian_runtime.settings.table import SETTINGS, number

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts" / "gen_reference.py"
VARIABLE = re.compile(r"(CUSTODIAN|STATE_HUB)_[A-Z0-9_]*[A-Z0-9]")


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_reference", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def gen() -> ModuleType:
    return _script()


def test_the_committed_references_are_what_the_code_generates(gen: ModuleType) -> None:
    for path, text in gen.generated().items():
        committed = path.read_text(encoding="utf-8") if path.exists() else None
        assert committed == text, f"{path.relative_to(REPO)} differs from the code: run `make docs`"


def test_a_drifted_reference_is_caught_and_names_the_command(
    gen: ModuleType,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    commands, settings = tmp_path / "commands.md", tmp_path / "settings.md"
    monkeypatch.setattr(gen, "ROOT", tmp_path)
    monkeypatch.setattr(gen, "COMMANDS", commands)
    monkeypatch.setattr(gen, "SETTINGS_DOC", settings)
    assert gen.main([]) == 0
    assert gen.main(["--check"]) == 0
    settings.write_text(settings.read_text("utf-8").replace("| 8192 |", "| 4096 |"), "utf-8")
    capsys.readouterr()
    assert gen.main(["--check"]) == 1
    assert capsys.readouterr().out == "settings.md differs from the code: run `make docs`\n"


def test_every_command_and_option_is_in_the_command_reference(gen: ModuleType) -> None:
    text = gen.commands_text()
    for words, _, sub in gen._subcommands(gen.build_parser(), ()):
        assert f"\n## custodian {' '.join(words)}\n" in text
        for action in sub._actions:
            for option in action.option_strings:
                assert option in ("-h", "--help") or f"`{option}" in text, (words, option)


def _named_variables() -> set[str]:
    """Every CUSTODIAN_* or STATE_HUB_* string the runtime's code holds."""
    found = set()
    for path in (REPO / "runtime" / "custodian_runtime").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            is_text = isinstance(node, ast.Constant) and isinstance(node.value, str)
            if is_text and VARIABLE.fullmatch(node.value):
                found.add(node.value)
    return found


def test_every_variable_the_runtime_names_is_in_the_settings_table() -> None:
    listed = {setting.variable for setting in SETTINGS}
    missing = _named_variables() - listed
    assert not missing, f"add these to custodian_runtime/settings/table.py: {sorted(missing)}"
    limits = {f"CUSTODIAN_{f.name.upper()}" for f in fields(Limits)}
    assert limits <= listed, f"a cap or budget without its row: {sorted(limits - listed)}"
    assert len(listed) == len(SETTINGS), "a variable is listed twice"


def test_the_loader_takes_its_defaults_from_the_table(tmp_path: Path) -> None:
    flags = {"hub": "http://127.0.0.1:1", "llm": "offline", "domain": "website"}
    settings = load_settings(flags, {}, tmp_path)
    assert settings.hub is not None
    assert settings.hub.timeout_s == number("STATE_HUB_TIMEOUT_S")
    assert settings.hub.max_bytes == number("STATE_HUB_MAX_BYTES")
    assert settings.model.max_output_tokens == number("CUSTODIAN_MAX_OUTPUT_TOKENS")
    assert settings.model.max_retry_wait_s == number("CUSTODIAN_LLM_MAX_RETRY_WAIT_S")
    assert settings.limits == Limits()
    changed = load_settings(flags, {"STATE_HUB_TIMEOUT_S": "2.5"}, tmp_path)
    assert changed.hub is not None and changed.hub.timeout_s == 2.5
