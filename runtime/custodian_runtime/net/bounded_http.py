"""One HTTP exchange inside a whole-request deadline and a size cap, abandoned on a signal.

httpx's timeouts are per read: a server that drips a byte every few seconds never trips them. So
the request and its body read run in a worker thread, and the caller's thread waits in short
slices, checking a monotonic deadline and the run's stop flag between them. The body is read in
chunks and never kept past the cap.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Protocol

import httpx

from custodian_runtime.process.stopping import POLL_S, interrupted

# Headers that describe the bytes on the wire, not the decoded body the caller gets.
_FRAMING = frozenset({"content-encoding", "content-length", "transfer-encoding"})


class Stoppable(Protocol):
    """What the exchange needs of a stop flag: its signal, if one came."""

    signal: int | None


class DeadlinePassed(Exception):
    """The whole exchange did not finish by its deadline."""

    def __init__(self, budget_s: float) -> None:
        super().__init__(f"no complete answer within {budget_s:g} s")
        self.budget_s = budget_s


class TooLarge(Exception):
    """The answer is bigger than the cap; reading stopped there."""

    def __init__(self, limit: int, received: int) -> None:
        super().__init__(f"the answer is larger than {describe_size(limit)}")
        self.limit = limit
        self.received = received


def describe_size(size: int) -> str:
    """`33554432` -> `32 MiB (33554432 bytes)`."""
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:g} {unit} ({size} bytes)"
    return f"{size} bytes"


class _Box:
    """What the worker hands back, and whether the caller gave up on it."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.abandoned = False
        self.response: httpx.Response | None = None
        self.error: BaseException | None = None


def exchange(
    client: httpx.Client,
    request: httpx.Request,
    *,
    deadline: float,
    max_bytes: int,
    stop: Stoppable | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> httpx.Response:
    """Send `request` and read all of its body by `deadline` (on `clock`), at most `max_bytes`.

    Raises what `client.send` raises, DeadlinePassed, TooLarge, or Interrupted when `stop` is
    given and a signal came. Without `stop` (a write in flight) only the deadline ends the wait.
    """
    if stop is not None and stop.signal is not None:
        raise interrupted(stop.signal, f"{request.method} {request.url}")
    budget = max(0.0, deadline - clock())
    box = _Box()
    worker = threading.Thread(
        target=_work, args=(client, request, max_bytes, box), name="custodian-http", daemon=True
    )
    worker.start()
    while not box.done.wait(POLL_S):
        if stop is not None and stop.signal is not None:
            box.abandoned = True
            raise interrupted(stop.signal, f"{request.method} {request.url}")
        if clock() >= deadline:
            box.abandoned = True
            raise DeadlinePassed(budget)
    if box.error is not None:
        raise box.error
    assert box.response is not None
    return box.response


def _work(client: httpx.Client, request: httpx.Request, max_bytes: int, box: _Box) -> None:
    try:
        response = client.send(request, stream=True)
        try:
            box.response = _read_capped(response, max_bytes, box)
        finally:
            response.close()
    except BaseException as exc:  # handed to the waiting thread, which raises it
        box.error = exc
    finally:
        box.done.set()


def _read_capped(response: httpx.Response, max_bytes: int, box: _Box) -> httpx.Response:
    declared = response.headers.get("Content-Length", "")
    if declared.isascii() and declared.isdigit() and int(declared) > max_bytes:
        raise TooLarge(max_bytes, 0)
    parts: list[bytes] = []
    received = 0
    for chunk in response.iter_bytes():
        received += len(chunk)
        if received > max_bytes:
            raise TooLarge(max_bytes, received)
        if box.abandoned:  # nobody waits for this answer any more
            break
        parts.append(chunk)
    headers = [(k, v) for k, v in response.headers.multi_items() if k.lower() not in _FRAMING]
    return httpx.Response(
        response.status_code,
        headers=headers,
        content=b"".join(parts),
        request=response.request,
        extensions={
            k: v for k, v in response.extensions.items() if k in ("http_version", "reason_phrase")
        },
    )
