"""docs/commands.md and docs/settings.md are generated from the code, and stay so.

The command reference comes from the parser, the settings table from settings/table.py
(scripts/gen_reference.py, `make docs`); every variable the runtime names is in the table.
"""

from __future__ import annotations

import argparse
import ast
import functools
import importlib.util
import re
from collections.abc import Iterator
from dataclasses import fields
from pathlib import Path
from types import ModuleType

import pytest

from custodian_runtime.core.limits import Limits
from custodian_runtime.settings import load_settings
from custodian_runtime.settings.table import SETTINGS, number
from support.paths import REPO

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


@functools.cache
def _trees() -> tuple[tuple[Path, ast.Module], ...]:
    """Every module of the runtime, parsed once for the tests that read them all."""
    paths = sorted((REPO / "runtime").rglob("*.py"))
    return tuple((path, ast.parse(path.read_text(encoding="utf-8"))) for path in paths)


def _named_variables() -> set[str]:
    """Every CUSTODIAN_* or STATE_HUB_* string the runtime's code holds."""
    found = set()
    for path, tree in _trees():
        if "custodian_runtime" not in path.parts:
            continue
        for node in ast.walk(tree):
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


NAMED = re.compile(r"`(custodian [^`]*)`")


def _groups(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def command_problems(named: str, parser: argparse.ArgumentParser) -> list[str]:
    """What is wrong with a `custodian …` a message or a document names: no such command or option.

    `a|b` names alternatives; a placeholder (`<command>`, `…`) or a version ends the check."""
    words = named.split()[1:]
    if words and "|" in words[0] and _groups(parser):
        alternatives = words[0].split("|")
        return [
            p
            for a in alternatives
            for p in command_problems(" ".join(["x", a, *words[1:]]), parser)
        ]
    groups = _groups(parser)
    if words and groups and not words[0].startswith(("-", "<", "…")) and not words[0][0].isdigit():
        if words[0] not in groups:
            return [f"no command {words[0]!r} (there are: {', '.join(groups)})"]
        return command_problems(" ".join(["x", *words[1:]]), groups[words[0]])
    known = {option for action in parser._actions for option in action.option_strings}
    flags = {w.split("=")[0].rstrip(",.;:)") for w in words if w.startswith("--")}
    return [f"{parser.prog}: no option {flag}" for flag in sorted(flags - known)]


def _texts(tree: ast.Module) -> Iterator[tuple[int, str]]:
    """Each string the module holds, an f-string's values as `X`."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.lineno, node.value
        elif isinstance(node, ast.JoinedStr):
            parts = [v.value if isinstance(v, ast.Constant) else "X" for v in node.values]
            yield node.lineno, "".join(str(p) for p in parts)


def test_every_command_a_message_or_a_document_names_exists(gen: ModuleType) -> None:
    parser = gen.build_parser()
    found = []
    for path, tree in _trees():
        for line, text in _texts(tree):
            for named in NAMED.findall(text):
                found += [
                    f"{path.relative_to(REPO)}:{line} `{named}`: {p}"
                    for p in command_problems(named, parser)
                ]
    for path in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        for line, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            for named in NAMED.findall(text):
                found += [
                    f"{path.relative_to(REPO)}:{line} `{named}`: {p}"
                    for p in command_problems(named, parser)
                ]
    assert found == []


def test_a_made_up_command_or_option_is_named(gen: ModuleType) -> None:
    parser = gen.build_parser()
    assert command_problems("custodian approvals list --domain D", parser) == []
    assert command_problems("custodian policy show|set --domain D", parser) == []
    assert command_problems("custodian approvals", parser) == []
    assert command_problems("custodian journal compact", parser) == [
        "no command 'compact' (there are: prune, reseal, settle)"
    ]
    assert command_problems("custodian inspect --run R", parser) == [
        "custodian inspect: no option --run"
    ]
    assert command_problems("custodian grants issue|renew", parser)[0].startswith(
        "no command 'renew'"
    )
