"""Canon writes cannot escape, even while a symlink is swapped in between check and write.

Every component of the path is opened relative to the canon directory's descriptor without
following symlinks, the file is written as a temporary file in its directory and renamed there,
and any failure is an outcome (`failed`, with the reason), never a traceback or a pending item.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import time
import traceback
from pathlib import Path
from typing import Any

import pytest

from custodian_hub import ReferenceHub
from custodian_runtime.canon import current_sha256, write_canon
from custodian_runtime.errors import ApprovalError
from support.runs import CANON, run_cli, run_plan

CONTENT = "# Race\n\nWritten by an approval.\n"

# Swaps canon/domains and canon/.swap (a symlink to the outside directory) until killed:
# renameat2(RENAME_EXCHANGE) where the C library has it, else two renames.
SWAPPER = r"""
import ctypes, os, sys
canon = sys.argv[1]
a, b = os.path.join(canon, "domains"), os.path.join(canon, ".swap")
libc = ctypes.CDLL(None, use_errno=True)
exchange = getattr(libc, "renameat2", None)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
def swap():
    if exchange is not None:
        if exchange(AT_FDCWD, a.encode(), AT_FDCWD, b.encode(), RENAME_EXCHANGE) == 0:
            return
    real = os.path.join(canon, ".real")
    os.rename(a, real) if os.path.isdir(a) and not os.path.islink(a) else None
    if os.path.lexists(b) and not os.path.lexists(a):
        os.rename(b, a)
    if os.path.lexists(real):
        os.rename(real, b)
print("ready", flush=True)
while True:
    try:
        swap()
    except OSError:
        pass
"""


@pytest.fixture
def canon(tmp_path: Path) -> Path:
    """A private copy of the repository's canon."""
    copy = tmp_path / "canon"
    shutil.copytree(CANON, copy)
    return copy


def _queue_writes(
    tmp_path: Path, mp: pytest.MonkeyPatch, hub: ReferenceHub, canon: Path, paths: list[str]
) -> list[str]:
    ids: list[str] = []
    for start in range(0, len(paths), 10):
        proposals = [
            {
                "operation": "write_canon",
                "rationale": "r",
                "params": {"path": p, "content": CONTENT},
            }
            for p in paths[start : start + 10]
        ]
        result = run_plan(
            tmp_path, mp, hub.url, {"proposals": proposals}, "--json", "--force", canon=canon
        )
        assert result.code == 0, result.stderr
        ids += [str(q["approval_id"]) for q in result.json()["queued"]]
    assert len(ids) == len(paths)
    return ids


def _approve(
    tmp_path: Path, mp: pytest.MonkeyPatch, hub: ReferenceHub, canon: Path, approval_id: str
) -> tuple[int | None, str]:
    argv = ["approvals", "--memory", str(tmp_path / "memory"), "approve", approval_id]
    argv += ["--by", "ana", "--hub", hub.url]
    try:
        result = run_cli(argv, tmp_path, mp, CUSTODIAN_CANON_DIR=str(canon))
    except BaseException:  # a traceback is what this test must never see
        return None, traceback.format_exc()
    return result.code, result.stdout + result.stderr


def _item(tmp_path: Path, approval_id: str) -> dict[str, Any]:
    file = tmp_path / "memory" / "approvals" / f"{approval_id}.json"
    return dict(json.loads(file.read_text(encoding="utf-8")))


def _files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def test_a_symlink_swapped_in_during_approvals_never_lets_a_write_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub, canon: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    paths = [f"domains/race-{i}.md" if i % 3 else f"domains/new-{i}/page.md" for i in range(30)]
    ids = _queue_writes(tmp_path, monkeypatch, small_hub, canon, paths)
    (canon / ".swap").symlink_to(outside, target_is_directory=True)
    swapper = subprocess.Popen(
        [sys.executable, "-c", SWAPPER, str(canon)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert swapper.stdout is not None and swapper.stdout.readline().strip() == "ready"
        results = [_approve(tmp_path, monkeypatch, small_hub, canon, i) for i in ids]
    finally:
        swapper.kill()
        swapper.wait(timeout=10)
    if os.path.islink(canon / "domains"):  # put the real directory back where it belongs
        os.rename(canon / "domains", canon / ".link")
        os.rename(canon / ".swap", canon / "domains")
    assert _files(outside) == [], "a canon write landed outside the canon"
    for approval_id, path, (code, output) in zip(ids, paths, results, strict=True):
        assert code is not None and "Traceback" not in output, output
        item = _item(tmp_path, approval_id)
        assert item["status"] in ("executed", "failed"), (item["status"], output)
        if item["status"] == "executed":
            assert code == 0
            assert (canon / path).read_text(encoding="utf-8") == CONTENT
        else:
            assert code in (2, 5)
            assert item["result"]["error"], item
    assert not [p for p in _files(canon) if p.endswith(".tmp")]


def test_a_symlinked_component_at_rest_fails_and_writes_nothing(tmp_path: Path) -> None:
    canon, outside = tmp_path / "canon", tmp_path / "outside"
    canon.mkdir()
    outside.mkdir()
    (canon / "domains").symlink_to(outside, target_is_directory=True)
    with pytest.raises(ApprovalError, match="symlink"):
        write_canon(canon, "domains/x.md", CONTENT)
    assert _files(outside) == []
    (canon / "notes").mkdir()
    (canon / "notes" / "x.md").symlink_to(outside / "victim.md")
    with pytest.raises(ApprovalError, match="symlink"):
        write_canon(canon, "notes/x.md", CONTENT)
    assert _files(outside) == []
    with pytest.raises(ApprovalError, match="symlink"):
        current_sha256(canon, "domains/x.md", strict=True)
    assert current_sha256(canon, "domains/x.md") is None  # what a run records: no file there


def test_replacing_a_file_keeps_its_mode_and_new_directories_are_made(tmp_path: Path) -> None:
    canon = tmp_path / "canon"
    (canon / "domains").mkdir(parents=True)
    target = canon / "domains" / "website.md"
    target.write_text("old\n", encoding="utf-8")
    target.chmod(0o640)
    path, sha = write_canon(canon, "domains/website.md", CONTENT)
    assert path == target and target.read_text(encoding="utf-8") == CONTENT
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert current_sha256(canon, "domains/website.md") == sha
    assert current_sha256(canon, "domains/missing.md") is None
    write_canon(canon, "domains/a/b/new.md", CONTENT)
    assert (canon / "domains" / "a" / "b" / "new.md").read_text(encoding="utf-8") == CONTENT
    assert not [p for p in _files(canon) if p.endswith(".tmp")]


def test_the_race_test_swapper_really_swaps(tmp_path: Path) -> None:
    canon, outside = tmp_path / "canon", tmp_path / "outside"
    (canon / "domains").mkdir(parents=True)
    outside.mkdir()
    (canon / ".swap").symlink_to(outside, target_is_directory=True)
    swapper = subprocess.Popen(
        [sys.executable, "-c", SWAPPER, str(canon)], stdout=subprocess.PIPE, text=True
    )
    seen: set[bool] = set()
    try:
        assert swapper.stdout is not None and swapper.stdout.readline().strip() == "ready"
        deadline = time.monotonic() + 5
        while len(seen) < 2 and time.monotonic() < deadline:
            seen.add(os.path.islink(canon / "domains"))
    finally:
        swapper.kill()
        swapper.wait(timeout=10)
    assert seen == {True, False}
