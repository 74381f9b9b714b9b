"""SIGINT and SIGTERM cut every wait short: `custodian run` as a process, a real model child."""

from __future__ import annotations

import io
import json
import os
import signal
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from custodian_hub import ReferenceHub
from custodian_runtime.errors import Interrupted
from custodian_runtime.llm._process import run_child
from custodian_runtime.process.stopping import StopFlag
from custodian_runtime.run import run
from custodian_runtime.settings import load_settings
from custodian_runtime.statehub.client import StateHubClient
from support.fakes.slow_server import Drip, SlowServer
from support.runs import CANON
from support.spine import finish, journal, of_run, run_argv, start_run, write_plan

WITHIN_S = 2.0  # the promise: a signal ends the wait within this
STARTUP_S = 30.0  # a cold interpreter on a busy machine


def _slow_model(tmp_path: Path) -> tuple[str, Path]:
    """A `cmd:` model that writes its process group id, then sleeps for a minute."""
    script = tmp_path / "slow-model.sh"
    pgid_file = tmp_path / "model.pgid"
    script.write_text('#!/bin/sh\necho $$ > "$1.tmp"\nmv "$1.tmp" "$1"\nsleep 60\n')
    script.chmod(0o755)
    return f"cmd:{script} {pgid_file}", pgid_file


def _wait_for(path: Path) -> int:
    deadline = time.monotonic() + STARTUP_S
    while not path.exists():
        assert time.monotonic() < deadline, "the model never started"
        time.sleep(0.05)
    return int(path.read_text())


def _group_alive(pgid: int) -> list[int]:
    """Live (not zombie) processes in process group `pgid`."""
    alive = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            alive.append(int(stat.parent.name))
    return alive


def _interrupt_the_model_call(
    tmp_path: Path, hub: ReferenceHub, signum: int, *extra: str
) -> tuple[int, dict[str, object], float, int]:
    llm, pgid_file = _slow_model(tmp_path)
    memory = tmp_path / "memory"
    proc = start_run(tmp_path, run_argv(hub.url, llm, memory, *extra))
    try:
        pgid = _wait_for(pgid_file)
        sent = time.monotonic()
        proc.send_signal(signum)
        code, out, err = finish(proc, timeout=10)
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
    assert out, err
    return code, json.loads(out), took, pgid


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_kills_the_model_child_and_ends_the_run(
    tmp_path: Path, small_hub: ReferenceHub, signum: int, code: int
) -> None:
    exit_code, summary, took, pgid = _interrupt_the_model_call(tmp_path, small_hub, signum)
    assert exit_code == code
    assert took < WITHIN_S
    assert summary["status"] == "interrupted" and summary["exit_code"] == code
    assert _gone_soon(pgid)
    records = journal(tmp_path / "memory")
    finished = of_run(records, str(summary["run_id"]), "finished")
    assert [(f.data["status"], f.data["exit_code"]) for f in finished] == [("interrupted", code)]


def test_a_dry_run_is_interrupted_too(tmp_path: Path, small_hub: ReferenceHub) -> None:
    exit_code, summary, took, pgid = _interrupt_the_model_call(
        tmp_path, small_hub, signal.SIGINT, "--dry-run"
    )
    assert exit_code == 130
    assert took < WITHIN_S
    assert summary["status"] == "interrupted"  # not "completed", as a dry run said before
    assert "SIGINT" in str(summary["message"])
    assert _gone_soon(pgid)
    assert not (tmp_path / "memory" / "journal").exists()  # a dry run writes nothing


# --- the primitives, in-process -------------------------------------------------------------


class _Later:
    """Set `stop.signal` after `delay_s`, from another thread (as a handler would)."""

    def __init__(self, stop: StopFlag, delay_s: float) -> None:
        import threading

        self._timer = threading.Timer(delay_s, lambda: setattr(stop, "signal", signal.SIGTERM))
        self._timer.start()

    def cancel(self) -> None:
        self._timer.cancel()


def test_a_retry_sleep_is_cut_short() -> None:
    stop = StopFlag()
    later = _Later(stop, 0.2)
    start = time.monotonic()
    with pytest.raises(Interrupted) as caught:
        stop.sleep(30)
    later.cancel()
    assert time.monotonic() - start < 1.0
    assert caught.value.exit_code == 143


def test_a_hub_read_in_flight_is_abandoned() -> None:
    stop = StopFlag()
    with SlowServer({"/state/summary": Drip(interval_s=0.3)}) as server:
        client = StateHubClient(server.url, max_total_s=30, stop=stop)
        later = _Later(stop, 0.5)
        start = time.monotonic()
        with pytest.raises(Interrupted):
            client.state_summary()
        took = time.monotonic() - start
        later.cancel()
        client.close()
    assert took < 0.5 + WITHIN_S


def test_a_child_group_is_killed_on_stop(tmp_path: Path) -> None:
    import threading

    stop = StopFlag()
    pgid_file = tmp_path / "pgid"
    argv = ["/bin/sh", "-c", f"echo $$ > {pgid_file}.tmp; mv {pgid_file}.tmp {pgid_file}; sleep 60"]
    stopped_at: list[float] = []

    def stop_once_started() -> None:
        # Stop only after the child is up: on a loaded machine it may take longer than any delay.
        _wait_for(pgid_file)
        stopped_at.append(time.monotonic())
        stop.signal = signal.SIGTERM

    trigger = threading.Thread(target=stop_once_started, daemon=True)
    trigger.start()
    with pytest.raises(Interrupted):
        run_child(argv, b"", env=os.environ, timeout_s=60, max_stdout=1024, stop=stop)
    trigger.join()
    assert time.monotonic() - stopped_at[0] < WITHIN_S
    assert _gone_soon(int(pgid_file.read_text()))


def _gone_soon(pgid: int) -> bool:
    """True once no live process is left in the group (a SIGKILLed process takes a moment)."""
    deadline = time.monotonic() + 1.0
    while _group_alive(pgid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


# --- a signal after the last hub read ---------------------------------------------------------


class _SignalAfterRead(httpx.BaseTransport):
    """In front of the real hub: once the domain's summary has been read, arm the clock."""

    def __init__(self) -> None:
        self._inner = httpx.HTTPTransport()
        self.armed = False

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self._inner.handle_request(request)
        response.read()
        if self.armed is False and request.url.path.startswith("/domains/"):
            self.armed = True
        return response

    def close(self) -> None:
        self._inner.close()


class _SignallingClock:
    """The wall clock; its first call after the last hub read sends `signum` to this process."""

    def __init__(self, transport: _SignalAfterRead, signum: int) -> None:
        self._transport, self._signum, self.sent = transport, signum, False

    def __call__(self) -> datetime:
        if self._transport.armed and not self.sent:
            self.sent = True
            os.kill(os.getpid(), self._signum)
        return datetime.now(UTC)


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_between_the_last_hub_read_and_a_skipped_ending_exits_by_the_signal(
    tmp_path: Path, small_hub: ReferenceHub, signum: int, code: int
) -> None:
    memory = tmp_path / "memory"
    llm = write_plan(tmp_path / "quiet.md", {"observations": ["Nothing to do."]})
    flags = {"domain": "website", "hub": small_hub.url, "llm": llm, "memory": str(memory)}
    settings = load_settings({**flags, "canon": str(CANON)}, {}, tmp_path)
    assert run(settings, stderr=io.StringIO()).status == "completed"
    # Unchanged state: this run skips the model call, and the signal comes after its last read.
    transport = _SignalAfterRead()
    clock = _SignallingClock(transport, signum)
    log = io.StringIO()
    result = run(settings, clock=clock, transport=transport, stderr=log)
    assert clock.sent and "skipped" in log.getvalue()
    assert (result.status, result.exit_code) == ("interrupted", code)
    finished = of_run(journal(memory), result.run_id, "finished")
    assert [(f.data["status"], f.data["exit_code"]) for f in finished] == [("interrupted", code)]
