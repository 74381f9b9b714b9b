"""The hub in this process, behind an httpx transport: no socket, no thread, no port.

Each request goes straight to the hub's app through the same `_exchange.answer` the HTTP server
uses, so status, headers (`ETag`, `Allow`, `Idempotent-Replayed`, ...) and body are the ones a
client would get over HTTP. An `on_write` hook that raises ends the request as a dropped
connection does: `httpx.RemoteProtocolError`, no answer.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from email.utils import formatdate
from http import HTTPStatus
from pathlib import Path

import httpx

from custodian_hub._app import Clock, HubApp, WriteAborted, WriteHook
from custodian_hub._exchange import HANDLED_METHODS, SERVER_HEADER, Answer, answer, refusal
from custodian_hub._store import Store
from custodian_runtime.clock import utc_now


class HubTransport(httpx.BaseTransport):
    """Hands each request to a `HubApp` in this process and answers as its HTTP server would."""

    def __init__(self, app: HubApp) -> None:
        self._app = app

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """One request, answered synchronously in the caller's thread."""
        method = request.method
        target = request.url.raw_path.decode("latin-1")
        if method not in HANDLED_METHODS:
            return _response(request, refusal(method, target, 501, ""))
        headers = {name.lower(): value for name, value in request.headers.multi_items()}
        content = request.read()
        asked_to_close = headers.get("connection", "").lower() == "close"
        try:
            reply = answer(
                self._app, method, target, headers, lambda n: content[:n], close=asked_to_close
            )
        except WriteAborted as exc:
            raise httpx.RemoteProtocolError(
                "Server disconnected without sending a response.", request=request
            ) from exc
        return _response(request, reply)


def _response(request: httpx.Request, reply: Answer) -> httpx.Response:
    # `Server` and `Date` first, as http.server sends them.
    headers = [("Server", SERVER_HEADER), ("Date", formatdate(usegmt=True)), *reply.headers]
    return httpx.Response(
        reply.status,
        headers=headers,
        content=reply.payload,
        request=request,
        extensions={
            "http_version": b"HTTP/1.1",
            "reason_phrase": HTTPStatus(reply.status).phrase.encode("ascii"),
        },
    )


@contextmanager
def in_process(
    db_path: Path,
    *,
    token: str | None = None,
    clock: Clock = utc_now,
    on_write: WriteHook | None = None,
) -> Iterator[HubTransport]:
    """The hub on `db_path` in this process: yield its transport; close the database after."""
    store = Store(Path(db_path))
    try:
        yield HubTransport(HubApp(store, token=token, clock=clock, on_write=on_write))
    finally:
        store.close()
