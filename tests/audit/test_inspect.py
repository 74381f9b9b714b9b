"""`custodian inspect`: the court record of a run, re-verified read-only from the journal."""

from __future__ import annotations

import io
from datetime import timedelta
from pathlib import Path

from custodian_runtime.audit.inspection import inspect_command
from custodian_runtime.core.fold import api as core_journal
from custodian_runtime.core.fold.render import UNSEALED
from custodian_runtime.journal.store import JournalStore
from support.journal import (
    APPROVAL_AUTH,
    APPROVAL_RULING,
    DISP0,
    DOMAIN,
    RCPT0,
    T0,
    StepClock,
    write_completed_run,
    write_interrupted_run,
    write_reconciling_run,
)


def _inspect(memory: Path, run_id: str | None = None, domain: str | None = None) -> tuple[int, str]:
    out = io.StringIO()
    code = inspect_command(memory, run_id, domain, out)
    return code, out.getvalue()


def _snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def _two_runs(memory: Path) -> JournalStore:
    store = JournalStore(memory)
    clock = StepClock()
    for run_id in ("r1", "r2"):
        write_completed_run(store.writer(DOMAIN, run_id, clock), run_id)
    return store


def test_inspect_prints_the_court_record_and_replay_ok(tmp_path: Path) -> None:
    _two_runs(tmp_path)
    code, text = _inspect(tmp_path, "r2")
    lines = text.splitlines()
    assert code == 0
    assert lines[:6] == [
        "run       r2",
        "domain    website",
        "status    completed (exit 0)",
        "model     offline (offline/rules-1)",
        "counts    executed 1, queued 1, denied 1, failed 0",
        "started   2025-03-01T09:00:15.000000Z",
    ]
    assert lines[6].startswith("journal   14 record(s) in this run (website:15 … website:28)")
    request = next(i for i, line in enumerate(lines) if line.startswith("request website:20"))
    assert lines[request].startswith("request website:20 #0 add_progress_event target=ws-site")
    assert lines[request + 1].startswith("  ruled execute at website:20: sanctioned write")
    assert lines[request + 2].startswith("  authorized at website:23 by policy key=custodian-r2-0")
    assert lines[request + 3 : request + 7] == [
        "  dispatched at website:24",
        "  receipt at website:25: status 201, attempts 1",
        "    effect: hub_id=ev-101 replayed=no response sha256=dddddddddddd…",
        "    chain: website:20 → website:23 → website:24 → website:25 ordered ok",
    ]
    queued = "  QUEUED at website:21: create_task needs a person's approval; approval apr-7"
    assert f"{queued} at website:26" in lines
    assert (
        "  DENIED at website:22: task t-9 is not in the observed state (no execution, no receipt)"
        in lines
    )
    assert "note_written   at website:27: 2025-03-01-website.md sha256=eeeeeeeeeeee…" in lines
    assert lines[-1] == "replay: ok"


def test_inspect_with_a_domain_shows_its_latest_run_and_with_nothing_lists_runs(
    tmp_path: Path,
) -> None:
    _two_runs(tmp_path)
    code, text = _inspect(tmp_path, domain=DOMAIN)
    assert code == 0 and text.startswith("run       r2\n")
    code, text = _inspect(tmp_path)
    assert code == 0
    assert text.splitlines() == [
        "website: 28 record(s), last website:28, chain ok",
        "  r1  2025-03-01T09:00:01.000000Z  completed  seq 1-14  executed 1, queued 1, denied 1, "
        "failed 0  model offline (offline/rules-1)",
        "  r2  2025-03-01T09:00:15.000000Z  completed  seq 15-28  executed 1, queued 1, denied 1, "
        "failed 0  model offline (offline/rules-1)",
        f"seals     unsealed: {UNSEALED}",
        "replay: ok",
    ]


def test_a_flipped_byte_in_a_past_record_is_named(tmp_path: Path) -> None:
    store = _two_runs(tmp_path)
    path = store.path(DOMAIN)
    data = bytearray(path.read_bytes())
    at = data.index(b"task t-9 is not in the observed state")
    data[at + 5] ^= 0x01  # "t-9" -> "u-9": still valid JSON, different meaning
    path.write_bytes(bytes(data))
    before = _snapshot(tmp_path)
    code, text = _inspect(tmp_path, "r2")
    assert code == 6
    assert text.splitlines()[-2:] == [
        "replay: FAILED, 1 problem(s):",
        "  record 8 (ruling, run r1): hash mismatch (the record was changed after it was written)",
    ]
    assert _snapshot(tmp_path) == before


def test_a_byte_that_breaks_the_json_is_named_by_line(tmp_path: Path) -> None:
    store = _two_runs(tmp_path)
    path = store.path(DOMAIN)
    lines = path.read_bytes().split(b"\n")
    lines[9] = lines[9].replace(b'"kind":', b'"kind";', 1)
    path.write_bytes(b"\n".join(lines))
    code, text = _inspect(tmp_path, "r1")
    problems = text.splitlines()[text.splitlines().index("replay: FAILED, 4 problem(s):") + 1 :]
    assert code == 6
    assert problems[0].startswith("  website.jsonl line 10: not valid JSON (Expecting ':'")
    assert problems[1:3] == [
        "  record 11 (receipt, run r1): seq 11 follows record 9, expected 10",
        "  record 11 (receipt, run r1): prev does not match the hash of record 9",
    ]
    assert problems[3] == (
        "  record 11 (receipt, run r1): receipt without a dispatched record before it in this run"
    )


def test_a_deleted_record_is_found(tmp_path: Path) -> None:
    store = _two_runs(tmp_path)
    path = store.path(DOMAIN)
    lines = path.read_bytes().split(b"\n")
    del lines[22]  # r2's authorized record
    path.write_bytes(b"\n".join(lines))
    code, text = _inspect(tmp_path, "r2")
    assert code == 6
    assert "  record 24 (dispatched, run r2): seq 24 follows record 22, expected 23" in text
    assert "  record 24 (dispatched, run r2): prev does not match the hash of record 22" in text
    assert "dispatched without an authorized record for item #0" in text
    assert "not authorized (the run stopped before acting on it)" in text


def test_a_torn_tail_is_reported_and_left_alone(tmp_path: Path) -> None:
    store = _two_runs(tmp_path)
    path = store.path(DOMAIN)
    path.write_bytes(path.read_bytes() + b'{"v":1,"seq":29')
    before = _snapshot(tmp_path)
    code, text = _inspect(tmp_path, "r2")
    assert code == 6
    assert text.splitlines()[-1] == (
        "  website.jsonl line 29: torn tail, 15 byte(s), no trailing newline "
        "(the next run sets it aside)"
    )
    assert _snapshot(tmp_path) == before


def test_an_interrupted_write_is_unfinished_until_the_next_run_reconciles_it(
    tmp_path: Path,
) -> None:
    store = JournalStore(tmp_path)
    clock = StepClock()
    write_completed_run(store.writer(DOMAIN, "r1", clock), "r1")
    write_interrupted_run(store.writer(DOMAIN, "r2", clock), "r2")
    code, text = _inspect(tmp_path, "r2")
    assert code == 6
    assert "status    no finished record" in text
    assert "    chain: website:20 → website:23 → website:24 INCOMPLETE (no receipt)" in text
    assert text.splitlines()[-1] == (
        "  record 23 (authorized, run r2): no receipt, failed or stale record and no later "
        "reconciliation (unfinished)"
    )
    history = list(store.read(DOMAIN).records)
    writer = store.writer(DOMAIN, "r3", StepClock(T0 + timedelta(hours=1)))
    write_reconciling_run(writer, core_journal.unfinished_items(history))
    writer.close_interrupted(history)
    code, text = _inspect(tmp_path, "r3")
    assert code == 0, text
    assert "reconciled at website:26: item #0 of run r2 key=custodian-r2-0" in text
    assert (
        "    chain: website:23 → website:24 → website:26 → website:27 → website:28 ordered ok"
        in (text)
    )
    code, text = _inspect(tmp_path, "r2")
    assert code == 0 and "status    interrupted" in text
    assert "finished       at website:30: interrupted (closed by run r3)" in text


def test_an_approval_run_shows_the_person_and_the_receipt(tmp_path: Path) -> None:
    store = JournalStore(tmp_path)
    clock = StepClock()
    write_completed_run(store.writer(DOMAIN, "r1", clock), "r1")
    writer = store.writer(DOMAIN, "approval-apr-7", clock)
    writer.append(
        "approval_decided",
        {"approval_id": "apr-7", "decision": "approved", "by": "ana", "reason": "fine"},
    )
    writer.append("ruling", APPROVAL_RULING)
    writer.append("authorized", APPROVAL_AUTH)
    writer.append("dispatched", DISP0)
    writer.append("receipt", RCPT0)
    code, text = _inspect(tmp_path, "approval-apr-7")
    assert code == 0, text
    assert "approval apr-7 at website:15: approved by ana: fine" in text
    assert "website:15 → website:17 → website:18 → website:19 ordered ok" in text


def test_an_unknown_run_or_an_empty_memory(tmp_path: Path) -> None:
    assert _inspect(tmp_path) == (0, f"no journals under {tmp_path / 'journal'}\n")
    _two_runs(tmp_path)
    code, text = _inspect(tmp_path, "r9")
    assert code == 2 and text.startswith("no run r9 in")
    code, text = _inspect(tmp_path, "r9", DOMAIN)
    assert code == 2 and "no run r9 in the website journal" in text
