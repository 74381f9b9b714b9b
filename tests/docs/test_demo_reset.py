"""A clean checkout stays clean: `make demo` leaves `git status` empty, and `make demo-reset`
puts back a canon an approved `write_canon` changed, in a copy of the repository's files."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from custodian_runtime.journal.lock import RunLock
from support.runs import REPO

# What `make demo` and `make demo-reset` read: the Makefile, the ignore rules, the canon, the
# demo answer and the memory directories' keep files.
_COPIED = (".gitignore", "Makefile", "canon", "demo", "memory", "scripts/demo_reset_check.py")


def _git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    done = subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, check=True, timeout=60, env=env
    )
    return done.stdout


def _checkout(tmp_path: Path) -> Path:
    """A fresh repository holding the tracked files of the work tree that the demo reads."""
    root = tmp_path / "checkout"
    root.mkdir()
    tracked = _git(REPO, "ls-files", "-z", "--", *_COPIED).split("\0")
    for name in filter(None, tracked):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, root / name)
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "-c", "user.name=demo", "-c", "user.email=demo@example.org",
         "commit", "-qm", "seed")  # fmt: skip
    return root


def _make(root: Path, target: str, *args: str) -> None:
    """`make TARGET` in the copy, with this environment's installed command (no setup run)."""
    done = _made(root, target, *args)
    assert done.returncode == 0, done.stdout + done.stderr


def _made(root: Path, target: str, *args: str) -> subprocess.CompletedProcess[str]:
    custodian = Path(sys.executable).parent / "custodian"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CUSTODIAN_", "STATE_HUB"))}
    return subprocess.run(
        ["make", "-s", "-o", "setup", target, f"CUSTODIAN={custodian}", *args],
        cwd=root, capture_output=True, text=True, timeout=120,
        env={**env, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"},
    )  # fmt: skip


def _custodian(root: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    custodian = Path(sys.executable).parent / "custodian"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CUSTODIAN_", "STATE_HUB"))}
    return subprocess.run(
        [str(custodian), *argv], cwd=root, capture_output=True, text=True, timeout=60, env=env
    )


def test_the_demo_leaves_git_status_clean_and_its_reset_restores_the_canon(
    tmp_path: Path,
) -> None:
    root = _checkout(tmp_path)
    _make(root, "demo")
    assert (root / "memory" / "approvals" / "index").is_dir(), "the demo wrote its queue's index"
    assert _git(root, "status", "--porcelain") == ""
    guidance = root / "canon" / "domains" / "website.md"
    committed = guidance.read_text(encoding="utf-8")
    # What an approved `write_canon` does: rewrite a canon file, or add one.
    guidance.write_text("# Website\n\nRewritten by an approval.\n", encoding="utf-8")
    (root / "canon" / "domains" / "added.md").write_text("# Added\n", encoding="utf-8")
    assert _git(root, "status", "--porcelain") != ""
    _make(root, "demo-reset", "FORCE=1")
    assert _git(root, "status", "--porcelain", "--ignored") == ""
    assert guidance.read_text(encoding="utf-8") == committed
    assert sorted(p.name for p in (root / "memory").rglob("*") if p.is_file()) == [".gitkeep"] * 3


def test_demo_reset_lists_what_a_person_made_and_drops_it_only_with_force(
    tmp_path: Path,
) -> None:
    root = _checkout(tmp_path)
    _make(root, "demo")
    listed = json.loads(
        _custodian(root, "approvals", "list", "--status", "pending", "--json").stdout
    )
    pending = [item["id"] for item in listed]
    assert len(pending) >= 2, listed
    # A person's reject, kept while a run has the domain's lock: a word in memory/inbox/.
    with RunLock(root / "memory", "website", run_id="r-busy"):
        kept = _custodian(root, "approvals", "reject", pending[0], "--reason", "not now",
                          "--wait", "0")  # fmt: skip
        assert kept.returncode == 0, kept.stderr
    [word] = sorted((root / "memory" / "inbox" / "website").glob("*.json"))
    guidance = root / "canon" / "domains" / "website.md"
    guidance.write_text("# Website\n\nRewritten by an approval.\n", encoding="utf-8")
    before = sorted(str(p) for p in (root / "memory").rglob("*"))
    refused = _made(root, "demo-reset")
    assert refused.returncode != 0
    said = refused.stderr
    for approval in pending:  # the rejected one is pending until its word is journaled
        assert f"pending approval item {approval} (website: " in said, said
    assert f"kept word memory/inbox/website/{word.name}" in said, said
    assert "canon edit canon/domains/website.md (changed)" in said, said
    assert "make demo-reset FORCE=1" in said
    assert sorted(str(p) for p in (root / "memory").rglob("*")) == before  # nothing dropped
    assert "Rewritten by an approval." in guidance.read_text(encoding="utf-8")
    _make(root, "demo-reset", "FORCE=1")
    assert _git(root, "status", "--porcelain", "--ignored") == ""
    assert not word.exists()
    _make(root, "demo-reset")  # nothing of a person's left: no FORCE needed
