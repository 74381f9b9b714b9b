"""The Dockerfile's key properties, read by parsing it (no Docker engine needed)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from support.paths import REPO


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


def stages(dockerfile: list[tuple[str, str]]) -> dict[str, list[tuple[str, str]]]:
    """Each stage's instructions by its `AS` name; the last, unnamed one is `final`."""
    starts = [i for i, (kw, _) in enumerate(dockerfile) if kw == "FROM"]
    found: dict[str, list[tuple[str, str]]] = {}
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(dockerfile)
        words = dockerfile[start][1].split()
        name = words[2] if len(words) == 3 and words[1].upper() == "AS" else "final"
        found[name] = dockerfile[start:end]
    return found


def final_stage(dockerfile: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return stages(dockerfile)["final"]


def runs(stage: list[tuple[str, str]]) -> str:
    return "\n".join(a for kw, a in stage if kw == "RUN")


def global_args(dockerfile: list[tuple[str, str]]) -> dict[str, str]:
    """ARGs declared before the first FROM, with their defaults."""
    first = next(i for i, (kw, _) in enumerate(dockerfile) if kw == "FROM")
    pairs = (a.split("=", 1) for kw, a in dockerfile[:first] if kw == "ARG" and "=" in a)
    return {k: v.strip('"') for k, v in pairs}


def test_every_stage_starts_from_one_slim_python_base(dockerfile: list[tuple[str, str]]) -> None:
    assert set(stages(dockerfile)) == {"builder", "claude", "final"}
    froms = [args.split()[0] for kw, args in dockerfile if kw == "FROM"]
    assert froms == ["${PYTHON_IMAGE}"] * 3, "one base, set once, so a digest pins every stage"
    base = global_args(dockerfile)["PYTHON_IMAGE"]
    assert re.fullmatch(r"python:3\.1[12]-slim(-bookworm)?(@sha256:[0-9a-f]{64})?", base), base


def test_every_python_package_is_installed_from_a_lock_with_hashes(
    dockerfile: list[tuple[str, str]],
) -> None:
    builder, final = runs(stages(dockerfile)["builder"]), runs(final_stage(dockerfile))
    assert "pip install --require-hashes -r requirements/build.txt" in builder
    assert "pip wheel --no-deps --no-build-isolation" in builder
    assert "source=requirements/runtime.txt" in final and "from=builder" in final
    assert "pip install --require-hashes -r /tmp/runtime.txt" in final
    assert "pip install --no-deps /wheels/*.whl" in final and "pip check" in final
    every = runs(dockerfile)
    installs = re.findall(r"pip install [^&;]*", every)
    assert all("--require-hashes" in i or "--no-deps" in i for i in installs), installs


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


def test_claude_code_is_an_optional_pinned_build_argument_with_its_sha256(
    dockerfile: list[tuple[str, str]],
) -> None:
    assert global_args(dockerfile) | {"PYTHON_IMAGE": ""} == {
        "PYTHON_IMAGE": "",
        "CLAUDE_CODE_VERSION": "",
        "CLAUDE_CODE_SHA256": "",
    }
    claude = stages(dockerfile)["claude"]
    assert {("ARG", "CLAUDE_CODE_VERSION"), ("ARG", "CLAUDE_CODE_SHA256")} <= set(claude)
    script = runs(claude)
    assert 'if [ -z "${CLAUDE_CODE_VERSION}" ]' in script
    assert 'if [ -z "${CLAUDE_CODE_SHA256}" ]' in script and "exit 1" in script
    assert "latest" not in script


def test_the_claude_stage_fetches_one_native_binary_for_the_image_libc_and_checks_it(
    dockerfile: list[tuple[str, str]],
) -> None:
    script = runs(stages(dockerfile)["claude"])
    assert "claude-code-linux-${arch}${libc}" in script
    assert "-${CLAUDE_CODE_VERSION}.tgz" in script
    assert "/lib/ld-musl-" in script, "the libc is the image's, detected, not assumed"
    checked = script.index("sha256sum --check --strict")
    assert checked < script.index("tar -xzf"), "the archive is checked before it is unpacked"
    assert "package/claude" in script and "/out/claude --version" in script
    assert "npm" not in script.replace("registry.npmjs.org", "").replace("npm package", "")


def test_the_final_stage_has_no_npm_or_node_and_takes_only_the_binary(
    dockerfile: list[tuple[str, str]],
) -> None:
    final = final_stage(dockerfile)
    text = "\n".join(a for _, a in final)
    for word in ("npm", "nodejs", "node ", "apt-get install", "curl"):
        assert word not in text, f"the final stage mentions {word!r}"
    from_claude = [a for kw, a in final if kw == "COPY" and "--from=claude" in a]
    assert from_claude == ["--from=claude /out/ /usr/local/bin/"]


def test_dockerignore_keeps_local_state_out() -> None:
    lines = (REPO / ".dockerignore").read_text(encoding="utf-8").splitlines()
    patterns = {line.strip() for line in lines if line.strip() and not line.startswith("#")}
    assert {".git", ".venv", "memory/", "**/__pycache__"} <= patterns
    assert "*" in patterns  # allow-list: only what is named below it is sent
    assert {"!runtime/", "!canon/", "!pyproject.toml", "!requirements/"} <= patterns
