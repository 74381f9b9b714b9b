"""A read-only canon: `write_canon` is not offered, a proposed one denied, an approval refused."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

from custodian_hub import ReferenceHub
from custodian_runtime.canon import readonly_reason
from support.runs import CANON, REPO, run_cli, run_plan

WRITE = {
    "operation": "write_canon",
    "rationale": "the guidance is out of date",
    "params": {"path": "domains/website.md", "content": "# Website\n"},
}
EVENT = {
    "workstream_id": "web-ws-1",
    "event_type": "note",
    "rests_on": ["web-t-1"],
    "summary": "Checked the site.",
}


def test_a_read_only_canon_is_said_in_the_prompt_and_its_write_denied(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    result = run_plan(
        tmp_path,
        monkeypatch,
        small_hub.url,
        {"progress_events": [EVENT], "proposals": [WRITE]},
        "--json",
        "--show-prompt",
        canon=CANON,
        CUSTODIAN_CANON_READONLY="1",
    )
    assert result.code == 0, result.stderr
    assert "- `write_canon`" not in result.stderr  # the prompt does not offer it
    assert "Do not propose `write_canon` in this run: the canon is read-only here" in result.stderr
    summary = result.json()
    assert [i["operation"] for i in summary["executed"]] == ["add_progress_event"]
    assert summary["queued"] == []
    (denied,) = summary["denied"]
    assert "CUSTODIAN_CANON_READONLY=1" in denied["reason"]
    (note,) = (tmp_path / "memory" / "working").glob("*-website.md")
    assert "CUSTODIAN_CANON_READONLY=1" in note.read_text("utf-8")
    assert not list((tmp_path / "memory" / "approvals").glob("*.json"))
    memory = str(tmp_path / "memory")
    replayed = run_cli(["replay", summary["run_id"], "--memory", memory], tmp_path, monkeypatch)
    assert replayed.code == 0, replayed.stdout + replayed.stderr  # the same decisions again


def test_a_writable_canon_offers_it_and_queues_the_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    canon = tmp_path / "canon"
    shutil.copytree(CANON, canon)
    result = run_plan(
        tmp_path,
        monkeypatch,
        small_hub.url,
        {"progress_events": [EVENT], "proposals": [WRITE]},
        "--json",
        "--show-prompt",
        canon=canon,
    )
    assert result.code == 0, result.stderr
    assert "- `write_canon` {path, content}" in result.stderr
    assert [i["operation"] for i in result.json()["queued"]] == ["write_canon"]
    # Turned read-only before a person approves: refused, nothing written.
    item = result.json()["queued"][0]["approval_id"]
    approve = ["approvals", "--memory", str(tmp_path / "memory"), "approve", item, "--by", "ana"]
    before = (canon / "domains" / "website.md").read_bytes()
    done = run_cli(
        [*approve, "--hub", small_hub.url, "--canon", str(canon)],
        tmp_path,
        monkeypatch,
        CUSTODIAN_CANON_READONLY="1",
    )
    assert done.code == 2, done.stdout + done.stderr
    assert "CUSTODIAN_CANON_READONLY=1" in done.stdout + done.stderr
    assert (canon / "domains" / "website.md").read_bytes() == before


def test_the_read_only_rule_holds_for_root_too(tmp_path: Path) -> None:
    assert readonly_reason(tmp_path, flagged=True) is not None  # the setting: for every user
    assert readonly_reason(tmp_path, flagged=False) is None
    assert readonly_reason(tmp_path / "missing", flagged=False) is None  # preflight says so
    assert readonly_reason(REPO, flagged=False, packaged=True) is None  # refused at approval
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        # Without write permission: read-only, except for root, who may write anyway; a
        # read-only mount (statvfs ST_RDONLY) holds for root as the setting does.
        expected = not os.access(locked, os.W_OK)
        assert (readonly_reason(locked, flagged=False) is not None) == expected
    finally:
        locked.chmod(stat.S_IRWXU)


def test_the_kubernetes_manifests_say_the_canon_is_read_only() -> None:
    for manifest in ("k8s/base/cronjob.yaml", "k8s/review/deployment.yaml"):
        text = (REPO / manifest).read_text("utf-8")
        assert "- name: CUSTODIAN_CANON_READONLY\n" in text and 'value: "1"' in text, manifest
