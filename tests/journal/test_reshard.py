"""Resharding: a domain's memory moves between two memory directories, file by file as
docs/operations.md ("Reshard the fleet") lists them, and the domain goes on there.

`domain_files` is that list as code; the test moves a sealed domain with a journal, pending
approval items, notes, snapshots and prompts from one directory to another, then `inspect`
verifies it there, its queue is there, and a new run continues its journal.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from custodian_hub import ReferenceHub
from support.review import CREATE_TASK, RESOLVE
from support.runs import run_args, run_cli
from support.spine import write_plan

SEAL = {"CUSTODIAN_SEAL_KEY": "reshard-test-key-" + "0123456789abcdef" * 2}


def domain_files(memory: Path, domain: str) -> list[Path]:
    """Every file under `memory` that belongs to `domain` (docs/operations.md lists them)."""
    journal = memory / "journal"
    found = [
        journal / f"{domain}{suffix}" for suffix in (".jsonl", ".checkpoint.json", ".anchor.json")
    ]
    for folder in (
        journal / f"{domain}.d",
        memory / "snapshots" / domain,
        memory / "prompts" / domain,
        memory / "inbox" / domain,
    ):
        found += sorted(folder.rglob("*")) if folder.is_dir() else []
    note = re.compile(rf"^\d{{8}}T\d{{6}}Z-{re.escape(domain)}(\.\d+)?\.md$")
    working = memory / "working"
    found += (
        sorted(p for p in working.glob("*.md") if note.match(p.name)) if working.is_dir() else []
    )
    found.append(memory / "approvals" / "index" / f"{domain}.json")
    owned = re.compile(rf'^  "domain": "{re.escape(domain)}",?$', re.MULTILINE)
    for folder in ("approvals", "decisions", "standing"):
        for path in sorted((memory / folder).glob("*.json")):
            if owned.search(path.read_text(encoding="utf-8")):
                found.append(path)
    return [p for p in found if p.is_file()]


def move_domain(source: Path, target: Path, domain: str) -> list[Path]:
    """Move the domain's files from `source` to the same places under `target`."""
    moved = []
    for path in domain_files(source, domain):
        there = target / path.relative_to(source)
        there.parent.mkdir(parents=True, exist_ok=True)
        assert not there.exists(), f"{there} exists: the target already holds {domain}"
        shutil.move(path, there)
        moved.append(there)
    return moved


def _run_in(
    tmp: Path, mp: pytest.MonkeyPatch, hub: ReferenceHub, memory: Path, domain: str, plan: dict
) -> int:
    llm = write_plan(tmp / f"answer-{domain}.md", plan)
    argv = run_args(hub.url, llm, memory, "--force", "--json", domain=domain)
    return run_cli(argv, tmp, mp, **SEAL).code


def test_a_domain_moves_to_another_memory_directory_and_goes_on_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    old, new = tmp_path / "shard-0", tmp_path / "shard-1"
    assert (
        _run_in(
            tmp_path, monkeypatch, small_hub, old, "website", {"proposals": [CREATE_TASK, RESOLVE]}
        )
        == 0
    )
    assert (
        _run_in(tmp_path, monkeypatch, small_hub, old, "platform", {"observations": ["quiet"]}) == 0
    )
    kinds = {p.relative_to(old).parts[0] for p in domain_files(old, "website")}
    assert kinds == {"journal", "snapshots", "prompts", "working", "approvals"}

    moved = move_domain(old, new, "website")
    assert moved and domain_files(old, "website") == []
    assert {p.name for p in domain_files(new, "website")} == {p.name for p in moved}

    inspected = run_cli(
        ["inspect", "--domain", "website", "--memory", str(new)], tmp_path, monkeypatch, **SEAL
    )
    assert inspected.code == 0, inspected.stdout + inspected.stderr
    assert "replay: ok" in inspected.stdout and "note_written" in inspected.stdout
    listed = run_cli(
        [
            "approvals",
            "list",
            "--domain",
            "website",
            "--status",
            "pending",
            "--memory",
            str(new),
            "--json",
        ],
        tmp_path,
        monkeypatch,
        **SEAL,
    )
    assert listed.code == 0 and len(listed.json()) == 2, listed.stdout + listed.stderr
    assert (
        _run_in(tmp_path, monkeypatch, small_hub, new, "website", {"observations": ["moved"]}) == 0
    )
    again = run_cli(
        ["inspect", "--domain", "website", "--memory", str(new)], tmp_path, monkeypatch, **SEAL
    )
    assert again.code == 0 and "replay: ok" in again.stdout, again.stdout + again.stderr
    # The domain left behind is untouched and still verifies where it was.
    stays = run_cli(
        ["inspect", "--domain", "platform", "--memory", str(old)], tmp_path, monkeypatch, **SEAL
    )
    assert stays.code == 0, stays.stdout + stays.stderr
    assert domain_files(new, "platform") == []
