"""The one retry policy: Retry-After, waits, the stop rule, and hub and model deciding alike."""

from __future__ import annotations

import signal
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

import httpx
import pytest

from custodian_runtime.core.contract import NewEvent
from custodian_runtime.errors import CustodianError, HubError, Interrupted, ModelError
from custodian_runtime.llm.base import ModelConfig, Prompt
from custodian_runtime.llm.openai import OpenAIModel
from custodian_runtime.net.retry import (
    Retry,
    RetryPolicy,
    call_with_retries,
    next_wait,
    parse_retry_after,
    retry_after_seconds,
    retryable_status,
    retryable_transport,
    stop_reason,
)
from custodian_runtime.process.stopping import StopFlag
from custodian_runtime.statehub._failures import FINAL_STATUSES as FINAL
from custodian_runtime.statehub.client import StateHubClient
from support.fakes.clock import FakeSleep

NOW = datetime(2026, 11, 29, 8, 0, tzinfo=UTC)
EVENT = {"id": "e-1", "workstream_id": "ws-1", "task_id": None, "event_type": "note",
         "summary": "s", "source": "custodian", "created_at": "2026-11-29T08:00:00Z"}  # fmt: skip


# --- Retry-After ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("7", 7.0),
        (" 30 ", 30.0),
        ("Sun, 29 Nov 2026 08:00:45 GMT", 45.0),  # HTTP-date
        ("Sun, 29 Nov 2026 07:59:00 GMT", 0.0),  # a date already past means now
        ("Sun, 29 Nov 2026 08:00:45 -0000", 45.0),  # a zone email.utils leaves naive
    ],
)
def test_retry_after_reads_delay_seconds_and_http_dates(value: str, expected: float) -> None:
    assert parse_retry_after(value, now=NOW) == expected


@pytest.mark.parametrize(
    "value",
    ["", "soon", "1.5", "0.25", "-5", "+5", "1e3", "nan", "inf", "\u00b2", "\uff17",
     "Sun, 32 Nov 2026 08:00:00 GMT", "29 Nov", None],
)  # fmt: skip
def test_retry_after_garbage_is_ignored(value: str | None) -> None:
    assert parse_retry_after(value, now=NOW) is None


def test_retry_after_ms_wins_and_an_http_date_is_read_by_the_servers_clock() -> None:
    both = {"retry-after-ms": "1500", "retry-after": "9"}
    assert retry_after_seconds(both, now=NOW) == 1.5
    # The server's Date says 08:00:00, ours says 08:10: the server meant 30 s, not "already past".
    dated = {
        "retry-after": "Sun, 29 Nov 2026 08:00:30 GMT",
        "date": "Sun, 29 Nov 2026 08:00:00 GMT",
    }
    assert retry_after_seconds(dated, now=datetime(2026, 11, 29, 8, 10, tzinfo=UTC)) == 30.0
    # A garbled Date falls back to our clock; a garbled retry-after-ms to Retry-After.
    garbled = {"retry-after": "Sun, 29 Nov 2026 08:00:30 GMT", "date": "yesterday"}
    assert retry_after_seconds(garbled, now=NOW) == 30.0
    assert retry_after_seconds({"retry-after-ms": "-1", "retry-after": "4"}, now=NOW) == 4.0
    assert retry_after_seconds({}, now=NOW) is None


def test_a_servers_hint_is_capped_and_without_one_the_jitter_window_doubles() -> None:
    policy = RetryPolicy(max_wait_s=20.0, backoff_base_s=0.5, backoff_cap_s=3.0, rng=lambda: 1.0)
    assert next_wait(policy, 1, 3600.0) == 20.0
    assert next_wait(policy, 1, -4.0) == 0.0
    assert next_wait(policy, 1, 0.0) == 0.0  # the server said now: no extra jitter on top
    assert [next_wait(policy, n, None) for n in range(1, 6)] == [0.5, 1.0, 2.0, 3.0, 3.0]
    halfway = RetryPolicy(max_wait_s=0.8, backoff_base_s=0.5, rng=lambda: 0.5)
    assert [next_wait(halfway, n, None) for n in (1, 2, 3)] == [0.25, 0.4, 0.4]


# --- which failures are worth another try --------------------------------------------------


@pytest.mark.parametrize(
    ("status", "retry"),
    [(408, True), (429, True), (500, True), (502, True), (503, True), (504, True), (529, True),
     (400, False), (401, False), (403, False), (404, False), (409, False),
     (412, False), (422, False), (200, False), (301, False)],
)  # fmt: skip
def test_only_408_429_and_5xx_are_retryable(status: int, retry: bool) -> None:
    assert retryable_status(status) is retry


def test_a_caller_may_name_statuses_that_it_knows_are_final() -> None:
    final = frozenset({408, 500, 501})
    assert not retryable_status(500, final=final)
    assert not retryable_status(408, final=final)
    assert retryable_status(503, final=final)


def test_the_hub_retries_only_429_and_its_busy_5xx() -> None:
    # A hub answers 500 and 501 when it is broken; 408 is a proxy's, and a hub read is cheap to
    # start again on the next run.
    hub = [s for s in (408, 429, 500, 501, 502, 503, 504, 529) if retryable_status(s, final=FINAL)]
    assert hub == [429, 502, 503, 504]


def test_transport_errors_that_may_pass_and_those_that_cannot() -> None:
    request = httpx.Request("GET", "http://hub.test/health")
    for passing in (httpx.ConnectError, httpx.ReadTimeout, httpx.RemoteProtocolError):
        assert retryable_transport(passing("x", request=request))
    for final in (httpx.UnsupportedProtocol, httpx.LocalProtocolError):
        assert not retryable_transport(final("x", request=request))


# --- the stop rule -------------------------------------------------------------------------


def test_stop_rule_attempts_then_budget_then_signal() -> None:
    stop = StopFlag()
    policy = RetryPolicy(max_attempts=3, max_total_s=10.0, stop=stop)
    assert stop_reason(policy, attempt=1, elapsed_s=2.0, wait_s=8.0) is None  # lands on 10 s
    assert stop_reason(policy, attempt=1, elapsed_s=2.0, wait_s=8.5) == "budget"
    assert stop_reason(policy, attempt=3, elapsed_s=0.0, wait_s=0.0) == "attempts"
    stop.signal = signal.SIGTERM
    assert stop_reason(policy, attempt=1, elapsed_s=0.0, wait_s=0.0) == "signal"
    # Out of attempts or time, the call gives up as it would have; the signal only stops a wait.
    assert stop_reason(policy, attempt=3, elapsed_s=0.0, wait_s=0.0) == "attempts"


def test_exceptions_from_an_attempt_pass_through_and_are_not_retried() -> None:
    calls: list[int] = []

    def attempt() -> str:
        calls.append(1)
        raise HubError("broken")

    with pytest.raises(HubError):
        call_with_retries(RetryPolicy(sleep=FakeSleep()), attempt, lambda _: Retry("x"))
    assert calls == [1]


@dataclass
class Side:
    """One caller of the policy, driven against a server that always answers 503."""

    name: str
    sleep: FakeSleep = field(default_factory=FakeSleep)
    progress: list[tuple[int, int, float]] = field(default_factory=list)
    requests: list[httpx.Request] = field(default_factory=list)

    def report(self, attempt: int, of: int, reason: str, wait_s: float) -> None:
        assert reason  # the progress line always says why
        self.progress.append((attempt, of, wait_s))


def _busy(side: Side, retry_after: str, stop: StopFlag | None) -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        side.requests.append(request)
        if stop is not None:
            stop.signal = signal.SIGTERM  # the signal comes while the first answer is read
        return httpx.Response(503, headers={"Retry-After": retry_after}, json={"detail": "busy"})

    return httpx.MockTransport(handler)


def _call_hub(
    side: Side, limits: dict[str, float], retry_after: str, stop: StopFlag | None
) -> None:
    with StateHubClient(
        "http://hub.test",
        transport=_busy(side, retry_after, stop),
        sleep=side.sleep,
        clock=side.sleep.clock,
        max_attempts=int(limits["attempts"]),
        max_total_s=limits["total"],
        max_retry_wait_s=limits["wait"],
        stop=stop,
        on_retry=side.report,
    ) as client:
        client.add_event(NewEvent(workstream_id="ws-1", event_type="note", summary="s",
                                  source="custodian"), idempotency_key="run-1:evt")  # fmt: skip


def _call_model(
    side: Side, limits: dict[str, float], retry_after: str, stop: StopFlag | None
) -> None:
    config = ModelConfig(
        spec="openai",
        env={"OPENAI_API_KEY": "k"},
        max_attempts=int(limits["attempts"]),
        max_total_s=limits["total"],
        max_retry_wait_s=limits["wait"],
        stop=stop,
        on_retry=side.report,
    )
    model = OpenAIModel(config, transport=_busy(side, retry_after, stop), sleep=side.sleep)
    try:
        model.complete(Prompt(system="s", user="u"))
    finally:
        model.close()


CALLERS: dict[str, Callable[[Side, dict[str, float], str, StopFlag | None], None]] = {
    "hub": _call_hub,
    "model": _call_model,
}


@pytest.mark.parametrize("who", sorted(CALLERS))
def test_hub_and_model_stop_at_the_attempt_count_alike(who: str) -> None:
    side = Side(who)
    with pytest.raises(CustodianError) as caught:
        CALLERS[who](side, {"attempts": 3, "total": 60.0, "wait": 30.0}, "4", None)
    assert isinstance(caught.value, HubError if who == "hub" else ModelError)
    assert len(side.requests) == 3
    assert side.sleep.calls == [4.0, 4.0]
    assert side.progress == [(1, 3, 4.0), (2, 3, 4.0)]
    assert caught.value.fields["attempts"] == 3


@pytest.mark.parametrize("who", sorted(CALLERS))
def test_hub_and_model_never_wait_past_the_time_budget_alike(who: str) -> None:
    side = Side(who)
    with pytest.raises(CustodianError) as caught:
        CALLERS[who](side, {"attempts": 5, "total": 10.0, "wait": 400.0}, "400", None)
    assert (len(side.requests), side.sleep.calls, side.progress) == (1, [], [])
    assert caught.value.fields["attempts"] == 1


@pytest.mark.parametrize("who", sorted(CALLERS))
def test_hub_and_model_stop_on_a_signal_instead_of_waiting_alike(who: str) -> None:
    side = Side(who)
    with pytest.raises(Interrupted) as caught:
        CALLERS[who](side, {"attempts": 5, "total": 60.0, "wait": 30.0}, "4", StopFlag())
    assert (len(side.requests), side.sleep.calls, side.progress) == (1, [], [])
    assert caught.value.fields["signum"] == signal.SIGTERM
    assert caught.value.message.startswith("stopped by SIGTERM during ")


# --- a write goes out again only as the same request ----------------------------------------


def test_a_hub_write_is_retried_only_with_the_same_key_and_body() -> None:
    sent: list[httpx.Request] = []
    answers = iter([503, 502, 201, 503, 201])

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        status = next(answers)
        return httpx.Response(status, json=EVENT if status == 201 else {"detail": "busy"})

    sleep = FakeSleep()
    event = NewEvent(workstream_id="ws-1", event_type="note", summary="s", source="custodian")
    with StateHubClient(
        "http://hub.test", transport=httpx.MockTransport(handler), sleep=sleep, clock=sleep.clock
    ) as client:
        first = client.add_event(event, idempotency_key="run-1:evt-a")
        second = client.add_event(event, idempotency_key="run-1:evt-b")
    assert (first.attempts, second.attempts) == (3, 2)
    keys = [r.headers["Idempotency-Key"] for r in sent]
    assert keys == ["run-1:evt-a"] * 3 + ["run-1:evt-b"] * 2
    assert len({r.content for r in sent}) == 1  # the very same bytes every time


def test_a_hub_write_refused_for_its_key_is_not_sent_again() -> None:
    sent: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        body = {"detail": "key reused with another body", "code": "idempotency_mismatch"}
        return httpx.Response(422, json=body)

    sleep = FakeSleep()
    event = NewEvent(workstream_id="ws-1", event_type="note", summary="s", source="custodian")
    with StateHubClient(
        "http://hub.test", transport=httpx.MockTransport(handler), sleep=sleep, clock=sleep.clock
    ) as client, pytest.raises(HubError, match="a changed request needs a new key"):  # fmt: skip
        client.add_event(event, idempotency_key="run-1:evt-a")
    assert (len(sent), sleep.calls) == (1, [])
