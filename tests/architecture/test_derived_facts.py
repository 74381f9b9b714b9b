"""Facts once kept by hand in several places come from one source, or a test ties them."""

from __future__ import annotations

import ast
import importlib
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from custodian_runtime.core.context._items import COLUMNS
from custodian_runtime.core.context._sections import PROMPT_SECTIONS
from custodian_runtime.core.context.prompt import CATEGORIES, SECTIONS, build_view, section_items
from custodian_runtime.errors import ConfigError
from custodian_runtime.llm._child_env import PROVIDER_KEYS, refused
from custodian_runtime.llm.specs import ADAPTERS, NEEDS_ARGUMENT, RULES, SPEC_CHOICES, SPECS
from custodian_runtime.settings import load_settings
from support.context import typical_inputs


def test_the_prompt_sections_have_one_table() -> None:
    keys = [s.key for s in PROMPT_SECTIONS]
    assert len(set(keys)) == len(keys) == 10
    assert list(SECTIONS) == keys == [key for key, *_ in CATEGORIES] == list(COLUMNS)
    assert list(section_items(typical_inputs())) == keys  # every section gets its items
    view = build_view(typical_inputs())
    assert [(s.key, s.heading) for s in view.sections] == [
        (p.key, p.heading) for p in PROMPT_SECTIONS
    ]
    assert all(f" {s.key}: {COLUMNS[s.key]}>>>" in s.opening for s in view.sections)


def test_the_model_specs_have_one_table() -> None:
    assert SPEC_CHOICES == (
        "offline, claude-code, anthropic, openai, openrouter, gemini, ollama, "
        "openai-compatible, file:PATH, cmd:COMMAND"
    )
    assert [n.split(":")[0] for n in SPEC_CHOICES.split(", ")] == sorted(SPECS, key=_shown)
    assert set(NEEDS_ARGUMENT) <= set(ADAPTERS) and RULES not in ADAPTERS
    with pytest.raises(ConfigError) as caught:
        load_settings({"domain": "website", "hub": "embedded"}, {}, Path("/nonexistent"))
    assert SPEC_CHOICES in caught.value.message
    help_text = " ".join(_run_help().split())
    assert f"model spec: {SPEC_CHOICES} (env CUSTODIAN_LLM)" in help_text


def _shown(name: str) -> int:
    """Where a spec stands in SPEC_CHOICES: the table's order, those taking an argument last."""
    return list(SPECS).index(name) + (100 if name in NEEDS_ARGUMENT else 0)


def _run_help() -> str:
    done = subprocess.run(
        [sys.executable, "-m", "custodian_runtime", "run", "--help"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "COLUMNS": "400"},
    )
    return done.stdout


# Environment names an adapter reads that hold a credential.
_SECRET = re.compile(r"^[A-Z][A-Z0-9_]*_(API_KEY|OAUTH_TOKEN|ORG_ID|PROJECT_ID)$")


def _secret_literals(module: ModuleType) -> set[str]:
    source = Path(str(module.__file__)).read_text("utf-8")
    return {
        node.value
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and _SECRET.match(node.value)
    }


def test_every_adapters_key_is_a_provider_key_no_child_sees() -> None:
    modules = [importlib.import_module(target.split(":")[0]) for target in ADAPTERS.values()]
    key_vars = {m.KEY_VAR for m in modules if hasattr(m, "KEY_VAR")}
    assert len(key_vars) == 6  # anthropic, openai, openrouter, gemini, ollama, openai-compatible
    named = set().union(*(_secret_literals(m) for m in modules))
    assert {"OPENAI_ORG_ID", "CLAUDE_CODE_OAUTH_TOKEN"} <= named  # the scan sees them
    assert key_vars | named <= PROVIDER_KEYS, sorted((key_vars | named) - PROVIDER_KEYS)
    assert all(refused(name) for name in key_vars | named)


def test_the_key_scan_sees_a_made_up_adapters_keys(tmp_path: Path) -> None:
    source = tmp_path / "made_adapter.py"
    source.write_text(
        '"""Reads MADE_API_KEY."""\n'  # a docstring's words are no literal of their own
        'KEY_VAR = "MADE_API_KEY"\nORG = "MADE_ORG_ID"\nURL = "MADE_BASE_URL"\n'
        'def token(env):\n    return env.get("MADE_OAUTH_TOKEN")\n',
        "utf-8",
    )
    module = ModuleType("made_adapter")
    module.__file__ = str(source)
    found = _secret_literals(module)
    assert found == {"MADE_API_KEY", "MADE_ORG_ID", "MADE_OAUTH_TOKEN"}
    assert not found <= PROVIDER_KEYS  # keys no child is kept from: the check above fails on them
