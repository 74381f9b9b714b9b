"""Exactly once across prunes: a person's word put back in the inbox after a prune and a checkpoint
rebuild is never journaled again.

The guard is the highest arrival number the journal absorbed (the checkpoint's mark), which the
prune's anchor carries: its size does not grow with history, and it survives a rebuild.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from custodian_runtime.core.journal.words import Word
from custodian_runtime.core.standing.record import standing_of
from custodian_runtime.journal.person.inbox import Inbox
from custodian_runtime.journal.store import JournalStore
from support.journal import DOMAIN, StepClock
from support.runs import run_cli

OLD = datetime.now(UTC) - timedelta(days=200)
AUTO_WORD = "w-00000000000000a1"
OP = "flag_for_human"


def _journal(memory: Path) -> JournalStore:
    """A kept `auto` absorbed long ago (arrival 1), old runs, then a recent `off` (arrival 2)."""
    store = JournalStore(memory, segment_bytes=4096)
    clock = StepClock(OLD, timedelta(minutes=20))
    said = {"operation": OP, "by": "ana", "reason": "trusted"}
    person = store.writer(DOMAIN, "person-old", clock)
    person.append("policy_set", {**said, "mode": "auto", "word": AUTO_WORD, "arrival": 1})
    store.commit(person)
    for n in range(40):
        writer = store.writer(DOMAIN, f"r{n:03d}", clock)
        writer.append("run_started", {"model_spec": "offline", "pad": "x" * 300})
        writer.append("finished", {"status": "skipped", "exit_code": 0, "counts": {}})
        store.commit(writer)
    clock.now = datetime.now(UTC) - timedelta(days=2)
    later = store.writer(DOMAIN, "person-new", clock)
    off = {**said, "mode": "off", "reason": "it flagged too much"}
    later.append("policy_set", {**off, "word": "w-00000000000000b2", "arrival": 2})
    store.commit(later)
    return store


def _auto_word_put_back(memory: Path) -> Path:
    word = Word(
        id=AUTO_WORD, domain=DOMAIN, kind="policy_set", arrival=1, at=OLD,
        fields={"operation": OP, "mode": "auto", "by": "ana", "reason": "trusted"},
    )  # fmt: skip
    path = memory / "inbox" / DOMAIN / "000000000001.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(word.model_dump_json(indent=2) + "\n", encoding="utf-8")
    return path


def test_a_word_put_back_after_a_prune_and_a_rebuild_is_named_and_never_journaled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = tmp_path / "memory"
    store = _journal(memory)
    argv = ["journal", "prune", "--domain", DOMAIN, "--keep", "31d", "--memory", str(memory)]
    pruned = run_cli(argv, tmp_path, monkeypatch)
    assert pruned.code == 0 and "dropped" in pruned.stdout, pruned.stdout + pruned.stderr
    layout = store.layout(DOMAIN)
    assert '"arrival":2' in layout.anchor.read_text()  # the mark survives the prune
    assert AUTO_WORD not in {str(r.data.get("word")) for r in store.scan(DOMAIN).records}
    layout.checkpoint.unlink()  # rebuilt from the anchor: the mark with it
    assert store.open(DOMAIN).checkpoint.arrival == 2

    put_back = _auto_word_put_back(memory)
    listed = run_cli(["approvals", "list", "--memory", str(memory)], tmp_path, monkeypatch)
    assert listed.code == 0, listed.stderr
    assert "put back or renumbered" in listed.stderr
    modes = standing_of(store.open(DOMAIN).history).modes
    assert modes.of(OP) == "off"  # the later word stands
    assert [r.data["mode"] for r in store.scan(DOMAIN).records if r.kind == "policy_set"] == ["off"]
    assert put_back.exists()  # left where inspect names it
    inspected = run_cli(["inspect", "--domain", DOMAIN, "--memory", str(memory)], tmp_path,
                        monkeypatch)  # fmt: skip
    assert inspected.code != 0
    assert "put back or renumbered" in inspected.stdout


def test_a_new_word_is_numbered_above_the_journals_mark_when_the_inbox_forgot_it(
    tmp_path: Path,
) -> None:
    memory = tmp_path / "memory"
    store = _journal(memory)
    store.open(DOMAIN)  # the checkpoint holds the mark: 2
    inbox = Inbox(memory)
    word = Word(
        id="w-00000000000000c3", domain=DOMAIN, kind="policy_set", at=datetime.now(UTC),
        fields={"operation": OP, "mode": "ask", "by": "bo", "reason": "a look first"},
    )  # fmt: skip
    kept = inbox.append(word)  # no `.done` mark in the inbox: the journal's mark counts
    assert kept.arrival == 3


def test_a_stray_file_in_the_inbox_is_named_by_inspect(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = tmp_path / "memory"
    _journal(memory)
    stray = memory / "inbox" / DOMAIN / "notes.txt"
    stray.parent.mkdir(parents=True)
    stray.write_text("hello", encoding="utf-8")
    inspected = run_cli(["inspect", "--domain", DOMAIN, "--memory", str(memory)], tmp_path,
                        monkeypatch)  # fmt: skip
    assert inspected.code != 0
    assert "notes.txt is not a kept word" in inspected.stdout
