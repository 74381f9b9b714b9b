"""`custodian watch` as a child process, against a real reference hub: SIGKILL and SIGTERM.

The model (tests/support/fakes/fleet_model.py) sleeps, then proposes one progress event per domain
unless the prompt already shows it, so every write can be counted on the hub: after a kill and
a restart, each domain holds exactly one event by Custodian, and every journal is closed.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from custodian_hub import ReferenceHub
from custodian_runtime.core.fold import api as core_journal
from support.fakes.fleet_model import SUMMARY
from support.fleet import fleet_names, seed_fleet
from support.paths import SUPPORT
from support.runs import CANON, hub_get
from support.spine import HOLD_TIMEOUT_S, WriteHold, clean_env, finish, journal

DOMAINS = 6
MODEL = SUPPORT / "fakes" / "fleet_model.py"


def _watch(tmp_path: Path, hub: ReferenceHub, sleep: float, *extra: str) -> subprocess.Popen[str]:
    (tmp_path / "marks").mkdir(exist_ok=True)
    llm = f"cmd:{sys.executable} {MODEL} {sleep} {tmp_path / 'marks'}"
    argv = [sys.executable, "-m", "custodian_runtime", "watch", "--all-domains", "--hub", hub.url,
            "--llm", llm, "--memory", str(tmp_path / "memory"), "--canon", str(CANON),
            "--parallel", "2", "--every", "0.5", *extra]  # fmt: skip
    return subprocess.Popen(
        argv, cwd=tmp_path, env=clean_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip


def _until(test: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + HOLD_TIMEOUT_S
    while not test():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def _events(hub: ReferenceHub, domain: str) -> list[dict[str, object]]:
    events = hub_get(hub, f"/events?domain={domain}&limit=1000")["events"]
    return [e for e in events if e["source"] == "custodian"]


def _open_writes(memory: Path) -> dict[str, int]:
    """Per domain, the writes its journal leaves open."""
    return {
        d: len(core_journal.unfinished_items(journal(memory, d)))
        for d in fleet_names(DOMAINS)
        if (memory / "journal" / f"{d}.jsonl").exists()
    }


def _each_domain_once(tmp_path: Path, hub: ReferenceHub) -> None:
    """A restart settles everything: each domain holds exactly one event, every write closed."""
    code, _, err = finish(_watch(tmp_path, hub, 0.0, "--once"), timeout=60)
    assert code == 0, err[-3000:]
    for domain in fleet_names(DOMAINS):
        said = [str(e["summary"]) for e in _events(hub, domain)]
        assert len(said) == 1 and said[0].startswith(SUMMARY), (domain, said)
        receipts = [r for r in journal(tmp_path / "memory", domain) if r.kind == "receipt"]
        assert len({r.data["idempotency_key"] for r in of_kind(receipts)}) <= 1
    assert set(_open_writes(tmp_path / "memory").values()) == {0}


def of_kind(records: list[core_journal.Record]) -> list[core_journal.Record]:
    """The records that name an idempotency key (a receipt of a reconcile may not)."""
    return [r for r in records if r.data.get("idempotency_key")]


def test_sigkill_mid_wave_then_a_restart_writes_everything_exactly_once(tmp_path: Path) -> None:
    seed_fleet(tmp_path / "hub.sqlite3", DOMAINS)
    with ReferenceHub(tmp_path / "hub.sqlite3") as hub:
        proc = _watch(tmp_path, hub, 0.3)
        _until(lambda: len(list((tmp_path / "marks").iterdir())) >= 3, "the third model call")
        proc.kill()
        proc.wait(timeout=10)
        done = sum(len(_events(hub, d)) for d in fleet_names(DOMAINS))
        assert done < DOMAINS  # the kill came mid-wave
        _each_domain_once(tmp_path, hub)


def test_sigterm_finishes_the_write_in_flight_and_stops(tmp_path: Path) -> None:
    seed_fleet(tmp_path / "hub.sqlite3", DOMAINS)
    hold = WriteHold(nth=1, phase="before_commit")
    with ReferenceHub(tmp_path / "hub.sqlite3", on_write=hold) as hub:
        try:
            proc = _watch(tmp_path, hub, 0.2)
            assert hold.reached.wait(HOLD_TIMEOUT_S), "no write was sent"
            proc.send_signal(signal.SIGTERM)
            time.sleep(0.3)  # the stop is seen while the write is held
            hold.release()
            code, _, err = finish(proc)
        finally:
            hold.release()
        assert code == 143, err[-3000:]
        memory = tmp_path / "memory"
        assert set(_open_writes(memory).values()) == {0}  # the held write got its receipt
        landed = sum(len(_events(hub, d)) for d in fleet_names(DOMAINS))
        receipts = sum(
            len([r for r in journal(memory, d) if r.kind == "receipt"])
            for d in _open_writes(memory)
        )
        assert landed == receipts >= 1 and landed < DOMAINS
        ended = [
            f.data["status"] for d in _open_writes(memory) for f in journal(memory, d)
            if f.kind == "finished"
        ]  # fmt: skip
        assert "interrupted" in ended
        started = len(list((tmp_path / "marks").iterdir()))
        assert started <= 3  # nothing new began after the signal
        _each_domain_once(tmp_path, hub)


def test_sigkill_after_a_write_landed_before_its_receipt_never_doubles_it(tmp_path: Path) -> None:
    seed_fleet(tmp_path / "hub.sqlite3", DOMAINS)
    hold = WriteHold(nth=2, phase="after_commit")  # the write is on the hub, its answer is not
    with ReferenceHub(tmp_path / "hub.sqlite3", on_write=hold) as hub:
        try:
            proc = _watch(tmp_path, hub, 0.1)
            assert hold.reached.wait(HOLD_TIMEOUT_S), "no second write was sent"
            proc.kill()
            proc.wait(timeout=10)
        finally:
            hold.release()
        assert 2 <= sum(len(_events(hub, d)) for d in fleet_names(DOMAINS)) < DOMAINS
        assert sum(_open_writes(tmp_path / "memory").values()) >= 1  # its journal left it open
        _each_domain_once(tmp_path, hub)


def test_in_json_mode_each_line_of_a_run_names_its_own_domain(tmp_path: Path) -> None:
    import json

    seed_fleet(tmp_path / "hub.sqlite3", 3)
    with ReferenceHub(tmp_path / "hub.sqlite3") as hub:
        argv = [sys.executable, "-m", "custodian_runtime", "watch", "--all-domains", "--once",
                "--parallel", "3", "--hub", hub.url, "--llm", "offline",
                "--memory", str(tmp_path / "memory"), "--canon", str(CANON)]  # fmt: skip
        env = clean_env(CUSTODIAN_LOG_FORMAT="json")
        done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    records = [json.loads(line) for line in done.stderr.splitlines()]
    runs: dict[str, set[str]] = {}
    for r in records:
        if r.get("run_id"):
            runs.setdefault(r["run_id"], set()).add(r["domain"])
    assert sorted(d for ds in runs.values() for d in ds) == fleet_names(3)  # one domain a run
    assert sorted(r["domain"] for r in records if r.get("phase") == "finish") == fleet_names(3)
