"""CUSTODIAN_LOG_FORMAT=json: every stderr line of `custodian` (a real process) is one JSON record.

Each record has `severity`, `ts` (UTC ISO-8601), `run_id` and `domain`, and stays under 16 KiB.
`run --json` prints its summary on stdout however the run ends, with a timestamp and duration.
"""

from __future__ import annotations

import json
import signal
import socket
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx

from custodian_hub import ReferenceHub
from custodian_runtime.process.log_lines import fit_summary
from custodian_runtime.run import RunResult
from support.fakes.slow_server import Behaviour, Fixed, SlowServer
from support.spine import custodian_cli, finish, run_argv, start_run, write_plan

JSON = {"CUSTODIAN_LOG_FORMAT": "json"}
LIMIT = 16 * 1024
STARTUP_S = 30.0
SUMMARY_KEYS = set(RunResult(run_id="r", domain="d").summary())


def records(stderr: str) -> list[dict[str, Any]]:
    """Every stderr line as a record, each checked: JSON, the four keys, under 16 KiB."""
    lines = stderr.splitlines()
    assert lines, "nothing on stderr"
    found = []
    for line in lines:
        assert len(line.encode("utf-8")) + 1 < LIMIT, line[:200]
        record = json.loads(line)
        assert isinstance(record, dict), line
        assert {"severity", "ts", "run_id", "domain"} <= set(record), line
        assert record["severity"] in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"), line
        assert datetime.fromisoformat(record["ts"]).utcoffset() is not None, line
        assert record["ts"].endswith("Z"), line
        found.append(record)
    return found


def summary_of(stdout: str) -> dict[str, Any]:
    """The one-line `--json` summary, with the keys it always had and when it ran."""
    assert stdout.count("\n") == 1, stdout
    summary: dict[str, Any] = json.loads(stdout)
    assert set(summary) >= SUMMARY_KEYS, SUMMARY_KEYS - set(summary)
    assert summary["ts"] == summary["finished_at"]
    assert datetime.fromisoformat(summary["finished_at"]) >= datetime.fromisoformat(
        summary["started_at"]
    )
    assert isinstance(summary["duration_s"], float | int) and summary["duration_s"] >= 0
    return summary


def closed_port() -> int:
    """A loopback port nothing listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_configuration_error_is_a_json_record_and_the_summary_is_printed(
    tmp_path: Path,
) -> None:
    done = custodian_cli(
        tmp_path, "run", "--domain", "website", "--llm", "offline", "--json", **JSON
    )
    assert done.returncode == 2, done.stderr
    [line] = records(done.stderr)
    assert line["severity"] == "ERROR" and line["phase"] == "config"
    assert line["run_id"] is None and line["domain"] is None
    assert line["setting"] == "STATE_HUB_URL" and "--hub" in line["message"]
    summary = summary_of(done.stdout)
    assert summary["status"] == "failed" and summary["exit_code"] == 2
    assert summary["run_id"] is None and summary["setting"] == "STATE_HUB_URL"
    assert summary["message"].startswith("configuration error: no state-hub configured")


def test_the_format_is_read_even_when_dotenv_and_other_settings_are_broken(
    tmp_path: Path,
) -> None:
    # From .env only, next to a setting that fails to load.
    (tmp_path / ".env").write_text("CUSTODIAN_LOG_FORMAT=json\nCUSTODIAN_MAX_FLAGS=many\n")
    done = custodian_cli(
        tmp_path, "run", "--domain", "website", "--hub", "embedded", "--llm", "offline"
    )
    assert done.returncode == 2
    [line] = records(done.stderr)
    assert line["severity"] == "ERROR" and "CUSTODIAN_MAX_FLAGS" in line["message"]
    # A .env that cannot be parsed: the process environment still says json.
    (tmp_path / ".env").write_text("this is not a setting\n")
    done = custodian_cli(tmp_path, "inspect", **JSON)
    assert done.returncode == 2
    [line] = records(done.stderr)
    assert ".env line 1" in line["message"] and line["setting"] == ".env"


def test_a_usage_error_is_one_json_record(tmp_path: Path) -> None:
    done = custodian_cli(tmp_path, "run", "--json", "--no-such-flag", **JSON)
    assert done.returncode == 2
    [line] = records(done.stderr)
    assert line["severity"] == "ERROR" and line["phase"] == "usage"
    assert "unrecognized arguments: --no-such-flag" in line["message"]
    assert summary_of(done.stdout)["exit_code"] == 2


def test_a_huge_message_is_cut_under_16_kib_with_a_marker(tmp_path: Path) -> None:
    done = custodian_cli(
        tmp_path, "run", "--domain", "w" * 100_000, "--hub", "embedded", "--llm", "offline", **JSON
    )
    assert done.returncode == 2
    [line] = records(done.stderr)
    assert "…[truncated " in line["message"] and line["message"].startswith("configuration error")
    assert len(done.stderr.encode()) < LIMIT


def test_a_failed_run_logs_retries_as_fields_and_ends_with_a_json_line(tmp_path: Path) -> None:
    hub = f"http://127.0.0.1:{closed_port()}/" + "p" * 40_000  # a huge URL in every line
    argv = run_argv(hub, "offline", tmp_path / "memory")
    code, out, err = finish(start_run(tmp_path, argv, STATE_HUB_MAX_ATTEMPTS="3", **JSON))
    assert code == 3, err
    lines = records(err)
    summary = summary_of(out)
    assert summary["status"] == "failed" and summary["exit_code"] == 3
    assert all(r["run_id"] == summary["run_id"] and r["domain"] == "website" for r in lines)
    retries = [r for r in lines if r.get("outcome") == "retry"]
    assert [r["attempt"] for r in retries] == [1, 2]
    for r in retries:
        assert r["severity"] == "WARNING" and r["phase"] == "hub" and r["max_attempts"] == 3
        assert isinstance(r["wait_s"], float) and r["wait_s"] >= 0
        assert r["cause"] == "cannot connect"
    last = lines[-1]
    assert last["severity"] == "ERROR" and last["phase"] == "exit"
    assert last["outcome"] == "failed" and last["exit_code"] == 3
    assert "…[truncated " in last["message"]


def test_a_retried_hub_call_is_one_warning_record_per_attempt(
    tmp_path: Path, small_hub: ReferenceHub
) -> None:
    overview = httpx.get(small_hub.url + "/state/summary", timeout=5).content
    domain = httpx.get(small_hub.url + "/domains/website/summary?events=50", timeout=5).content
    routes: dict[str, Behaviour] = {
        "/state/summary": Fixed(overview, fail_first=2),
        "/domains/website/summary": Fixed(domain),
    }
    with SlowServer(routes) as flaky:
        argv = run_argv(flaky.url, "offline", tmp_path / "memory", "--dry-run")
        code, out, err = finish(start_run(tmp_path, argv, STATE_HUB_MAX_ATTEMPTS="3", **JSON))
    assert code == 0, err
    retries = [r for r in records(err) if r.get("outcome") == "retry"]
    assert [(r["attempt"], r["max_attempts"]) for r in retries] == [(1, 3), (2, 3)]
    assert all(r["cause"].startswith("HTTP 503") for r in retries)
    assert summary_of(out)["status"] == "completed"


def _slow_model(tmp_path: Path) -> tuple[str, Path]:
    script = tmp_path / "slow-model.sh"
    started = tmp_path / "model.started"
    script.write_text(f'#!/bin/sh\ntouch "{started}"\nsleep 60\n')
    script.chmod(0o755)
    return f"cmd:{script}", started


def test_an_interrupted_run_ends_with_a_json_line_and_its_summary(
    tmp_path: Path, small_hub: ReferenceHub
) -> None:
    llm, started = _slow_model(tmp_path)
    proc = start_run(tmp_path, run_argv(small_hub.url, llm, tmp_path / "memory"), **JSON)
    try:
        deadline = time.monotonic() + STARTUP_S
        while not started.exists():
            assert time.monotonic() < deadline, "the model never started"
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        code, out, err = finish(proc, timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert code == 143, err
    lines = records(err)
    summary = summary_of(out)
    assert summary["status"] == "interrupted" and summary["exit_code"] == 143
    last = lines[-1]
    assert last["phase"] == "exit" and last["outcome"] == "interrupted"
    assert last["severity"] == "WARNING" and last["run_id"] == summary["run_id"]
    assert "SIGTERM" in last["message"]


# Loaded by every Python started with this directory on PYTHONPATH: once the run reads the
# model's answer file, a "library" warns through `warnings` and through `logging`.
SITECUSTOMIZE = """
import logging, sys, warnings

def _hook(event, args):
    if event == "open" and str(args[0]).endswith("answer.md") and not _done:
        _done.append(1)
        warnings.warn("a library's deprecation notice", DeprecationWarning)
        warnings.warn("a library's warning", UserWarning)
        logging.getLogger("somelib").error("a library's error record")

_done = []
sys.addaudithook(_hook)
"""


def test_python_warnings_and_logging_records_are_json_records_of_the_run(
    tmp_path: Path, small_hub: ReferenceHub
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
    llm = write_plan(tmp_path / "answer.md", {"observations": ["nothing to do"]})
    argv = run_argv(small_hub.url, llm, tmp_path / "memory")
    env = {"PYTHONPATH": str(site), "PYTHONWARNINGS": "always", **JSON}
    code, out, err = finish(start_run(tmp_path, argv, **env))
    assert code == 0, err
    run_id = summary_of(out)["run_id"]
    lines = records(err)
    warned = {r["category"]: r for r in lines if r.get("logger") == "py.warnings"}
    assert set(warned) >= {"DeprecationWarning", "UserWarning"}, lines
    assert warned["UserWarning"]["message"] == "a library's warning"
    assert warned["UserWarning"]["severity"] == "WARNING"
    assert warned["UserWarning"]["run_id"] == run_id
    [logged] = [r for r in lines if r.get("logger") == "somelib"]
    assert logged["severity"] == "ERROR" and logged["message"] == "a library's error record"
    assert logged["run_id"] == run_id and logged["domain"] == "website"


def test_in_text_mode_a_configuration_error_still_prints_the_summary(tmp_path: Path) -> None:
    done = custodian_cli(tmp_path, "run", "--domain", "website", "--llm", "offline", "--json")
    assert done.returncode == 2
    assert done.stderr.startswith("custodian: configuration error: no state-hub configured")
    summary = json.loads(done.stdout)  # indented for a person
    assert summary["exit_code"] == 2 and summary["setting"] == "STATE_HUB_URL"
    assert set(summary) >= SUMMARY_KEYS | {"ts", "finished_at", "duration_s"}


def test_a_summary_of_many_items_stays_one_line_under_16_kib(
    tmp_path: Path, small_hub: ReferenceHub
) -> None:
    # 60 events with long summaries: most are denied by the run's cap, each with its reason.
    long = "A long account of what happened on the CDN rollout, repeated. " * 12
    plan = {
        "observations": ["Many events."],
        "progress_events": [
            {
                "workstream_id": "web-ws-1",
                "event_type": "note",
                "rests_on": ["web-t-1"],
                "summary": f"{n} {long}",
            }
            for n in range(60)
        ],
    }
    llm = write_plan(tmp_path / "many.md", plan)
    argv = run_argv(small_hub.url, llm, tmp_path / "memory", "--dry-run")
    code, out, err = finish(start_run(tmp_path, argv, **JSON))
    assert code == 0, err
    records(err)
    assert len(out.encode("utf-8")) < LIMIT
    summary = summary_of(out)
    assert summary["counts"]["would_execute"] + summary["counts"]["denied"] == 60
    assert summary["truncated"]["items"] > 0
    assert len(summary["items"]) + summary["truncated"]["items"] == 60


def test_fit_summary_keeps_a_small_summary_whole_and_cuts_a_large_one_by_its_lists() -> None:
    small = {"run_id": "r", "counts": {"executed": 1}, "items": [{"reason": "ok"}]}
    assert json.loads(fit_summary(small)) == small
    items = [{"index": n, "reason": "x" * 2000} for n in range(100)]
    large = {"run_id": "r", "status": "completed", "counts": {"executed": 100}, "items": items}
    line = fit_summary(large)
    assert len(line.encode("utf-8")) < LIMIT
    fitted = json.loads(line)
    assert fitted["run_id"] == "r" and fitted["counts"] == {"executed": 100}
    assert fitted["items"][0]["index"] == 0 and "truncated" in fitted["items"][0]["reason"]
    assert len(fitted["items"]) + fitted["truncated"]["items"] == 100
