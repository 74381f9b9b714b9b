"""Seals: with CUSTODIAN_SEAL_KEY set, what the memory volume holds must carry the key's HMAC.

Each test runs Custodian in-process against the reference hub on loopback, then tampers with
the real files on disk the way someone who can write the memory volume (but cannot read the
Secret) could, and checks that the run, the approval and inspect refuse, naming what they
refuse, and that nothing reached the hub.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from custodian_hub import ReferenceHub
from custodian_runtime.core.approvals.items import new_item
from custodian_runtime.core.approvals.seals import item_seal_problem, seal_item
from custodian_runtime.core.fold.api import make_record, parse_at
from custodian_runtime.core.journal.seals import SealKey, seal_record, verify_seals
from custodian_runtime.core.plan.extract import fingerprint
from custodian_runtime.settings import load_settings
from support.runs import CliResult, hub_get, run_args, run_cli, tree_digest
from support.spine import THREE_WRITES, journal, write_plan

KEY = "k" * 20 + "-seal-key-for-tests-0123456789"
OTHER_KEY = "o" * 20 + "-another-key-for-tests-987654"
PROPOSAL = {
    "operation": "set_task_status",
    "rationale": "The announcement waits for the launch date.",
    "params": {"task_id": "web-t-3", "status": "blocked"},
}


def _cli(tmp_path: Path, mp: pytest.MonkeyPatch, argv: list[str], key: str | None) -> CliResult:
    mp.delenv("CUSTODIAN_SEAL_KEY", raising=False)
    env = {} if key is None else {"CUSTODIAN_SEAL_KEY": key}
    return run_cli(argv, tmp_path, mp, **env)


def _sealed_run(
    tmp_path: Path,
    mp: pytest.MonkeyPatch,
    hub: ReferenceHub,
    key: str | None,
    plan: dict[str, Any],
    *extra: str,
) -> CliResult:
    llm = write_plan(tmp_path / "answer.md", plan)
    return _cli(
        tmp_path, mp, run_args(hub.url, llm, tmp_path / "memory", "--json", "--force", *extra), key
    )


def _approvals(tmp_path: Path, mp: pytest.MonkeyPatch, key: str | None, *args: str) -> CliResult:
    return _cli(tmp_path, mp, ["approvals", "--memory", str(tmp_path / "memory"), *args], key)


def _inspect(tmp_path: Path, mp: pytest.MonkeyPatch, key: str | None) -> CliResult:
    argv = ["inspect", "--domain", "website", "--memory", str(tmp_path / "memory")]
    return _cli(tmp_path, mp, argv, key)


def _hub_state(hub: ReferenceHub) -> Any:
    summaries = [hub_get(hub, f"/domains/{d}/summary") for d in ("website", "platform")]
    for summary in summaries:
        summary.pop("generated_at", None)
    return (
        summaries,
        hub_get(hub, "/events?limit=1000"),
        hub_get(hub, "/flags"),
        hub_get(hub, "/decisions"),
    )


def _sealed_run_with_a_queued_item(
    tmp_path: Path, mp: pytest.MonkeyPatch, hub: ReferenceHub, key: str = KEY
) -> str:
    result = _sealed_run(tmp_path, mp, hub, key, {**THREE_WRITES, "proposals": [PROPOSAL]})
    assert result.code == 0, result.stderr
    return str(result.json()["queued"][0]["approval_id"])


def _journal_file(tmp_path: Path) -> Path:
    return tmp_path / "memory" / "journal" / "website.jsonl"


def _item_file(tmp_path: Path, approval_id: str) -> Path:
    return tmp_path / "memory" / "approvals" / f"{approval_id}.json"


def _hmac(key: str, prefix: bytes, message: str) -> str:
    return hmac.new(key.encode(), prefix + message.encode(), hashlib.sha256).hexdigest()


def _append_forged_authorized(tmp_path: Path, seal: str) -> int:
    """Append an `authorized` record whose hash chain is valid; return its seq.

    `seal` is "none", "wrong-key" (the real recipe with a key the attacker picked) or "garbage".
    """
    last = journal(tmp_path / "memory")[-1]
    params = {"task_id": "plat-t-1", "status": "cancelled"}
    data = {
        "index": 0,
        "operation": "set_task_status",
        "params": params,
        "fingerprint": fingerprint("set_task_status", params),
        "idempotency_key": "custodian-forged-0",
        "by": "policy",
    }
    forged = make_record(last, "forged-run", "website", "authorized", parse_at(last.at), data)
    if seal == "wrong-key":
        own = _hmac(OTHER_KEY, b"custodian journal record v1\n", forged.hash)
        forged = forged.model_copy(update={"seal": own})
    elif seal == "garbage":
        forged = forged.model_copy(update={"seal": "f" * 64})
    with _journal_file(tmp_path).open("a", encoding="utf-8") as f:
        f.write(forged.line() + "\n")
    return forged.seq


def test_sealed_run_approve_and_inspect_pass_end_to_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    approval_id = _sealed_run_with_a_queued_item(tmp_path, monkeypatch, small_hub)
    lines = _journal_file(tmp_path).read_text(encoding="utf-8").splitlines()
    assert lines and all(len(json.loads(line)["seal"]) == 64 for line in lines)
    assert len(json.loads(_item_file(tmp_path, approval_id).read_text())["seal"]) == 64

    approve = ["approve", approval_id, "--by", "ana", "--hub", small_hub.url]
    approved = _approvals(tmp_path, monkeypatch, KEY, *approve)
    assert approved.code == 0, approved.stderr + approved.stdout
    assert hub_get(small_hub, "/tasks/web-t-3")["status"] == "blocked"
    item = json.loads(_item_file(tmp_path, approval_id).read_text(encoding="utf-8"))
    assert item["status"] == "executed" and len(item["seal"]) == 64  # re-sealed on save

    again = _sealed_run(tmp_path, monkeypatch, small_hub, KEY, {"observations": ["quiet"]})
    assert again.code == 0, again.stderr
    court = _inspect(tmp_path, monkeypatch, KEY)
    assert court.code == 0, court.stdout
    records = len(journal(tmp_path / "memory"))
    assert f"seals     verified: all {records} record(s) in the domain" in court.stdout
    assert court.stdout.rstrip().endswith("replay: ok")
    unkeyed = _inspect(tmp_path, monkeypatch, None)
    assert f"seals     not checked: {records} of {records} record(s) sealed" in unkeyed.stdout


@pytest.mark.parametrize("seal", ["none", "wrong-key", "garbage"])
def test_a_forged_authorized_record_stops_the_run_and_the_hub_is_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub, seal: str
) -> None:
    _sealed_run_with_a_queued_item(tmp_path, monkeypatch, small_hub)
    last = journal(tmp_path / "memory")[-1]
    seq = _append_forged_authorized(tmp_path, seal)
    assert seq == last.seq + 1
    hub_before, journal_before = _hub_state(small_hub), _journal_file(tmp_path).read_bytes()

    result = _sealed_run(tmp_path, monkeypatch, small_hub, KEY, THREE_WRITES)

    assert result.code == 6, result.stderr
    assert f"record {seq} (authorized, run forged-run)" in result.stderr
    assert "website.jsonl, domain website" in result.stderr
    assert _hub_state(small_hub) == hub_before
    assert hub_get(small_hub, "/tasks/plat-t-1")["status"] == "todo"
    assert _journal_file(tmp_path).read_bytes() == journal_before
    dry = _sealed_run(tmp_path, monkeypatch, small_hub, KEY, THREE_WRITES, "--dry-run")
    assert dry.code == 6 and f"record {seq} (authorized" in dry.stderr
    court = _inspect(tmp_path, monkeypatch, KEY)
    assert court.code == 6
    assert f"record {seq} (authorized, run forged-run): " in court.stdout
    assert "seals     FAILED: 1 of" in court.stdout


@pytest.mark.parametrize("fingerprint_too", [False, True])
def test_an_edited_approval_item_is_refused_and_the_hub_is_unchanged(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    small_hub: ReferenceHub,
    fingerprint_too: bool,
) -> None:
    approval_id = _sealed_run_with_a_queued_item(tmp_path, monkeypatch, small_hub)
    path = _item_file(tmp_path, approval_id)
    item = json.loads(path.read_text(encoding="utf-8"))
    item["params"] = {"task_id": "plat-t-1", "status": "cancelled"}
    item["precondition"] = {}
    if fingerprint_too:
        item["fingerprint"] = fingerprint("set_task_status", item["params"])
    path.write_text(json.dumps(item, indent=2), encoding="utf-8")
    hub_before, memory_before = _hub_state(small_hub), tree_digest(tmp_path / "memory")

    for verb in (["approve", approval_id, "--by", "mallory"], ["reject", approval_id]):
        extra = ["--hub", small_hub.url] if verb[0] == "approve" else ["--by", "m", "--reason", "x"]
        refused = _approvals(tmp_path, monkeypatch, KEY, *verb, *extra)
        assert refused.code == 6, refused.stdout + refused.stderr
        assert f"approval file {approval_id}.json its seal does not match" in refused.stderr

    assert _hub_state(small_hub) == hub_before
    assert tree_digest(tmp_path / "memory") == memory_before
    listed = _approvals(tmp_path, monkeypatch, KEY, "list")
    assert listed.code == 0
    assert f"{approval_id}  bad-seal" in listed.stdout
    as_json = json.loads(_approvals(tmp_path, monkeypatch, KEY, "list", "--json").stdout)
    assert [(i["id"], i["status"]) for i in as_json] == [(approval_id, "bad-seal")]
    assert "seal does not match" in as_json[0]["seal_problem"]
    # The next run refuses too, before reconciling or observing anything.
    run = _sealed_run(tmp_path, monkeypatch, small_hub, KEY, THREE_WRITES)
    assert run.code == 6 and f"approval file {approval_id}.json" in run.stderr
    assert _hub_state(small_hub) == hub_before


def test_the_wrong_key_is_refused_everywhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    approval_id = _sealed_run_with_a_queued_item(tmp_path, monkeypatch, small_hub)
    hub_before, memory_before = _hub_state(small_hub), tree_digest(tmp_path / "memory")

    run = _sealed_run(tmp_path, monkeypatch, small_hub, OTHER_KEY, THREE_WRITES)
    assert run.code == 6
    assert "record 1 (run_started, run " in run.stderr
    approve = _approvals(
        tmp_path,
        monkeypatch,
        OTHER_KEY,
        "approve",
        approval_id,
        "--by",
        "a",
        "--hub",
        small_hub.url,
    )
    assert approve.code == 6 and f"approval file {approval_id}.json" in approve.stderr
    assert _inspect(tmp_path, monkeypatch, OTHER_KEY).code == 6
    assert _hub_state(small_hub) == hub_before
    assert tree_digest(tmp_path / "memory") == memory_before


def test_records_from_before_the_key_are_refused_until_the_journal_is_moved_aside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    unsealed = _sealed_run(
        tmp_path, monkeypatch, small_hub, None, {**THREE_WRITES, "proposals": [PROPOSAL]}
    )
    assert unsealed.code == 0, unsealed.stderr
    text = _journal_file(tmp_path).read_text(encoding="utf-8")
    assert '"seal"' not in text  # without a key nothing changes on disk
    approval_id = str(unsealed.json()["queued"][0]["approval_id"])
    assert '"seal"' not in _item_file(tmp_path, approval_id).read_text(encoding="utf-8")

    refused = _sealed_run(tmp_path, monkeypatch, small_hub, KEY, THREE_WRITES)
    assert refused.code == 6
    assert "record 1 (run_started, run " in refused.stderr and "move it aside" in refused.stderr
    listed = _approvals(tmp_path, monkeypatch, KEY, "list")
    assert f"{approval_id}  unsealed" in listed.stdout

    aside = tmp_path / "aside"
    aside.mkdir()
    shutil.move(_journal_file(tmp_path), aside / "website.jsonl")
    shutil.move(_item_file(tmp_path, approval_id), aside / f"{approval_id}.json")
    fresh = _sealed_run(tmp_path, monkeypatch, small_hub, KEY, {"observations": ["fresh start"]})
    assert fresh.code == 0, fresh.stderr
    assert all('"seal":"' in line for line in _journal_file(tmp_path).read_text().splitlines())


def test_the_key_is_never_written_printed_or_digested(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    approval_id = _sealed_run_with_a_queued_item(tmp_path, monkeypatch, small_hub)
    outputs = [
        _approvals(tmp_path, monkeypatch, KEY, "list", "--json"),
        _approvals(tmp_path, monkeypatch, KEY, "show", approval_id),
        _inspect(tmp_path, monkeypatch, KEY),
        _sealed_run(tmp_path, monkeypatch, small_hub, OTHER_KEY, THREE_WRITES),  # an error path
    ]
    printed = "".join(o.stdout + o.stderr for o in outputs)
    on_disk = b"".join(p.read_bytes() for p in (tmp_path / "memory").rglob("*") if p.is_file())
    for secret in (KEY, OTHER_KEY):
        assert secret not in printed
        assert secret.encode() not in on_disk

    env = {
        "CUSTODIAN_SEAL_KEY": KEY,
        "STATE_HUB_URL": "http://127.0.0.1:1",
        "CUSTODIAN_LLM": "offline",
    }
    settings = load_settings({"domain": "website"}, env, tmp_path)
    assert settings.seal_key is not None
    for view in (repr(settings), json.dumps(settings.digest_view()), repr(settings.seal_key)):
        assert KEY not in view
    assert "CUSTODIAN_SEAL_KEY" not in settings.model.env  # a model process never sees it


def test_a_short_key_is_a_configuration_error_that_does_not_echo_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    result = _sealed_run(tmp_path, monkeypatch, small_hub, "short-secret-value", THREE_WRITES)
    assert result.code == 2
    assert "CUSTODIAN_SEAL_KEY" in result.stderr and "at least 32 characters" in result.stderr
    assert "short-secret-value" not in result.stdout + result.stderr
    assert not (tmp_path / "memory" / "journal").exists()


def test_a_seal_sits_outside_the_hash_and_cannot_pass_for_an_item_seal() -> None:
    key = SealKey(KEY)
    at = datetime(2026, 1, 1, tzinfo=UTC)
    record = make_record(None, "r1", "website", "run_started", at, {"pid": 1})
    sealed = seal_record(key, record)
    assert sealed.hash == record.hash and '"seal"' not in record.line()
    assert verify_seals([sealed], key) == []
    assert [p.message[:7] for p in verify_seals([record], key)] == ["no seal"]
    item = new_item(
        approval_id="apr-1", domain="website", operation="set_task_status",
        params={"task_id": "web-t-3", "status": "blocked"}, rationale=None, run_id="r1",
        fingerprint="f" * 64, precondition={}, now=at, ttl_days=14,
    )  # fmt: skip
    assert item_seal_problem(key, seal_item(key, item)) is None
    # A record's seal copied onto an item, or a seal that is not even ASCII, never passes.
    for stolen in (sealed.seal, "ä" * 64):
        assert item_seal_problem(key, item.model_copy(update={"seal": stolen})) is not None
    assert item_seal_problem(SealKey(OTHER_KEY), seal_item(key, item)) is not None
