"""One hub call: the request built once, sent under one deadline and the retry policy."""

from __future__ import annotations

from collections.abc import Mapping

import httpx

from custodian_runtime.net.bounded_http import DeadlinePassed, Stoppable, TooLarge, exchange
from custodian_runtime.net.retry import Retry, RetryPolicy, call_with_retries
from custodian_runtime.statehub._failures import (
    AttemptResult,
    NamedCall,
    overrun_failure,
    retry_verdict,
    succeeded,
)

QueryParams = Mapping[str, str | int | None]


class Sender:
    """Sends a client's requests: retries, deadlines and size caps, and the error a failure is."""

    def __init__(
        self,
        http: httpx.Client,
        base_url: str,
        policy: RetryPolicy,
        max_bytes: int,
        stop: Stoppable | None,
    ) -> None:
        self._http = http
        self._base_url = base_url
        self._policy = policy
        self._max_bytes = max_bytes
        self._stop = stop

    def send(
        self,
        method: str,
        path: str,
        *,
        params: QueryParams | None = None,
        content: bytes | None = None,
        headers: Mapping[str, str] | None = None,
        also_ok: frozenset[int] = frozenset(),
    ) -> tuple[httpx.Response, int]:
        """Send one request under the policy; the response of a success (a 2xx, or a status in
        `also_ok`), else its HubError."""
        query = {name: value for name, value in (params or {}).items() if value is not None}
        request = self._http.build_request(
            method, path, params=query, content=content, headers=headers
        )
        # One deadline for the whole call, retries and body reads included. The request is built
        # once: a write goes out again only as these bytes with this idempotency key.
        deadline = self._policy.deadline()
        stop = self._stop if content is None else None
        tries = [0]

        def attempt() -> AttemptResult:
            tries[0] += 1
            try:
                return exchange(
                    self._http,
                    request,
                    deadline=deadline,
                    max_bytes=self._max_bytes,
                    stop=stop,
                    clock=self._policy.clock,
                )
            except httpx.TransportError as exc:  # handed to the retry policy, not raised
                return exc

        try:
            result = call_with_retries(self._policy, attempt, self._verdict)
        except (DeadlinePassed, TooLarge) as exc:
            call = NamedCall(method, str(request.url), self._base_url, tries[0], self._policy)
            raise overrun_failure(call, exc) from None
        call = NamedCall(method, str(request.url), self._base_url, result.attempts, self._policy)
        return succeeded(call, result, also_ok)

    def _verdict(self, outcome: AttemptResult) -> Retry | None:
        return retry_verdict(outcome, now=self._policy.wall_clock())
