"""A real run pushes its metrics to a real Pushgateway (Debian's), which a scrape then shows.

The Pushgateway is started by the test on loopback with a free port and a temporary
persistence file; the run is a real `custodian run` process against the reference hub.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from custodian_hub import ReferenceHub
from custodian_runtime import __version__
from custodian_runtime.core.metrics import RunFacts
from custodian_runtime.metrics import StatusRequest, parse_max_age, push_run, status_command
from custodian_runtime.packaged import revision
from custodian_runtime.process.phase_log import PhaseLog
from support.runs import CANON, plan_response
from support.servers import free_port

PUSHGATEWAY = shutil.which("prometheus-pushgateway") or shutil.which("pushgateway")
PLAN = {
    "tasks_to_flag": [
        {"task_id": "web-t-2", "note": "Blocked 9 days on legal, no flag yet."},
        {"task_id": "web-t-6", "note": "Already flagged: this one is denied."},
    ],
    "proposals": [
        {
            "operation": "create_task",
            "params": {"workstream_id": "web-ws-2", "title": "Check redirects of old blog URLs"},
            "rationale": "the migration will change every post's URL",
        }
    ],
}


@pytest.fixture
def pushgateway(tmp_path: Path) -> Iterator[str]:
    """A Pushgateway on 127.0.0.1 with a free port and a persistence file under tmp_path."""
    assert PUSHGATEWAY, (
        "install it: apt-get install prometheus-pushgateway (make check does as root)"
    )
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    child = subprocess.Popen(
        [
            PUSHGATEWAY,
            f"--web.listen-address=127.0.0.1:{port}",
            f"--persistence.file={tmp_path / 'pushgateway.data'}",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                if httpx.get(f"{url}/-/ready", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert child.poll() is None and time.monotonic() < deadline, "pushgateway not ready"
            time.sleep(0.1)
        yield url
    finally:
        child.terminate()
        child.wait(timeout=10)


def _custodian(
    tmp_path: Path, hub_url: str, push_url: str, *more: str
) -> subprocess.CompletedProcess[str]:
    answer = tmp_path / "answer.md"
    answer.write_text(plan_response(PLAN), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CUSTODIAN_", "STATE_HUB_"))}
    env["CUSTODIAN_PUSHGATEWAY_URL"] = push_url
    argv = [sys.executable, "-m", "custodian_runtime", "run", "--domain", "website"]
    argv += ["--hub", hub_url, "--llm", f"file:{answer}", "--canon", str(CANON), "--json"]
    argv += ["--memory", str(tmp_path / "memory"), *more]
    return subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)


def _scrape(url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    text = httpx.get(f"{url}/metrics", timeout=5).text
    found = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name.startswith("custodian_"):
                found[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return found


def _at(**labels: str) -> tuple[tuple[str, str], ...]:
    # The Pushgateway adds the grouping key (job, domain) and an empty `instance`.
    return tuple(
        sorted({"job": "custodian", "domain": "website", "instance": "", **labels}.items())
    )


def test_a_run_pushes_its_figures_and_a_scrape_shows_them(
    tmp_path: Path, small_hub: ReferenceHub, pushgateway: str
) -> None:
    before = time.time()
    done = _custodian(tmp_path, small_hub.url, pushgateway)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["counts"]["executed"] == 1 and summary["counts"]["queued"] == 1
    assert "metrics: pushed" in done.stderr

    got = _scrape(pushgateway)
    assert got[("custodian_run_items", _at(outcome="executed"))] == 1
    assert got[("custodian_run_items", _at(outcome="queued"))] == 1
    assert got[("custodian_run_items", _at(outcome="denied"))] == 1
    assert got[("custodian_run_items", _at(outcome="failed"))] == 0
    assert got[("custodian_run_exit_code", _at())] == 0
    assert got[("custodian_pending_approvals", _at())] == 1
    assert 0 <= got[("custodian_oldest_pending_age_seconds", _at())] < 120
    last_run = got[("custodian_last_run_timestamp_seconds", _at())]
    assert before - 1 <= last_run <= time.time() + 1
    assert got[("custodian_last_success_timestamp_seconds", _at())] == last_run
    assert 0 <= got[("custodian_run_duration_seconds", _at())] < 120
    # A `file:` answer reports no tokens and no cost: those are not set, never guessed.
    assert not any(
        name in ("custodian_run_cost_usd", "custodian_run_input_tokens") for name, _ in got
    )


def test_counters_are_the_journals_totals_in_every_push_and_after_a_rebuild(
    tmp_path: Path, small_hub: ReferenceHub, pushgateway: str
) -> None:
    first = _custodian(tmp_path, small_hub.url, pushgateway)
    assert first.returncode == 0, first.stderr
    # The Pushgateway replaces the domain's group on each push: the second push must carry both
    # runs, which only totals kept in the journal (not in the process that pushes) can do.
    second = _custodian(tmp_path, small_hub.url, pushgateway, "--force")
    assert second.returncode == 0, second.stderr
    got = _scrape(pushgateway)
    assert got[("custodian_runs_total", _at(status="completed", exit_code="0"))] == 2
    writes = {
        (dict(labels)["operation"], dict(labels)["outcome"]): value
        for (name, labels), value in got.items()
        if name == "custodian_writes_total"
    }
    # The second run sees the flag and the queued task already there: it denies both.
    assert writes[("flag_for_human", "executed")] == 1
    assert writes[("create_task", "queued")] == 1
    assert writes[("flag_for_human", "denied")] >= 2
    assert got[("custodian_cost_usd_total", _at())] == 0  # a `file:` answer has no price
    assert got[("custodian_build_info", _at(version=__version__, revision=revision()))] == 1

    # A lost checkpoint is rebuilt by one full scan, which counts every record again: the
    # counters come out the same, so a rebuild never looks like a reset or a jump.
    memory = tmp_path / "memory"
    before = _totals(status_text(memory))
    checkpoint = memory / "journal" / "website.checkpoint.json"
    assert checkpoint.is_file()
    checkpoint.unlink()
    assert _totals(status_text(memory)) == before
    labels = (("domain", "website"), ("exit_code", "0"), ("status", "completed"))
    assert before[("custodian_runs_total", labels)] == 2


def status_text(memory: Path) -> str:
    """`custodian status --prometheus` over `memory`."""
    out = io.StringIO()
    request = StatusRequest(max_age=parse_max_age("48h"), prometheus=True)
    status_command(memory, None, request, out, datetime.now(UTC))
    return out.getvalue()


def _totals(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    found = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name.endswith("_total"):
                found[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return found


def test_an_unreachable_pushgateway_costs_one_warning_and_never_the_run(
    tmp_path: Path, small_hub: ReferenceHub
) -> None:
    closed = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    done = _custodian(tmp_path, small_hub.url, closed)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["status"] == "completed"
    warnings = [line for line in done.stderr.splitlines() if "metrics" in line]
    assert len(warnings) == 1, done.stderr
    assert warnings[0].startswith("custodian: metrics: not pushed")
    assert "severity=warning" in warnings[0] and closed in warnings[0]


def test_a_push_ends_at_its_deadline_when_the_pushgateway_never_answers(tmp_path: Path) -> None:
    silent = socket.socket()  # listens, never accepts or answers: the kernel completes connects
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    url = f"http://127.0.0.1:{silent.getsockname()[1]}"
    err = io.StringIO()
    now = datetime.now(UTC)
    log = PhaseLog(
        err, fmt="json", run_id="r1", domain="website", clock=lambda: now, monotonic=time.monotonic
    )
    facts = RunFacts(now, now, 0, "completed", {"executed": 1})
    (tmp_path / "memory").mkdir()
    started = time.monotonic()
    try:
        pushed = push_run(
            url, facts, (tmp_path / "memory", "website", None), now, log, deadline_s=0.5
        )
    finally:
        silent.close()
    assert pushed is False and time.monotonic() - started < 5
    (line,) = err.getvalue().splitlines()
    record = json.loads(line)
    assert (record["phase"], record["outcome"], record["severity"]) == (
        "metrics",
        "not pushed",
        "warning",
    )
    assert record["error"] == "PushFailed: no answer within the push's 0.5 s"
