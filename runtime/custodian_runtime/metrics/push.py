"""Push a run's figures to a Prometheus Pushgateway, under a whole deadline; never fail the run.

The request is prometheus-client's own (`push_to_gateway`: PUT, grouped by job and domain); only
the sending is ours, so the whole exchange, connect to last byte, ends by its deadline.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import httpx
from prometheus_client import push_to_gateway

from custodian_runtime.core.journal.seals import SealKey
from custodian_runtime.core.metrics import JOB, Figures, RunFacts
from custodian_runtime.core.redact import redact
from custodian_runtime.metrics._registry import registry_of
from custodian_runtime.metrics.status import domain_figures
from custodian_runtime.net.bounded_http import DeadlinePassed, exchange
from custodian_runtime.process.phase_log import PhaseLog

PUSH_DEADLINE_S = 10.0  # the whole push, connect to last byte
MAX_ANSWER_BYTES = 64 << 10  # a Pushgateway answers a push with an empty body

Send = Callable[[], None]


class PushFailed(Exception):
    """The Pushgateway refused the push, or did not answer by the deadline."""


def _handler(
    deadline_s: float, transport: httpx.BaseTransport | None
) -> Callable[[str, str, float | None, list[tuple[str, str]], bytes], Send]:
    """A prometheus-client handler that sends through one bounded exchange.

    Its `timeout` (per socket operation) is not used: `deadline_s` bounds the whole exchange.
    """

    def handler(
        url: str, method: str, timeout: float | None, headers: list[tuple[str, str]], data: bytes
    ) -> Send:
        def send() -> None:
            with httpx.Client(transport=transport, trust_env=False) as client:
                request = client.build_request(method, url, headers=headers, content=data)
                try:
                    answer = exchange(
                        client,
                        request,
                        deadline=time.monotonic() + deadline_s,
                        max_bytes=MAX_ANSWER_BYTES,
                    )
                except DeadlinePassed:
                    raise PushFailed(f"no answer within the push's {deadline_s:g} s") from None
            if answer.status_code >= 400:
                body = answer.text[:200].strip()
                raise PushFailed(f"HTTP {answer.status_code} {body}".strip())

        return send

    return handler


def push_figures(
    url: str,
    figures: Figures,
    *,
    deadline_s: float = PUSH_DEADLINE_S,
    transport: httpx.BaseTransport | None = None,
) -> None:
    """Replace the domain's group on the Pushgateway with `figures`; raises on any failure."""
    push_to_gateway(
        url,
        job=JOB,
        registry=registry_of([figures]),
        grouping_key={"domain": figures.domain},
        handler=_handler(deadline_s, transport),
    )


def push_run(
    url: str,
    facts: RunFacts,
    where: tuple[Path, str, SealKey | None],
    now: datetime,
    log: PhaseLog,
    *,
    deadline_s: float = PUSH_DEADLINE_S,
) -> bool:
    """Push what a run just did; a failure is one warning line, never the run's failure."""
    memory_dir, domain, seal_key = where
    try:
        figures = domain_figures(memory_dir, domain, seal_key, now).with_run(facts)
        push_figures(url, figures, deadline_s=deadline_s)
    except Exception as exc:  # whatever went wrong, the run's own outcome stands
        log.line(
            "metrics",
            "not pushed",
            severity="warning",
            pushgateway=redact(url),
            error=redact(f"{type(exc).__name__}: {exc}")[:500],
        )
        return False
    log.line("metrics", "pushed", pushgateway=redact(url))
    return True
