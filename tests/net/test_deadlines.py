"""Whole-request deadlines and size caps on real loopback servers, for the hub and model HTTP."""

from __future__ import annotations

import io
import re
import time
import tracemalloc
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from custodian_hub import ReferenceHub
from custodian_runtime.errors import HubError, HubUnavailable
from custodian_runtime.process.phase_log import PhaseLog, retry_reporter
from custodian_runtime.statehub.client import StateHubClient
from support.fakes.slow_server import Behaviour, Drip, Fixed, Flood, SlowServer
from support.runs import run_args, run_cli

MiB = 1 << 20
MARGIN_S = 1.0  # a slow, shared machine: thread start-up and interpreter noise


def test_a_dripping_hub_is_cut_off_at_the_total_budget() -> None:
    # Every read returns well inside the 1.5 s per-read timeout; only the whole-request
    # deadline can stop this.
    with SlowServer({"/state/summary": Drip(interval_s=0.3)}) as server:
        client = StateHubClient(server.url, timeout_s=1.5, max_total_s=2.0)
        start = time.monotonic()
        with pytest.raises(HubUnavailable) as caught:
            client.state_summary()
        elapsed = time.monotonic() - start
        client.close()
    assert 2.0 <= elapsed < 2.0 + MARGIN_S
    assert caught.value.code == "timeout"
    assert "within its 2 s budget" in caught.value.message
    assert "STATE_HUB_MAX_TOTAL_S" in caught.value.message
    assert server.sent["/state/summary"] >= 5  # it really was dripping, not silent


def test_a_flooding_hub_is_stopped_at_the_cap_without_buffering_it() -> None:
    with SlowServer({"/state/summary": Flood(total=64 * MiB)}) as server:
        client = StateHubClient(server.url, max_response_bytes=1 * MiB)
        tracemalloc.start()
        try:
            with pytest.raises(HubError) as caught:
                client.state_summary()
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
            client.close()
    error = caught.value
    assert error.code == "too_large" and not isinstance(error, HubUnavailable)
    assert "more than 1 MiB" in error.message and "STATE_HUB_MAX_BYTES" in error.message
    found = re.search(r"after (\d+) bytes", error.detail or "")
    assert found is not None, error.detail
    received = int(found.group(1))
    assert 1 * MiB < received <= 1 * MiB + 64 * 1024  # stopped at the first chunk past the cap
    assert peak < 4 * MiB  # never held more than about the cap
    assert server.sent["/state/summary"] < 16 * MiB  # the server saw the client hang up


def test_a_declared_length_over_the_cap_is_refused_before_reading() -> None:
    body = b"{" + b" " * (2 * MiB) + b"}"
    with SlowServer({"/state/summary": Fixed(body)}) as server:
        client = StateHubClient(server.url, max_response_bytes=1 * MiB)
        with pytest.raises(HubError) as caught:
            client.state_summary()
        client.close()
    assert caught.value.code == "too_large"


def test_hub_retries_are_reported_with_attempt_numbers() -> None:
    seen: list[tuple[int, int, str, float]] = []
    body = b'{"domains": [], "generated_at": "2026-11-30T08:00:00Z"}'
    with SlowServer({"/state/summary": Fixed(body, fail_first=2)}) as server:
        client = StateHubClient(
            server.url, sleep=lambda s: None, on_retry=lambda *args: seen.append(args)
        )
        overview = client.state_summary()
        client.close()
    assert overview.domains == ()
    assert [(a, n, why) for a, n, why, _ in seen] == [
        (1, 5, "HTTP 503 Service Unavailable"),
        (2, 5, "HTTP 503 Service Unavailable"),
    ]
    assert all(0 <= wait <= 30 for *_, wait in seen)


# --- the same through `custodian run` -----------------------------------------------------------


def test_run_against_a_dripping_hub_ends_at_the_deadline_with_exit_3(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with SlowServer({"/state/summary": Drip(interval_s=0.3)}) as server:
        start = time.monotonic()
        result = run_cli(
            run_args(server.url, "offline", tmp_path / "memory", "--json"),
            tmp_path,
            monkeypatch,
            STATE_HUB_TIMEOUT_S="1.5",
            STATE_HUB_MAX_TOTAL_S="2",
        )
        elapsed = time.monotonic() - start
    assert result.code == 3, result.stderr
    assert elapsed < 2.0 + MARGIN_S
    assert "did not answer in full within its 2 s budget" in result.stderr


def test_run_against_a_flooding_hub_stops_at_the_cap_with_exit_3(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with SlowServer({"/state/summary": Flood(total=64 * MiB)}) as server:
        result = run_cli(
            run_args(server.url, "offline", tmp_path / "memory", "--json"),
            tmp_path,
            monkeypatch,
            STATE_HUB_MAX_BYTES=str(MiB),
        )
    assert result.code == 3, result.stderr
    assert "more than 1 MiB" in result.stderr and "STATE_HUB_MAX_BYTES" in result.stderr
    assert server.sent["/state/summary"] < 16 * MiB


CHAT = "/v1/chat/completions"


def test_run_with_a_dripping_model_ends_at_the_model_timeout_with_exit_4(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    with SlowServer({CHAT: Drip(interval_s=0.3)}) as model:
        start = time.monotonic()
        result = run_cli(
            run_args(small_hub.url, "openai-compatible", tmp_path / "memory", "--json"),
            tmp_path,
            monkeypatch,
            CUSTODIAN_LLM_BASE_URL=model.url + "/v1",
            CUSTODIAN_LLM_TIMEOUT_S="1.5",
            CUSTODIAN_LLM_MAX_ATTEMPTS="2",
            CUSTODIAN_LLM_MAX_RETRY_WAIT_S="0.2",
        )
        elapsed = time.monotonic() - start
    assert result.code == 4, result.stderr
    assert model.requests[CHAT] == 2
    assert elapsed < 2 * 1.5 + 0.2 + 2 * MARGIN_S
    stderr: str = result.stderr
    assert "no complete answer" in stderr and "within 1.5 s" in stderr
    assert re.search(r"custodian: model: attempt 1/2 failed: .*; next in 0\.\d s", stderr)


def test_run_with_a_flooding_model_stops_at_the_cap_with_exit_4(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    with SlowServer({CHAT: Flood(total=64 * MiB)}) as model:
        result = run_cli(
            run_args(small_hub.url, "openai-compatible", tmp_path / "memory", "--json"),
            tmp_path,
            monkeypatch,
            CUSTODIAN_LLM_BASE_URL=model.url + "/v1",
            CUSTODIAN_LLM_MAX_BYTES=str(MiB),
        )
    assert result.code == 4, result.stderr
    assert "larger than 1 MiB" in result.stderr
    assert "CUSTODIAN_LLM_MAX_BYTES" in result.stderr
    assert model.requests[CHAT] == 1  # too large is not retried
    assert model.sent[CHAT] < 16 * MiB


def test_run_reports_hub_retries_on_stderr(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_hub: ReferenceHub
) -> None:
    overview = httpx.get(small_hub.url + "/state/summary", timeout=5).content
    summary = httpx.get(small_hub.url + "/domains/website/summary?events=50", timeout=5).content
    routes: dict[str, Behaviour] = {
        "/state/summary": Fixed(overview, fail_first=2),
        "/domains/website/summary": Fixed(summary),
    }
    with SlowServer(routes) as flaky:
        result = run_cli(
            run_args(flaky.url, "offline", tmp_path / "memory", "--json", "--dry-run"),
            tmp_path,
            monkeypatch,
            STATE_HUB_MAX_ATTEMPTS="3",
        )
    assert result.code == 0, result.stderr
    lines = re.findall(
        r"custodian: hub: attempt (\d)/3 failed: HTTP 503 [^;]*; next in", result.stderr
    )
    assert lines == ["1", "2"], result.stderr
    assert flaky.requests["/state/summary"] == 3


def test_a_retry_line_says_attempt_reason_and_wait() -> None:
    calls = iter(
        [httpx.ReadTimeout("slow"), httpx.Response(200, json={"status": "ok", "version": "1.1"})]
    )

    def handler(request: httpx.Request) -> httpx.Response:
        outcome = next(calls)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    stream = io.StringIO()
    log = PhaseLog(
        stream,
        fmt="text",
        run_id="r1",
        domain="website",
        clock=lambda: datetime(2026, 11, 30, tzinfo=UTC),
        monotonic=time.monotonic,
    )
    client = StateHubClient(
        "http://hub.test",
        transport=httpx.MockTransport(handler),
        sleep=lambda s: None,
        on_retry=retry_reporter(log, "hub"),
    )
    client.health()
    client.close()
    assert re.fullmatch(
        r"custodian: hub: attempt 1/5 failed: read timeout; next in \d+\.\d s\n", stream.getvalue()
    )
