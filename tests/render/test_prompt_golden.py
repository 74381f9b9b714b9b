"""Golden files pin the prompt people and models read.

The rendered system and user prompts for the hand-built state in test_context_fixtures.py (fixed
`now`, fixed constitution text) are compared with tests/support/golden/prompt_system.txt and
tests/support/golden/prompt_user.txt. After an intended change to the templates or to
core/context/prompt.py, regenerate them and review the diff before committing:

    UPDATE_GOLDEN=1 .venv/bin/pytest tests/render/test_prompt_golden.py
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from custodian_runtime.render.prompt import render_prompt
from support.context import typical_inputs
from support.paths import SUPPORT

GOLDEN = SUPPORT / "golden"


def _check(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN") == "1":
        path.write_text(text, encoding="utf-8")
    if not path.exists():
        pytest.fail(f"{path.name} is missing: run UPDATE_GOLDEN=1 pytest {Path(__file__).name}")
    assert text == path.read_text(encoding="utf-8"), (
        f"the rendered prompt differs from {path.name}; if the change is intended, "
        "regenerate with UPDATE_GOLDEN=1 and review the diff"
    )


def test_the_system_prompt_matches_its_golden_file() -> None:
    _check("prompt_system.txt", render_prompt(typical_inputs()).system)


def test_the_user_prompt_matches_its_golden_file() -> None:
    _check("prompt_user.txt", render_prompt(typical_inputs()).user)


def test_rendering_is_deterministic() -> None:
    assert render_prompt(typical_inputs()) == render_prompt(typical_inputs())
