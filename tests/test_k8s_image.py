"""The Dockerfile's key properties, read by parsing it (no Docker engine needed)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def instructions(path: Path) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, continuation lines joined and comments dropped."""
    result: list[tuple[str, str]] = []
    pending = ""
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        full = pending + line
        pending = ""
        keyword, _, args = full.partition(" ")
        result.append((keyword.upper(), args.strip()))
    return result


@pytest.fixture(scope="module")
def dockerfile() -> list[tuple[str, str]]:
    return instructions(REPO / "Dockerfile")


def last(dockerfile: list[tuple[str, str]], keyword: str) -> str:
    return [args for kw, args in dockerfile if kw == keyword][-1]


def final_stage(dockerfile: list[tuple[str, str]]) -> list[tuple[str, str]]:
    starts = [i for i, (kw, _) in enumerate(dockerfile) if kw == "FROM"]
    return dockerfile[starts[-1] :]


def test_multi_stage_on_slim_python(dockerfile: list[tuple[str, str]]) -> None:
    froms = [args for kw, args in dockerfile if kw == "FROM"]
    assert len(froms) >= 2
    assert all("python:${PYTHON_VERSION}-slim" in f for f in froms)
    version = dict(a.split("=", 1) for kw, a in dockerfile if kw == "ARG" and "=" in a)
    assert version["PYTHON_VERSION"] in {"3.11", "3.12"}


def test_builder_makes_the_wheel_and_final_stage_installs_it(
    dockerfile: list[tuple[str, str]],
) -> None:
    builder = dockerfile[: len(dockerfile) - len(final_stage(dockerfile))]
    assert any(kw == "RUN" and "pip wheel --no-deps" in a for kw, a in builder)
    assert any(
        kw == "RUN" and "from=builder" in a and "pip install /wheels/" in a
        for kw, a in final_stage(dockerfile)
    )


def test_runs_as_uid_10001_with_the_custodian_entrypoint(
    dockerfile: list[tuple[str, str]],
) -> None:
    user = last(dockerfile, "USER")
    assert re.fullmatch(r"10001(:10001)?", user), "USER must be the numeric non-root uid"
    assert json.loads(last(dockerfile, "ENTRYPOINT")) == ["custodian", "run"]
    assert json.loads(last(dockerfile, "CMD")) == ["--json"]


def test_canon_and_env_defaults(dockerfile: list[tuple[str, str]]) -> None:
    copies = [a for kw, a in final_stage(dockerfile) if kw == "COPY"]
    assert any(a.split()[-2:] == ["canon/", "/opt/custodian/canon/"] for a in copies)
    env = " ".join(a for kw, a in final_stage(dockerfile) if kw == "ENV")
    for setting in (
        "CUSTODIAN_CANON_DIR=/opt/custodian/canon",
        "CUSTODIAN_MEMORY_DIR=/var/lib/custodian/memory",
        "CUSTODIAN_LOG_FORMAT=json",
        "HOME=/tmp",
    ):
        assert setting in env


def test_claude_code_is_an_optional_pinned_build_argument(
    dockerfile: list[tuple[str, str]],
) -> None:
    assert ("ARG", 'CLAUDE_CODE_VERSION=""') in final_stage(dockerfile)
    install = [a for kw, a in dockerfile if kw == "RUN" and "claude-code" in a]
    assert len(install) == 1
    assert '"@anthropic-ai/claude-code@${CLAUDE_CODE_VERSION}"' in install[0]
    assert 'if [ -z "${CLAUDE_CODE_VERSION}" ]' in install[0]
    assert "claude --version" in install[0]


def test_dockerignore_keeps_local_state_out() -> None:
    lines = (REPO / ".dockerignore").read_text(encoding="utf-8").splitlines()
    patterns = {line.strip() for line in lines if line.strip() and not line.startswith("#")}
    assert {".git", ".venv", "memory/", "**/__pycache__"} <= patterns
    assert "*" in patterns  # allow-list: only what is named below it is sent
    assert {"!runtime/", "!canon/", "!pyproject.toml"} <= patterns
