"""A person's word has one record and one arrival order (core/journal/words.py,
journal/person/inbox.py).

Every decision kept while a run has the domain's lock waits in the domain's sealed inbox under a
number the inbox gives; the journal absorbs it in that order, exactly once, whatever the clock
of the host that recorded it said, and whatever file comes back later.
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from custodian_hub import ReferenceHub
from custodian_runtime.core.digest import canonical_json
from custodian_runtime.core.journal.kinds import GrantIssued, GrantRevoked, PolicySet, encode
from custodian_runtime.core.journal.records import make_record
from custodian_runtime.core.journal.seals import SealKey
from custodian_runtime.core.journal.words import standing_word
from custodian_runtime.core.standing.grants import Grant
from custodian_runtime.core.standing.record import Standing, standing_of, with_kept
from custodian_runtime.journal.lock import RunLock
from custodian_runtime.journal.person.inbox import Inbox, new_word_id
from custodian_runtime.journal.person.queue import ApprovalStore
from custodian_runtime.journal.person.standing_store import StandingStore
from support.spine import clean_env, journal
from support.standing import Cli, status

K1, K2 = ("1" * 64), ("2" * 64)
SEAL, PREVIOUS = "CUSTODIAN_SEAL_KEY", "CUSTODIAN_SEAL_KEY_PREVIOUS"
QUIET: dict[str, Any] = {"observations": ["Nothing needs doing."], "proposals": []}


def _kept(cli: Cli) -> list[Path]:
    return sorted((cli.memory / "inbox" / "website").glob("*.json"))


def _words(cli: Cli, kind: str) -> list[Any]:
    return [r.data.get("word") for r in journal(cli.memory) if r.kind == kind]


def test_a_revoke_kept_on_a_host_whose_clock_is_behind_revokes_the_grant(
    cli: Cli, small_hub: ReferenceHub
) -> None:
    with RunLock(cli.memory, "website", run_id="r-busy"):
        grant = cli.issue(small_hub.url, "--max", "3", "--expires", "7d")
        # A second host, its clock two minutes behind, revokes the grant while the run holds on.
        behind = datetime.now(UTC) - timedelta(minutes=2)
        revoke = GrantRevoked(grant_id=grant, by="bo", reason="stop")
        Inbox(cli.memory).append(standing_word("website", revoke, behind, new_word_id()))
        assert grant in StandingStore(cli.memory).waiting_revokes("website")  # binds already
    cli.ok("approvals", "list")  # the domain is free: the inbox is absorbed, in arrival order
    assert _kept(cli) == []
    kinds = [r.kind for r in journal(cli.memory) if r.kind.startswith("grant_")]
    assert kinds == ["grant_issued", "grant_revoked"]
    [row] = cli.grants()
    assert (row["id"], row["revoked"]) == (grant, True), row


def test_a_kept_file_put_back_after_the_revoke_issues_nothing_and_inspect_names_it(
    cli: Cli, small_hub: ReferenceHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SEAL, K1)
    with RunLock(cli.memory, "website", run_id="r-busy"):
        grant = cli.issue(small_hub.url, "--max", "3", "--expires", "7d")
    [kept] = _kept(cli)
    copy = kept.read_bytes()
    cli.ok("approvals", "list")
    assert not kept.exists()
    cli.ok("grants", "revoke", grant, "--by", "bo", "--reason", "stop")
    kept.write_bytes(copy)  # a sealed copy, put back from a backup
    inspected = cli("inspect", "--domain", "website")
    assert inspected.code == 6, inspected.stdout
    assert f"inbox/website/{kept.name}" in inspected.stdout
    assert "absorbed already" in inspected.stdout
    assert "replay: ok" not in inspected.stdout
    cli.ok("approvals", "list")
    assert not kept.exists()
    [row] = cli.grants()
    assert row["revoked"] is True and row["state"] == "revoked", row
    assert [r.kind for r in journal(cli.memory)].count("grant_issued") == 1
    again = cli("inspect", "--domain", "website")
    assert again.code == 0 and again.stdout.rstrip().endswith("replay: ok"), again.stdout


def test_a_kept_reject_survives_the_documented_key_rotation_and_is_carried_out(
    cli: Cli, small_hub: ReferenceHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SEAL, K1)
    [queued] = cli.run(small_hub.url, status("web-t-4"))["items"]
    assert queued["outcome"] == "queued", queued
    approval = queued["approval_id"]
    with RunLock(cli.memory, "website", run_id="r-busy"):
        kept = cli.ok(
            "approvals", "reject", approval, "--by", "bo", "--reason", "not now", "--wait", "0"
        )
        assert "rejection by bo kept" in kept.stdout
    # The rotation as docs/operator.md (Seals) says: the previous key set, the new one, reseal,
    # then remove.
    monkeypatch.setenv(SEAL, K2)
    monkeypatch.setenv(PREVIOUS, K1)
    resealed = cli.ok("journal", "reseal")
    assert "1 of 1 kept word(s) in the inbox resealed" in resealed.stdout
    assert "can be removed" in resealed.stdout
    monkeypatch.delenv(PREVIOUS)
    listed = cli.ok("approvals", "list")
    assert f"carried out a kept decision: {approval}: rejected by bo" in listed.stdout
    item = ApprovalStore(cli.memory).get(approval, verify=False)
    assert (item.status, item.reject_reason) == ("rejected", "not now")
    [word] = _words(cli, "approval_decided")
    assert word is not None and word.startswith("w-")
    assert cli.run(small_hub.url, llm=cli.answer(QUIET))["status"] == "completed"
    assert cli("inspect", "--domain", "website").code == 0


def _legacy(path: Path, prefix: bytes, data: dict[str, Any], key: str) -> None:
    """A file as the earlier release kept it: its JSON, sealed over its canonical form."""
    path.parent.mkdir(parents=True, exist_ok=True)
    seal = SealKey(key).mac(prefix, canonical_json(data))
    path.write_text(json.dumps({**data, "seal": seal}, indent=2), "utf-8")


def _at(seconds_ago: int) -> str:
    then = datetime.now(UTC).replace(microsecond=0) - timedelta(seconds=seconds_ago)
    return then.strftime("%Y-%m-%dT%H:%M:%SZ")


def test_an_old_memory_dir_is_carried_into_the_inbox_once_and_says_so(
    cli: Cli, small_hub: ReferenceHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SEAL, K1)
    [queued] = cli.run(small_hub.url, status("web-t-4"))["items"]
    approval = queued["approval_id"]
    # Written as the earlier release wrote them while a run had the domain's lock; the reject was
    # recorded after the mode, by the recording hosts' clocks (all the old files have).
    decision = {"approval_id": approval, "domain": "website", "decision": "reject", "by": "bo",
                "text": "not now", "at": _at(30)}  # fmt: skip
    _legacy(cli.memory / "decisions" / f"{approval}.json",
            b"custodian recorded decision v1\n", decision, K1)  # fmt: skip
    mode = {"id": "policy-0a1b2c3d4e5f", "domain": "website", "kind": "policy_set",
            "fields": {"operation": "create_task", "mode": "shadow", "by": "ana",
                       "reason": "try it"}, "at": _at(60)}  # fmt: skip
    _legacy(cli.memory / "standing" / "policy-0a1b2c3d4e5f.json",
            b"custodian standing decision v1\n", mode, K1)  # fmt: skip
    listed = cli.ok("approvals", "list")
    [said] = [line for line in listed.stderr.splitlines() if "earlier release" in line]
    assert "carried 2 decision(s)" in said
    assert not (cli.memory / "decisions").exists() and not (cli.memory / "standing").exists()
    assert ApprovalStore(cli.memory).get(approval, verify=False).status == "rejected"
    assert cli.modes()["create_task"] == "shadow"
    records = journal(cli.memory)
    [mode_at] = [r.seq for r in records if r.kind == "policy_set"]
    [reject_at] = [r.seq for r in records if r.kind == "approval_decided"]
    assert mode_at < reject_at  # their recorded order: all the old files have
    assert _words(cli, "policy_set") == ["policy-0a1b2c3d4e5f"]
    assert "earlier release" not in cli.ok("approvals", "list").stderr


def test_an_old_kept_reject_survives_the_documented_rotation(
    cli: Cli, small_hub: ReferenceHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SEAL, K1)
    [queued] = cli.run(small_hub.url, status("web-t-4"))["items"]
    approval = queued["approval_id"]
    decision = {"approval_id": approval, "domain": "website", "decision": "reject", "by": "bo",
                "text": "not now", "at": _at(30)}  # fmt: skip
    _legacy(cli.memory / "decisions" / f"{approval}.json",
            b"custodian recorded decision v1\n", decision, K1)  # fmt: skip
    monkeypatch.setenv(SEAL, K2)
    monkeypatch.setenv(PREVIOUS, K1)
    resealed = cli.ok("journal", "reseal")
    assert "carried 1 decision(s)" in resealed.stderr  # carried, sealed with the new key
    assert "0 of 1 kept word(s) in the inbox resealed" in resealed.stdout
    assert not (cli.memory / "decisions").exists()
    monkeypatch.delenv(PREVIOUS)
    listed = cli.ok("approvals", "list")
    assert f"{approval}: rejected by bo" in listed.stdout
    assert ApprovalStore(cli.memory).get(approval, verify=False).status == "rejected"
    assert cli.run(small_hub.url, llm=cli.answer(QUIET))["status"] == "completed"


def test_an_old_file_that_fails_its_seal_is_not_carried_and_is_named(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SEAL, K2)
    mode = {"id": "policy-0a1b2c3d4e5f", "domain": "website", "kind": "policy_set",
            "fields": {"operation": "create_task", "mode": "auto", "by": "ana",
                       "reason": "x"}, "at": _at(5)}  # fmt: skip
    _legacy(cli.memory / "standing" / "policy-0a1b2c3d4e5f.json",
            b"custodian standing decision v1\n", mode, K1)  # fmt: skip
    refused = cli("approvals", "list")
    assert refused.code == 6 and "standing/policy-0a1b2c3d4e5f.json" in refused.stderr
    assert (cli.memory / "standing" / "policy-0a1b2c3d4e5f.json").exists()
    monkeypatch.setenv(PREVIOUS, K1)  # during a rotation, the previous key's seal holds
    assert "carried 1 decision(s)" in cli.ok("approvals", "list").stderr


def _absorber(tmp_path: Path, memory: Path) -> subprocess.Popen[str]:
    argv = [sys.executable, "-m", "custodian_runtime", "approvals", "list", "--memory", str(memory)]
    return subprocess.Popen(
        argv, cwd=tmp_path, env=clean_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip


def test_two_processes_absorbing_the_same_inbox_journal_each_word_once(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    inbox = Inbox(memory)
    for round_ in range(2):
        ids = []
        for n in range(12):
            mode = "shadow" if n % 2 else "ask"
            entry = PolicySet(operation="create_task", mode=mode, by="ana", reason=f"{round_}{n}")
            kept = inbox.append(standing_word("website", entry, datetime.now(UTC), new_word_id()))
            ids.append(kept.id)
        first, second = _absorber(tmp_path, memory), _absorber(tmp_path, memory)
        for proc in (first, second):
            _, err = proc.communicate(timeout=60)
            assert proc.returncode == 0, err
        journaled = [r.data.get("word") for r in journal(memory) if r.kind == "policy_set"]
        assert journaled[-12:] == ids  # in arrival order
        assert len(journaled) == len(set(journaled)) == 12 * (round_ + 1)
        assert inbox.count("website") == 0


_APPEND = """
import sys
from datetime import UTC, datetime
from pathlib import Path
from custodian_runtime.core.journal.kinds import PolicySet
from custodian_runtime.core.standing.grants import Grant
from custodian_runtime.core.standing.record import Standing, standing_of, with_kept
from custodian_runtime.core.journal.words import standing_word
from custodian_runtime.journal.person.inbox import Inbox, new_word_id
inbox = Inbox(Path(sys.argv[1]))
for n in range(15):
    entry = PolicySet(operation="create_task", mode="ask", by=sys.argv[2], reason=str(n))
    inbox.append(standing_word("website", entry, datetime.now(UTC), new_word_id()))
"""


def test_two_appenders_never_take_the_same_number(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    procs = [
        subprocess.Popen([sys.executable, "-c", _APPEND, str(memory), who], env=clean_env())
        for who in ("ana", "bo")
    ]
    assert [proc.wait(timeout=60) for proc in procs] == [0, 0]
    words = Inbox(memory).waiting("website")
    assert [w.arrival for w in words] == list(range(1, 31))
    for who in ("ana", "bo"):  # each appender's own words keep its order
        mine = [int(w.fields["reason"]) for w in words if w.fields["by"] == who]
        assert mine == list(range(15))


def _grant(now: datetime) -> GrantIssued:
    grant = Grant(
        id="grant-0123456789ab", domain="website", operation="set_task_status", max_uses=3,
        expires_at=now + timedelta(days=7), by="ana", reason="routine", hub_id="h", issued_at=now,
    )  # fmt: skip
    return GrantIssued(grant=grant.model_dump(mode="json"))


def test_a_revoke_of_a_grant_not_seen_yet_waits_for_it_in_the_fold() -> None:
    now = datetime(2026, 1, 5, tzinfo=UTC)
    revoke = GrantRevoked(grant_id="grant-0123456789ab", by="bo", reason="stop")
    first, then = (standing_word("website", e, now, new_word_id()) for e in (revoke, _grant(now)))
    kept = with_kept(Standing(), [first])
    assert kept.grants == () and kept.pending_revokes == {"grant-0123456789ab"}
    issued = with_kept(kept, [then])
    assert issued.grants[0].revoked and issued.pending_revokes == frozenset()
    records, prev = [], None
    for kind, data in (encode(revoke), encode(_grant(now))):
        prev = make_record(prev, "person-1", "website", kind, now, data)
        records.append(prev)
    assert standing_of(records).grants[0].revoked  # the journal's fold, the same rule


@pytest.mark.parametrize("command", ["list", "show"])
def test_json_is_json_alone_a_recorded_decision_carried_out_first_is_said_on_stderr(
    cli: Cli, small_hub: ReferenceHub, command: str
) -> None:
    [queued] = cli.run(small_hub.url, status("web-t-4"))["items"]
    approval = queued["approval_id"]
    with RunLock(cli.memory, "website", run_id="r-busy"):
        cli.ok("approvals", "reject", approval, "--by", "bo", "--reason", "not now", "--wait", "0")
    argv = ["approvals", "list"] if command == "list" else ["approvals", "show", approval]
    done = cli.ok(*argv, "--json")
    shown = json.loads(done.stdout)  # nothing but JSON on stdout
    rows = shown if command == "list" else [shown]
    assert [r["status"] for r in rows if r["id"] == approval] == ["rejected"]
    assert f"carried out a kept decision: {approval}: rejected by bo" in done.stderr
