"""Renovate's config reaches every lock file and the Dockerfile's base image."""

from __future__ import annotations

import json
import re
from typing import Any

from support.paths import REPO

CONFIG: dict[str, Any] = json.loads((REPO / "renovate.json").read_text(encoding="utf-8"))


def python_regex(pattern: str) -> re.Pattern[str]:
    """A Renovate (JavaScript) pattern as Python: `/.../` stripped, `(?<n>` as `(?P<n>`."""
    body = pattern[1:-1] if pattern.startswith("/") and pattern.endswith("/") else pattern
    return re.compile(body.replace("(?<", "(?P<"))


def test_the_pip_compile_manager_matches_every_lock_and_nothing_else() -> None:
    patterns = [python_regex(p) for p in CONFIG["pip-compile"]["managerFilePatterns"]]
    locks = sorted(p.relative_to(REPO).as_posix() for p in (REPO / "requirements").glob("*.txt"))
    assert locks == ["requirements/build.txt", "requirements/dev.txt", "requirements/runtime.txt"]
    assert all(any(p.search(lock) for p in patterns) for lock in locks)
    assert not any(p.search("requirements/build.in") for p in patterns)
    assert CONFIG["pep621"]["enabled"] is False, "pyproject.toml changes must come with its locks"


def test_the_base_image_manager_reads_the_dockerfile_arg_with_or_without_a_digest() -> None:
    (manager,) = CONFIG["customManagers"]
    assert any(python_regex(p).search("Dockerfile") for p in manager["managerFilePatterns"])
    (pattern,) = (python_regex(p) for p in manager["matchStrings"])
    dockerfile = (REPO / "Dockerfile").read_text(encoding="utf-8")
    found = pattern.search(dockerfile)
    assert found and found["depName"] == "python" and found["currentValue"].startswith("3.")
    digest = "sha256:" + "a" * 64
    pinned = pattern.search(f"ARG PYTHON_IMAGE=python:3.12-slim-bookworm@{digest}\n")
    assert pinned and pinned["currentValue"] == "3.12-slim-bookworm"
    assert pinned["currentDigest"] == digest
